// Finding files by name. The crawl never follows symlinks and never starts outside the workspace,
// so a link to / or /etc cannot turn a listing into a tour of the machine.
import path from 'node:path';
import * as z from 'zod';
import { defineTool, ToolError } from './types.js';
import type { Workspace } from '../workspace/workspace.js';

const MAX_RESULTS = 1000;
/** Never listed or searched: huge, generated, and not what an agent means to look at. */
// Teammates' worktrees are copies of the workspace: searching them would return every file twice.
export const IGNORED_DIRS = ['**/.git/**', '**/node_modules/**', '.team/worktrees/**'];

/**
 * tinyglobby, loaded by the first search rather than at start: its crawler (fdir) resolves and loads picomatch
 * from disk when it is evaluated, which every run would pay before its first model request.
 */
export const loadGlobber = () => import('tinyglobby');

const input = z.object({
  pattern: z.string().min(1).describe('A glob relative to the workspace root, like `src/**/*.ts` or `**/package.json`.'),
});

export const globTool = defineTool({
  name: 'glob',
  effects: ['read'],
  description:
    'Lists the files whose workspace-relative path matches a glob pattern (`*`, `**`, `?`, `[abc]`, `{a,b}`), ' +
    `sorted, one per line, at most ${MAX_RESULTS}. Hidden files are included; .git and node_modules are skipped. ` +
    'A directory name alone lists everything under it.',
  input,
  summarize: (args) => args.pattern,
  async run(args, context) {
    const pattern = checkPattern(args.pattern);
    const { workspace } = context;
    const { glob, isDynamicPattern } = await loadGlobber();
    // Resolving the literal start of the pattern refuses crawls that begin through a link out.
    const base = staticBase(pattern, isDynamicPattern);
    if (base) workspace.resolve(base);

    const found = await glob(pattern, {
      cwd: workspace.root,
      ignore: IGNORED_DIRS,
      dot: true,
      followSymbolicLinks: false,
      onlyFiles: true,
      signal: context.signal,
    });
    if (context.signal.aborted) return { content: '[interrupted]', isError: true };

    const files = insideOnly(workspace, found).sort();
    if (files.length === 0) return `no files match ${pattern}`;
    const shown = files.slice(0, MAX_RESULTS);
    if (files.length > MAX_RESULTS) {
      shown.push(`[… and ${files.length - MAX_RESULTS} more files; use a narrower pattern]`);
    }
    return shown.join('\n');
  },
});

function checkPattern(raw: string): string {
  const pattern = raw.trim().replace(/^(\.\/)+/, '');
  if (path.isAbsolute(pattern) || /^[A-Za-z]:[\\/]/.test(pattern)) {
    throw new ToolError(`'${raw}' is an absolute pattern; use a pattern relative to the workspace root, like src/**/*.ts`);
  }
  // Also `..` produced by brace alternatives such as {..,src}.
  if (/(^|[/{,])\.\.($|[/},])/.test(pattern)) {
    throw new ToolError(`'${raw}' leaves the workspace through '..'; use a pattern relative to the workspace root`);
  }
  return pattern;
}

/** The leading path segments that contain no glob syntax, e.g. `src/lib` for `src/lib/**\/*.ts`. */
function staticBase(pattern: string, isDynamicPattern: (segment: string) => boolean): string {
  const segments: string[] = [];
  for (const segment of pattern.split('/')) {
    if (isDynamicPattern(segment) || segment.includes('\\')) break;
    segments.push(segment);
  }
  return segments.join('/');
}

/** Drops matches whose directory lies outside the workspace once symlinks are followed. */
function insideOnly(workspace: Workspace, files: string[]): string[] {
  const verdicts = new Map<string, boolean>();
  return files.filter((file) => {
    const dir = path.posix.dirname(file);
    let inside = verdicts.get(dir);
    if (inside === undefined) {
      try {
        workspace.resolve(dir);
        inside = true;
      } catch {
        inside = false;
      }
      verdicts.set(dir, inside);
    }
    return inside;
  });
}
