// Teammate checkouts made by an older huddle as plain `git worktree`s (their `.git` is a file into
// the main repository): found through git's own list, and made again as clones (worktree.ts).
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { gitOk, WorktreeError } from './git-run.js';
import { changedFiles, listFew, worktreePath, type Repo } from './checkouts.js';

/**
 * A checkout made by an older huddle as a plain `git worktree` (its `.git` is a file into the main
 * repository) cannot be sandboxed: when it has no uncommitted work it is removed (its branch stays
 * in the main repository) and made again as a clone; otherwise the person is told what to do.
 */
export async function convertLegacyWorktree(repo: Repo, name: string): Promise<void> {
  const dir = worktreePath(repo.root, name);
  const marker = path.join(dir, '.git');
  let text: string;
  try {
    if (!statSync(marker).isFile()) return;
    text = readFileSync(marker, 'utf8');
  } catch {
    return;
  }
  const target = /^gitdir:\s*(.+)$/m.exec(text)?.[1]?.trim();
  if (!target || !path.resolve(dir, target).startsWith(`${repo.commonDir}${path.sep}worktrees${path.sep}`)) return;
  const dirty = await changedFiles(dir, true).catch(() => ['(unreadable)']);
  if (dirty.length > 0) {
    throw new WorktreeError(
      `${path.relative(repo.root, dir)} is a plain git worktree from an older huddle, which cannot be sandboxed, and has uncommitted changes (${listFew(dirty)}); ` +
        `commit them there (git -C ${dir} commit -am wip) and spawn ${name} again`,
    );
  }
  await gitOk(repo.root, ['worktree', 'remove', dir], 'git worktree remove');
}

/** Registered worktrees: real path → branch ref ('' when detached). */
export async function listRegistered(root: string): Promise<Map<string, string>> {
  const out = await gitOk(root, ['worktree', 'list', '--porcelain', '-z'], 'git worktree list');
  const map = new Map<string, string>();
  let current: string | undefined;
  for (const field of out.split('\0')) {
    if (field.startsWith('worktree ')) {
      current = realOrSame(field.slice('worktree '.length));
      map.set(current, '');
    } else if (field.startsWith('branch ') && current !== undefined) {
      map.set(current, field.slice('branch '.length));
    }
  }
  return map;
}

export function realOrSame(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
