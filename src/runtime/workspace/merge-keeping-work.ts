// A branch merged into the workspace's current branch without touching the person's uncommitted
// work: the merge is made apart from the work tree (`git merge-tree --write-tree`, then
// `git commit-tree`), and the branch moves to it by a fast-forward, which git refuses before it
// changes anything when an uncommitted or untracked file of the person's would be overwritten.
// So a conflict, or an overlap with the person's edits, leaves everything as it was.
import { firstLines, git, gitOk, WorktreeError } from './git-run.js';

export class MergeRefusedError extends WorktreeError {
  constructor(
    message: string,
    /** The files in the way: conflicting ones, or the person's uncommitted ones the merge would overwrite. */
    readonly files: string[],
  ) {
    super(message);
    this.name = 'MergeRefusedError';
  }
}

/** Merges `branch` into the current branch with a merge commit titled `message`; returns the new commit's short id. */
export async function mergeKeepingWork(root: string, branch: string, message: string): Promise<{ into: string; commit: string }> {
  const into = (await git(root, ['symbolic-ref', '-q', '--short', 'HEAD'])).stdout.trim();
  if (!into) throw new WorktreeError(`the workspace is not on a branch (detached HEAD); check out the branch to merge ${branch} into, then pick again`);
  if ((await git(root, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'])).code === 0) {
    throw new WorktreeError('the workspace is in the middle of a merge; finish it (git commit) or abort it (git merge --abort) first');
  }
  const head = (await gitOk(root, ['rev-parse', 'HEAD'], 'git rev-parse')).trim();
  const theirs = (await gitOk(root, ['rev-parse', `refs/heads/${branch}`], 'git rev-parse')).trim();
  const merged = await git(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', head, theirs]);
  if (merged.code === 1) {
    const files = merged.stdout.split('\n').slice(1).filter(Boolean);
    throw new MergeRefusedError(`merging ${branch} into ${into} conflicts in ${files.join(', ')}; nothing was changed`, files);
  }
  if (merged.code !== 0) throw new WorktreeError(`git merge-tree failed: ${firstLines(merged.stderr || merged.stdout)}`);
  const tree = merged.stdout.split('\n')[0]!.trim();
  const commit = (await gitOk(root, ['commit-tree', tree, '-p', head, '-p', theirs, '-m', message], 'git commit-tree')).trim();
  const forward = await git(root, ['merge', '--ff-only', '-q', commit]);
  if (forward.code !== 0) {
    // git lists the files in its way one per line, each after a tab (in any language git speaks).
    const files = forward.stderr
      .split('\n')
      .filter((line) => /^\t/.test(line))
      .map((line) => line.trim());
    // Anything else (the index locked by another git, a disk error): git's own words, not a guess about the person's work.
    if (!files.length) throw new WorktreeError(`merging ${branch} into ${into} failed: ${firstLines(forward.stderr || forward.stdout)}; nothing was changed`);
    throw new MergeRefusedError(
      `merging ${branch} would overwrite ${await inTheWay(root, files)}; nothing was changed: commit them (or move them aside), then pick again`,
      files,
    );
  }
  return { into, commit: commit.slice(0, 7) };
}

/** The person's files a merge would overwrite, said as what they are: uncommitted changes, untracked files. */
async function inTheWay(root: string, files: string[]): Promise<string> {
  const tracked = new Set((await git(root, ['ls-files', '-z', '--', ...files])).stdout.split('\0').filter(Boolean));
  const changed = files.filter((file) => tracked.has(file));
  const untracked = files.filter((file) => !tracked.has(file));
  return [
    changed.length ? `your uncommitted changes in ${changed.join(', ')}` : '',
    untracked.length ? `your untracked file${untracked.length === 1 ? '' : 's'} ${untracked.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
}
