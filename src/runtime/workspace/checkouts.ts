// Where teammates' checkouts live and small facts about them, shared by worktree.ts and the
// conversion of older checkouts (legacy-worktree.ts).
import path from 'node:path';
import { gitOk, parseStatus } from './git-run.js';

/** The teammate's checkout: `.team/worktrees/<name>`. */
export function worktreePath(root: string, name: string): string {
  return path.join(root, '.team', 'worktrees', name);
}

export interface Repo {
  /** The workspace root (huddle's, not necessarily the repository's top). */
  root: string;
  /** The repository's top directory (what teammates clone). */
  top: string;
  /** The workspace's path inside the repository ('' at the top), with a trailing slash. */
  prefix: string;
  commonDir: string;
}

/** Paths with changes in a work tree, from `git status --porcelain -z`. */
export async function changedFiles(cwd: string, untracked: boolean): Promise<string[]> {
  return parseStatus(await gitOk(cwd, ['status', '--porcelain', '-z', `--untracked-files=${untracked ? 'all' : 'no'}`], 'git status'));
}

export function listFew(files: string[], count = 5): string {
  return files.length <= count ? files.join(', ') : `${files.slice(0, count).join(', ')} and ${files.length - count} more`;
}
