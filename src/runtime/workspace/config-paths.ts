// What in a workspace huddle or git reads as configuration, which the file tools never write, in any
// permission mode (docs/trust.md): the file tools run in huddle's own process, outside the sandbox,
// so a write there (core.fsmonitor in .git/config, a hook in .team/settings.json) would run as the
// person. Checked on the path as spelled (`..` folded) and on its real path (symlinks followed).
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { huddleConfigDir } from '../fs/huddle-dirs.js';

/** The one line the model gets: why, and that the person edits such a file themselves. */
export function configRefusal(shown: string, why: string): string {
  return `refused: ${shown} is ${why}, which agents never change in any permission mode; say what should change and the person edits it themselves`;
}

/**
 * Why `absolute` (inside `root`) is configuration the file tools must not write, or undefined.
 * `extra`: files settings name (hook scripts, MCP server programs), absolute real paths.
 */
export function configPathReason(root: string, absolute: string, extra: readonly string[] = [], configDir?: string): string | undefined {
  const relative = path.relative(root, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const parts = relative.split(path.sep).filter((part) => part && part !== '.');
  const lower = parts.map((part) => part.toLowerCase());
  // Any .git component: the repository's config, hooks and the gitfile of a worktree checkout.
  if (lower.includes('.git')) return 'inside .git (git runs what its config and hooks say)';
  const first = lower[0] ?? '';
  if (first === '.team') return "huddle's team state and settings (.team/)";
  if (first === '.tasks') return "huddle's task board (.tasks/; use the task tools)";
  if (first === '.mcp.json') return 'the MCP server list (.mcp.json), whose servers huddle starts';
  if (first === '.claude') return 'agent configuration (.claude/)';
  if (isInsideDir(configDir ?? ownConfigDir(), absolute)) return "your huddle settings and trust records (huddle's config directory)";
  if (extra.some((file) => file.toLowerCase() === absolute.toLowerCase())) return 'a script the settings run (a hook or an MCP server)';
  return undefined;
}

/**
 * huddle's config directory, real path when it exists: a workspace that holds it (huddle run in ~)
 * must not reach it. Most people have none: asked first, so that answer costs no exception (a failed
 * realpath's error was most of the checks of a file write). Read at each check, never kept: a link
 * on its way may change.
 */
export function ownConfigDir(): string {
  const dir = huddleConfigDir();
  if (!existsSync(dir)) return dir;
  try {
    return realpathSync.native(dir);
  } catch {
    return dir;
  }
}

function isInsideDir(dir: string, candidate: string): boolean {
  const relative = path.relative(dir, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * The files inside `root` that settings' commands name (a hook's `./scripts/guard.sh`, an MCP
 * server's `node tools/server.js`): words that look like paths, resolved against the root.
 */
export function filesNamedBy(root: string, commands: readonly string[]): string[] {
  const out = new Set<string>();
  for (const command of commands) {
    // Whitespace-split words with their quotes dropped: enough to find `bash "./x.sh"`.
    for (const word of command.split(/[\s;&|()<>]+/).map((w) => w.replace(/^['"]|['"]$/g, ''))) {
      const cleaned = word.replace(/^\$\{?CLAUDE_PROJECT_DIR\}?\/?/, '').replace(/^\$\{?HUDDLE_PROJECT_DIR\}?\/?/, '');
      if (!cleaned || cleaned.startsWith('-') || cleaned.includes('$') || !/[/.]/.test(cleaned)) continue;
      const absolute = path.resolve(root, cleaned);
      const relative = path.relative(root, absolute);
      if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) continue;
      out.add(absolute);
      // A link's target is the script that runs.
      try {
        out.add(realpathSync(absolute));
      } catch {
        // not there (yet): its name is protected
      }
    }
  }
  return [...out];
}
