// Which checkpoint shadows can go (docs/trust.md#checkpoints-and-rewind): every workspace huddle ran
// in has one under checkpointsRoot(), kept until removed. A shadow is orphaned when nothing exists
// any more at the path its `workspace` file names. That is judged by the path alone: a workspace on
// a disk that is not mounted looks gone too, so nothing here runs on its own — `huddle prune
// --checkpoints` asks for it. A shadow that cannot be judged (no readable `workspace` file, or one
// naming a path whose shadow would be elsewhere) is left for the person to look at.
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { checkpointsRoot } from '../fs/huddle-dirs.js';
import { checkpointDirFor } from './checkpoints.js';

export type ShadowVerdict =
  /** Its workspace is gone: it can be removed. */
  | { kind: 'orphaned'; dir: string; workspace: string; bytes: number }
  /** Its workspace is there (or cannot be told gone): never touched. */
  | { kind: 'in use'; dir: string; workspace: string }
  /** Cannot be judged: left, and named with the reason. */
  | { kind: 'unknown'; dir: string; reason: string };

/** Every directory under the checkpoints root, judged. Empty when the root does not exist. */
export function judgeCheckpointShadows(root = checkpointsRoot()): ShadowVerdict[] {
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const verdicts: ShadowVerdict[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    // Only real directories: a symbolic link or a stray file there is not huddle's to follow or remove.
    if (!lstatIfAny(dir)?.isDirectory()) continue;
    const workspace = readWorkspaceFile(dir);
    if (workspace === undefined) {
      verdicts.push({ kind: 'unknown', dir, reason: 'no readable workspace file' });
    } else if (path.basename(checkpointDirFor(workspace)) !== name) {
      verdicts.push({ kind: 'unknown', dir, reason: `its workspace file names ${workspace}, whose checkpoints would be elsewhere` });
    } else if (pathIsGone(workspace)) {
      verdicts.push({ kind: 'orphaned', dir, workspace, bytes: diskBytes(dir) });
    } else {
      verdicts.push({ kind: 'in use', dir, workspace });
    }
  }
  return verdicts;
}

/** Removes an orphaned shadow, after looking once more that its workspace did not come back meanwhile. */
export function removeOrphanedShadow(verdict: Extract<ShadowVerdict, { kind: 'orphaned' }>): boolean {
  if (!pathIsGone(verdict.workspace)) return false;
  rmSync(verdict.dir, { recursive: true, force: true });
  return true;
}

/** The absolute path the shadow's `workspace` file names (as checkpoints.ts wrote it), or undefined. */
function readWorkspaceFile(dir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dir, 'workspace'), 'utf8');
  } catch {
    return undefined;
  }
  const workspace = text.endsWith('\n') ? text.slice(0, -1) : text;
  return workspace && !workspace.includes('\n') && path.isAbsolute(workspace) ? workspace : undefined;
}

/** Nothing at that path: a component missing, or one that is not a directory. Any other error (no permission) is not "gone". */
function pathIsGone(target: string): boolean {
  try {
    lstatSync(target);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
}

function lstatIfAny(target: string) {
  try {
    return lstatSync(target);
  } catch {
    return undefined;
  }
}

/** What the directory takes on disk (allocated blocks, as du counts), without following links. */
function diskBytes(dir: string): number {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const current = stack.pop()!;
    const stats = lstatIfAny(current);
    if (!stats) continue;
    total += stats.blocks * 512;
    if (!stats.isDirectory()) continue;
    let entries: string[] = [];
    try {
      entries = readdirSync(current);
    } catch {
      // An unreadable subdirectory counts as its own blocks only: the size is what the person is told, not a decision.
    }
    for (const entry of entries) stack.push(path.join(current, entry));
  }
  return total;
}
