// Git metadata an agent planted (docs/trust.md, "planted git metadata"). Agents may write most of
// the repository's git dir (a commit needs objects, refs, the index), so they can also leave files
// there that git's own commands never write in a plain repository, and that make the person's next
// `git status` follow another repository or run a program: `commondir`, `config.worktree`,
// `objects/info/alternates`, `info/attributes`, a hook where there was none, a `.git` gitfile in
// the workspace. What exists when the session opens is the person's; anything new at the end is
// reported in one line and moved aside into .team/quarantine/ (a copy of every byte is kept).
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pinRepository, type PinnedRepo } from './host-git.js';

export interface GitMetadataSnapshot {
  pin: PinnedRepo;
  /** Watched paths (absolute) and what they held. */
  files: Map<string, string>;
}

export interface PlantedFile {
  /** Relative to the workspace root (e.g. `.git/commondir`). */
  path: string;
  /** What it does, in a few words. */
  what: string;
  /** Where huddle moved it (relative to the workspace root), when it did. */
  moved_to?: string;
  /** How the person removes it, when huddle left it. */
  remove?: string;
}

/** What git reads from a git dir that only a person (or an attacker) puts there, and what it does. */
const WATCHED: Array<[string, string]> = [
  ['commondir', 'points git at another repository, whose config git then runs'],
  ['config.worktree', 'a second config file (core.fsmonitor, filters, hooks)'],
  ['gitdir', 'a git dir link git writes only in a linked worktree'],
  ['objects/info/alternates', 'makes git read objects from another directory'],
  ['objects/info/http-alternates', 'makes git fetch objects from elsewhere'],
  ['info/attributes', 'names filters and diff drivers for every file'],
];

function content(file: string): string | undefined {
  try {
    const info = lstatSync(file);
    if (info.isDirectory()) return 'dir';
    if (info.isSymbolicLink()) return 'link';
    return `file:${readFileSync(file).toString('base64')}`;
  } catch {
    return undefined;
  }
}

function watchedPaths(pin: PinnedRepo): Map<string, string> {
  const out = new Map<string, string>();
  for (const dir of new Set([pin.gitDir, pin.commonDir])) {
    for (const [name, what] of WATCHED) out.set(path.join(dir, name), what);
    let hooks: string[] = [];
    try {
      hooks = readdirSync(path.join(dir, 'hooks'));
    } catch {
      // no hooks directory
    }
    for (const hook of hooks) if (!hook.endsWith('.sample')) out.set(path.join(dir, 'hooks', hook), 'a hook: git runs it');
  }
  out.set(path.join(pin.workTree, '.git'), 'the repository itself');
  // A workspace below its repository's top: a `.git` here would take over git run from here.
  if (pin.root !== pin.workTree) out.set(path.join(pin.root, '.git'), 'a git dir or gitfile that takes over git run in the workspace');
  return out;
}

/** The watched files as they are now; undefined outside git. Taken as the session opens. */
export function snapshotGitMetadata(root: string): GitMetadataSnapshot | undefined {
  const pin = pinRepository(root);
  if (!pin) return undefined;
  const files = new Map<string, string>();
  for (const file of watchedPaths(pin).keys()) {
    const held = content(file);
    if (held !== undefined) files.set(file, held);
  }
  return { pin, files };
}

/**
 * What is wrong already as the session opens: a `commondir` where git never writes one (left by an
 * earlier run, or planted by hand). huddle's git does not take config or objects from it, but git's
 * ref store still reads it, and the person's own git follows it whole: moved aside before any agent
 * runs, like a file planted during the run.
 */
export function quarantineBeforeStart(snapshot: GitMetadataSnapshot, teamDir: string, now = new Date()): PlantedFile[] {
  const { pin } = snapshot;
  if (!pin.ignoredCommondir) return [];
  const file = path.join(pin.gitDir, 'commondir');
  snapshot.files.delete(file);
  const shown = path.relative(pin.root, file);
  const what = `points git at ${pin.ignoredCommondir}; git writes it only in a linked worktree`;
  const target = path.join(teamDir, 'quarantine', now.toISOString().replace(/[:.]/g, '-'), shown.replace(/^(\.\.\/)+/, ''));
  try {
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(file, target);
    return [{ path: shown, what, moved_to: path.relative(pin.root, target) }];
  } catch {
    return [{ path: shown, what, remove: `rm ${shown}` }];
  }
}

/** Watched files that are new, or changed, since the snapshot. */
export function findPlanted(snapshot: GitMetadataSnapshot): Array<{ file: string; what: string; before: string | undefined }> {
  const found: Array<{ file: string; what: string; before: string | undefined }> = [];
  const { pin } = snapshot;
  for (const [file, what] of watchedPaths(pin)) {
    const now = content(file);
    const before = snapshot.files.get(file);
    if (now === undefined || now === before) continue;
    found.push({ file, what, before });
  }
  return found;
}

/**
 * Reports what was planted since the snapshot, and moves aside what git never writes there (into
 * `<teamDir>/quarantine/<stamp>/`, keeping its path). The repository itself (`.git` turned into a
 * file, or changed) is only reported: moving it could lose the person's history.
 */
export function quarantinePlanted(snapshot: GitMetadataSnapshot, teamDir: string, now = new Date()): PlantedFile[] {
  const root = snapshot.pin.root;
  const repoItself = path.join(snapshot.pin.workTree, '.git');
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const out: PlantedFile[] = [];
  for (const { file, what, before } of findPlanted(snapshot)) {
    const shown = path.relative(root, file) || file;
    if (file === repoItself || before !== undefined) {
      out.push({ path: shown, what: `${what}: changed during the run`, remove: `check it by hand (ls -la ${shown})` });
      continue;
    }
    const target = path.join(teamDir, 'quarantine', stamp, path.relative(root, file).replace(/^(\.\.\/)+/, ''));
    try {
      mkdirSync(path.dirname(target), { recursive: true });
      renameSync(file, target);
      out.push({ path: shown, what, moved_to: path.relative(root, target) });
    } catch {
      out.push({ path: shown, what, remove: `rm -r ${shown}` });
    }
  }
  return out;
}

/** The one line a planted file gets (stderr, the console, the run record's warning). */
export function plantedLine(planted: PlantedFile): string {
  const action = planted.moved_to
    ? `moved to ${planted.moved_to} (huddle's own git did not follow it; move it back only if you put it there yourself)`
    : `remove it: ${planted.remove}`;
  return `planted git metadata: ${planted.path} (${planted.what}) — ${action}`;
}
