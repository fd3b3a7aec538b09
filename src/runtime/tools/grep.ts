// Searching file contents with a regex, in-process: no dependency on rg or grep being installed,
// and the same confinement as the other file tools (the walk never follows symlinks, each file is
// opened as safe-files.ts does). The regex runs in a worker with a time limit (regex-worker.ts).
import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { IGNORED_DIRS, loadGlobber } from './glob.js';
import { looksBinary } from './read-file.js';
import { defineTool, ToolError, type ToolResult } from './types.js';
import { readInside } from '../workspace/safe-files.js';
import { RegexSearch, RegexTimeoutError, type LineMatch } from './regex-worker.js';

/** Files sent to the worker at a time: bounded memory, and a check of the signal between batches. */
const BATCH_BYTES = 4 * 1024 * 1024;

const MAX_MATCHES = 500;
const MAX_TEXT_CHARS = 300;
/** Bigger files are almost always generated or data; searching them costs much and tells little. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const input = z.object({
  pattern: z.string().min(1).describe('A JavaScript regular expression (no slashes or flags; use (?i:...) to ignore case), matched against each line.'),
  path: z.string().min(1).optional().describe('A file or directory to search, relative to the workspace root (default: the whole workspace).'),
});

export const grepTool = defineTool({
  name: 'grep',
  effects: ['read'],
  description:
    'Searches file contents line by line with a JavaScript regular expression and returns matches as ' +
    `\`path:line:text\`, at most ${MAX_MATCHES}. Searches a directory recursively (skipping .git, node_modules, ` +
    'binary files and files over 2 MiB) or a single file.',
  input,
  summarize: (args) => (args.path ? `${args.pattern} in ${args.path}` : args.pattern),
  async run(args, context): Promise<string | ToolResult> {
    try {
      new RegExp(args.pattern); // compiling is quick; only matching can run away
    } catch (error) {
      throw new ToolError(`invalid regular expression: ${(error as Error).message}`);
    }
    const { workspace, signal } = context;
    const requested = args.path ?? '.';
    const target = workspace.resolve(requested);
    let info: Stats;
    try {
      info = await stat(target);
    } catch {
      throw new ToolError(`no such file or directory: ${requested}; use glob to find the right path`);
    }

    let files: string[];
    if (info.isDirectory()) {
      const { glob } = await loadGlobber();
      const found = await glob('**/*', {
        cwd: target,
        ignore: IGNORED_DIRS,
        dot: true,
        followSymbolicLinks: false,
        onlyFiles: true,
        signal,
      });
      files = found.sort().map((file) => path.join(target, file));
    } else {
      files = [target];
    }

    const matches: string[] = [];
    let binary = 0;
    let large = 0;
    let interrupted = false;
    let truncated = false;
    const search = new RegexSearch(args.pattern);
    let batch: Array<{ file: string; text: string }> = [];
    let batchBytes = 0;
    const flush = async () => {
      if (!batch.length || truncated) return;
      const found: LineMatch[] = await search.match(batch, MAX_MATCHES - matches.length);
      batch = [];
      batchBytes = 0;
      for (const match of found) {
        if (matches.length === MAX_MATCHES) {
          truncated = true;
          break;
        }
        const text = match.text.length > MAX_TEXT_CHARS ? `${match.text.slice(0, MAX_TEXT_CHARS)}…` : match.text;
        matches.push(`${match.file}:${match.line}:${text}`);
      }
    };
    try {
      for (const file of files) {
        if (signal.aborted) {
          interrupted = true;
          break;
        }
        if (truncated) break;
        let buffer: Buffer;
        try {
          const fileInfo = await stat(file);
          if (!fileInfo.isFile()) continue;
          if (fileInfo.size > MAX_FILE_BYTES) {
            large += 1;
            continue;
          }
          ({ buffer } = await readInside(workspace, file));
        } catch {
          continue; // Deleted, unreadable, or no longer inside since the walk: not worth failing the whole search.
        }
        if (looksBinary(buffer)) {
          binary += 1;
          continue;
        }
        batch.push({ file: workspace.relative(file), text: buffer.toString('utf8') });
        batchBytes += buffer.length;
        if (batchBytes >= BATCH_BYTES) await flush();
      }
      if (!interrupted) await flush();
    } catch (error) {
      if (error instanceof RegexTimeoutError) throw new ToolError(error.message);
      throw error;
    } finally {
      search.close();
    }
    if (signal.aborted) interrupted = true;

    const out = matches.length > 0 ? [...matches] : [`no matches for /${args.pattern}/ in ${workspace.relative(target)}`];
    if (truncated) out.push(`[stopped at ${MAX_MATCHES} matches; narrow the pattern or the path]`);
    const skipped: string[] = [];
    if (binary > 0) skipped.push(`${binary} binary file${binary === 1 ? '' : 's'}`);
    if (large > 0) skipped.push(`${large} file${large === 1 ? '' : 's'} over 2 MiB`);
    if (skipped.length > 0) out.push(`[skipped ${skipped.join(' and ')}]`);
    if (interrupted) {
      out.push('[interrupted]');
      return { content: out.join('\n'), isError: true };
    }
    return out.join('\n');
  },
});
