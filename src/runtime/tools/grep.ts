// Searching file contents with a regex, in-process: no dependency on rg or grep being installed,
// and the same confinement as the other file tools (the walk never follows symlinks).
import { readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { IGNORED_DIRS } from './glob.js';
import { looksBinary } from './read-file.js';
import { defineTool, ToolError, type ToolResult } from './types.js';

const MAX_MATCHES = 500;
const MAX_TEXT_CHARS = 300;
/** Bigger files are almost always generated or data; searching them costs much and tells little. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const input = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('A JavaScript regular expression (no slashes or flags; use (?i:...) to ignore case), matched against each line.'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('A file or directory to search, relative to the workspace root (default: the whole workspace).'),
});

export const grepTool = defineTool({
  name: 'grep',
  description:
    'Searches file contents line by line with a JavaScript regular expression and returns matches as ' +
    `\`path:line:text\`, at most ${MAX_MATCHES}. Searches a directory recursively (skipping .git, node_modules, ` +
    'binary files and files over 2 MiB) or a single file.',
  input,
  summarize: (args) => (args.path ? `${args.pattern} in ${args.path}` : args.pattern),
  async run(args, context): Promise<string | ToolResult> {
    let regex: RegExp;
    try {
      regex = new RegExp(args.pattern);
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
    search: for (const file of files) {
      if (signal.aborted) {
        interrupted = true;
        break;
      }
      let buffer: Buffer;
      try {
        const fileInfo = await stat(file);
        if (!fileInfo.isFile()) continue;
        if (fileInfo.size > MAX_FILE_BYTES) {
          large += 1;
          continue;
        }
        buffer = await readFile(file);
      } catch {
        continue; // Deleted or unreadable since the walk: not worth failing the whole search.
      }
      if (looksBinary(buffer)) {
        binary += 1;
        continue;
      }
      const shown = workspace.relative(file);
      const lines = buffer.toString('utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!.replace(/\r$/, '');
        if (!regex.test(line)) continue;
        if (matches.length === MAX_MATCHES) {
          truncated = true;
          break search;
        }
        const text = line.length > MAX_TEXT_CHARS ? `${line.slice(0, MAX_TEXT_CHARS)}…` : line;
        matches.push(`${shown}:${i + 1}:${text}`);
      }
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
