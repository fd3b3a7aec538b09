// Teammates' own checkouts: each gets `.team/worktrees/<name>` on branch `huddle/<name>`, made
// from the workspace's HEAD. Not a `git worktree`: that shares the main repository's .git (objects,
// refs, config), which a sandbox cannot hand a teammate without handing it the main checkout's
// history too. Instead a clone that borrows the main objects read-only (`git clone --shared`),
// with its git dir beside it (`.team/worktrees/<name>.git`, so that a work tree deleted by hand
// keeps its commits). The teammate's sandbox may write those two directories and nothing else.
// Its branch is fetched into the main repository after each of its commands (and before every
// status, diff, merge and removal), so `huddle/<name>` reads there as it did with worktrees, and
// is merged with `git merge --no-ff`. Nothing here discards work unless asked to with `force`:
// a conflicting merge is aborted (both sides keep their commits), and removal refuses uncommitted
// or unmerged work.
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { AGENT_NAME_PATTERN } from '../vocabulary.js';
import { Workspace } from './workspace.js';
import { firstLines, git, gitInCheckout, gitInCheckoutOk, gitOk, parseStatus, WorktreeError } from './git-run.js';
import { convertLegacyWorktree, listRegistered, realOrSame } from './legacy-worktree.js';
import { changedFiles, listFew, worktreePath, type Repo } from './checkouts.js';
import { PRIVATE_DIR_MODE } from '../fs/private-modes.js';

export { changedFiles, listFew, worktreePath, type Repo };

export { WorktreeError } from './git-run.js';

export const NOT_A_REPO_MESSAGE = 'worktree: true needs a git repository with at least one commit; run git init && git commit, or spawn without worktree';

/** Past this many characters a diff is cut (a pane is not the place for a whole rewrite). */
export const MAX_DIFF_CHARS = 200_000;
/** Untracked files shown as whole-file diffs; the rest are only named. */
const MAX_UNTRACKED_DIFFS = 50;

/** A merge stopped on conflicts and was aborted: nothing changed on either side. */
export class MergeConflictError extends WorktreeError {
  readonly files: string[];
  /** git's own account of the merge (the CONFLICT lines). */
  readonly details: string;
  constructor(branch: string, into: string, files: string[], details: string) {
    super(
      `merging ${branch} into ${into} conflicts in ${files.join(', ')}; the merge was aborted, ` +
        `both branches keep their commits (resolve it by hand with git merge ${branch}, or have the teammate rebase)`,
    );
    this.name = 'MergeConflictError';
    this.files = files;
    this.details = details;
  }
}

/** The teammate's git dir, beside its work tree (it survives the work tree being deleted by hand). */
export function worktreeGitDir(root: string, name: string): string {
  return path.join(root, '.team', 'worktrees', `${name}.git`);
}

export function worktreeBranch(name: string): string {
  return `huddle/${name}`;
}

/** True when a teammate's worktree (or its git dir) exists (a re-spawn reuses it). */
export function hasWorktree(root: string, name: string): boolean {
  return existsSync(worktreePath(root, name)) || existsSync(worktreeGitDir(root, name));
}

export interface WorktreeInfo {
  name: string;
  branch: string;
  /** The worktree's absolute path. */
  path: string;
  /** The same, relative to the workspace (what the roster records). */
  relativePath: string;
  /** Where the teammate works: the worktree, or the same subdirectory of it when the workspace is a subdirectory of its repository. */
  workspace: Workspace;
  /** False when an existing worktree (and its work) was reused. */
  created: boolean;
}

export interface WorktreeStatus {
  name: string;
  branch: string;
  path: string;
  /** The worktree directory is registered with git. */
  exists: boolean;
  branchExists: boolean;
  /** The workspace's current branch (or commit, when detached): what merges go into. */
  base: string;
  /** Files with uncommitted changes in the worktree, untracked ones included. */
  uncommitted: string[];
  /** Commits on the branch that the base does not have, newest first ("<sha> <subject>"). */
  unmerged: string[];
}

export interface MergeResult {
  branch: string;
  into: string;
  /** Commits brought in (0: there was nothing to merge). */
  commits: number;
  /** Files the teammate has not committed: they stay in its worktree, unmerged. */
  uncommitted: string[];
  message: string;
}

async function openRepo(root: string): Promise<Repo> {
  const inside = await git(root, ['rev-parse', '--path-format=absolute', '--is-inside-work-tree', '--show-prefix', '--git-common-dir', '--show-toplevel']);
  if (inside.code !== 0 || !inside.stdout.startsWith('true')) throw new WorktreeError(NOT_A_REPO_MESSAGE);
  const head = await git(root, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
  if (head.code !== 0) throw new WorktreeError(NOT_A_REPO_MESSAGE);
  const [, prefix = '', commonDir = '.git', top = root] = inside.stdout.split('\n');
  return { root, top, prefix, commonDir: path.resolve(root, commonDir) };
}

function assertName(name: string): void {
  if (!AGENT_NAME_PATTERN.test(name)) {
    throw new WorktreeError(`'${name}' is not a teammate name (lowercase letters, digits, '-' or '_', starting with a letter)`);
  }
}

// One git operation on a repository at a time within this process: git's own locks would make a
// second one fail half-way rather than wait.
const queues = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  const settled = next.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return next;
}

/**
 * The teammate's checkout: created on `huddle/<name>` from the workspace's HEAD, or (when the
 * directory, its git dir or the branch already exists) reused with everything in it.
 */
export async function ensureWorktree(root: string, name: string): Promise<WorktreeInfo> {
  assertName(name);
  const repo = await openRepo(root);
  return serialized(repo.commonDir, async () => {
    const dir = worktreePath(root, name);
    const gitDir = worktreeGitDir(root, name);
    const branch = worktreeBranch(name);
    const info = (created: boolean): WorktreeInfo => {
      // A workspace that is a subdirectory of its repository works in the same subdirectory of
      // the checkout (made if git did not, when it holds no tracked file).
      const agentRoot = path.join(dir, repo.prefix);
      mkdirSync(agentRoot, { recursive: true, mode: PRIVATE_DIR_MODE });
      const workspace = new Workspace(agentRoot, { writable: [realpathSync(dir), realpathSync(gitDir)], readOnly: [], readable: [repo.top, repo.commonDir] });
      // The person (and /merge) see the teammate's branch in the main repository as soon as it moves.
      workspace.afterCommand = () => syncBranch(repo, name).then(() => undefined);
      return { name, branch, path: dir, relativePath: path.relative(root, dir), workspace, created };
    };
    await convertLegacyWorktree(repo, name);
    if (isGitDir(gitDir)) {
      if (existsSync(path.join(dir, '.git'))) return info(false);
      if (existsSync(dir) && readdirSync(dir).length > 0) {
        throw new WorktreeError(`${path.relative(root, dir)} exists but is not ${name}'s checkout; move it aside (nothing in it was touched)`);
      }
      // The work tree was deleted by hand: its git dir kept the commits; check them out again.
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, '.git'), `gitdir: ${gitDir}\n`);
      await gitInCheckoutOk(dir, ['reset', '-q', '--hard'], 'restoring the checkout', { writable: [dir, gitDir], readable: [repo.commonDir] });
      return info(true);
    }
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      throw new WorktreeError(`${path.relative(root, dir)} exists but is not a git worktree; move it aside (nothing in it was touched)`);
    }
    excludeWorktrees(repo.commonDir);
    mkdirSync(path.dirname(dir), { recursive: true });
    // An existing branch keeps its commits: the checkout is made on it, not from HEAD.
    if (!(await branchExists(root, branch))) await gitOk(root, ['branch', branch, 'HEAD'], 'git branch');
    const start = (await gitOk(root, ['rev-parse', `refs/heads/${branch}`], 'git rev-parse')).trim();
    await gitOk(root, ['clone', '-q', '--shared', '--no-checkout', '--no-hardlinks', `--separate-git-dir=${gitDir}`, repo.top, dir], 'git clone', {
      pinned: false,
    });
    // A fresh clone: its config is git's own so far, so this runs as huddle itself.
    await gitOk(dir, ['checkout', '-q', '-B', branch, start], 'git checkout', { pinned: false });
    return info(true);
  });
}

/** A branch's commit, read from a git dir's loose ref or packed-refs; undefined when it has none. */
function readRef(gitDir: string, ref: string): string | undefined {
  try {
    const loose = readFileSync(path.join(gitDir, ref), 'utf8').trim();
    if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
  } catch {
    // not a loose ref
  }
  try {
    for (const line of readFileSync(path.join(gitDir, 'packed-refs'), 'utf8').split('\n')) {
      const [sha, name] = line.split(' ');
      if (name === ref && sha && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
    }
  } catch {
    // no packed refs
  }
  return undefined;
}

function isGitDir(dir: string): boolean {
  return existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects'));
}

/**
 * Copies the teammate's branch from its checkout into the main repository (forced: the checkout
 * is where that branch lives). Returns false when there was nothing to copy from.
 */
function syncBranch(repo: Repo, name: string): Promise<boolean> {
  return serialized(repo.commonDir, () => syncBranchNow(repo, name));
}

/** syncBranch for callers already in the repository's queue. */
async function syncBranchNow(repo: Repo, name: string): Promise<boolean> {
  const gitDir = worktreeGitDir(repo.root, name);
  if (!isGitDir(gitDir)) return false;
  const branch = worktreeBranch(name);
  {
    // Read as a file (no git, no sandbox to start): this runs after every command of the teammate.
    const theirs = readRef(gitDir, `refs/heads/${branch}`);
    if (theirs === undefined) return false;
    const ours = await git(repo.root, ['rev-parse', '-q', '--verify', `refs/heads/${branch}`]);
    if (ours.code === 0 && ours.stdout.trim() === theirs) return true;
    // upload-pack runs in the teammate's git dir and, by git's design, runs nothing configured there.
    const fetched = await git(repo.root, ['-c', 'gc.auto=0', 'fetch', '-q', '--no-tags', gitDir, `+refs/heads/${branch}:refs/heads/${branch}`]);
    return fetched.code === 0;
  }
}

/** Keeps the worktrees out of the main workspace's `git status` and `git add -A` (as embedded repositories). */
function excludeWorktrees(commonDir: string): void {
  const file = path.join(commonDir, 'info', 'exclude');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    mkdirSync(path.dirname(file), { recursive: true });
  }
  if (text.split('\n').some((line) => line.trim() === '.team/worktrees/')) return;
  appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}# huddle: teammates' git worktrees\n.team/worktrees/\n`);
}

/** The workspace's current branch, or undefined when HEAD is detached. */
async function currentBranch(root: string): Promise<string | undefined> {
  const result = await git(root, ['symbolic-ref', '-q', '--short', 'HEAD']);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

async function baseLabel(root: string): Promise<string> {
  return (await currentBranch(root)) ?? (await gitOk(root, ['rev-parse', '--short', 'HEAD'], 'git rev-parse')).trim();
}

async function branchExists(root: string, branch: string): Promise<boolean> {
  return (await git(root, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).code === 0;
}

/** The same in a teammate's checkout (sandboxed: its config is the teammate's). */
async function checkoutChanges(repo: Repo, name: string): Promise<string[]> {
  const dir = worktreePath(repo.root, name);
  return parseStatus(await gitInCheckoutOk(dir, ['status', '--porcelain', '-z', '--untracked-files=all'], 'git status', checkoutAccess(repo, name)));
}

/** What huddle's git in a teammate's checkout reads: the checkout, its git dir, the main objects it borrows. */
function checkoutAccess(repo: Repo, name: string): { readable: string[] } {
  return { readable: [worktreePath(repo.root, name), worktreeGitDir(repo.root, name), repo.commonDir] };
}

async function unmergedCommits(root: string, branch: string): Promise<string[]> {
  const out = await gitOk(root, ['log', '--format=%h %s', `HEAD..refs/heads/${branch}`], 'git log');
  return out.split('\n').filter(Boolean);
}

export async function worktreeStatus(root: string, name: string): Promise<WorktreeStatus> {
  assertName(name);
  const repo = await openRepo(root);
  await syncBranch(repo, name);
  return statusOf(repo, name);
}

/** The status without copying the branch first (for callers in the repository's queue, who did). */
async function statusOf(repo: Repo, name: string): Promise<WorktreeStatus> {
  const root = repo.root;
  const dir = worktreePath(root, name);
  const branch = worktreeBranch(name);
  const exists = existsSync(path.join(dir, '.git')) && (isGitDir(worktreeGitDir(root, name)) || (await listRegistered(root)).has(realOrSame(dir)));
  const hasBranch = await branchExists(root, branch);
  return {
    name,
    branch,
    path: dir,
    exists,
    branchExists: hasBranch,
    base: await baseLabel(root),
    uncommitted: exists ? await checkoutChanges(repo, name) : [],
    unmerged: hasBranch ? await unmergedCommits(root, branch) : [],
  };
}

/** Teammate names with a `huddle/<name>` branch or worktree in this repository. */
export async function listWorktreeNames(root: string): Promise<string[]> {
  await openRepo(root);
  const out = await gitOk(root, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/huddle/'], 'git for-each-ref');
  const names = new Set(
    out
      .split('\n')
      .filter(Boolean)
      .map((ref) => ref.slice('huddle/'.length)),
  );
  try {
    for (const entry of readdirSync(path.join(root, '.team', 'worktrees'))) names.add(entry.replace(/\.git$/, ''));
  } catch {
    // no worktrees directory yet
  }
  return [...names].filter((name) => AGENT_NAME_PATTERN.test(name)).sort();
}

function noWorktree(root: string, name: string): WorktreeError {
  return new WorktreeError(`'${name}' has no worktree or ${worktreeBranch(name)} branch in ${root}; only teammates spawned with worktree: true have one`);
}

/**
 * The teammate's work against the base: `git diff <base>...huddle/<name>` (what its commits
 * changed since it branched), then what it has not committed yet (tracked changes and new files).
 */
export async function worktreeDiff(root: string, name: string): Promise<{ text: string; status: WorktreeStatus }> {
  const status = await worktreeStatus(root, name);
  const access = checkoutAccess(await openRepo(root), name);
  if (!status.exists && !status.branchExists) throw noWorktree(root, name);
  const parts: string[] = [];
  if (status.branchExists) {
    const committed = await gitOk(root, ['diff', '--no-color', '--no-ext-diff', `HEAD...refs/heads/${status.branch}`], 'git diff');
    const count = status.unmerged.length;
    parts.push(`# committed on ${status.branch}, against ${status.base} (${count} unmerged commit${count === 1 ? '' : 's'})`);
    parts.push(committed.trim() ? committed.replace(/\n$/, '') : '(no changes)');
  }
  if (status.exists) {
    const dir = status.path;
    parts.push(`# uncommitted in ${path.relative(root, dir)}`);
    const tracked = await gitInCheckoutOk(dir, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', 'HEAD'], 'git diff', access);
    const untracked = (await gitInCheckoutOk(dir, ['ls-files', '-z', '--others', '--exclude-standard'], 'git ls-files', access)).split('\0').filter(Boolean);
    if (tracked.trim()) parts.push(tracked.replace(/\n$/, ''));
    for (const file of untracked.slice(0, MAX_UNTRACKED_DIFFS)) {
      // --no-index exits 1 when the files differ, which they always do here.
      const result = await gitInCheckout(dir, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-index', '--', '/dev/null', file], access);
      if (result.stdout.trim()) parts.push(result.stdout.replace(/\n$/, ''));
    }
    if (untracked.length > MAX_UNTRACKED_DIFFS) {
      parts.push(`# and ${untracked.length - MAX_UNTRACKED_DIFFS} more new files: ${untracked.slice(MAX_UNTRACKED_DIFFS).join(', ')}`);
    }
    if (!tracked.trim() && untracked.length === 0) parts.push('(none)');
  }
  let text = parts.join('\n');
  if (text.length > MAX_DIFF_CHARS) {
    text = `${text.slice(0, MAX_DIFF_CHARS)}\n# [cut: ${text.length - MAX_DIFF_CHARS} more characters; run git diff ${status.base}...${status.branch} in the workspace to see all]`;
  }
  return { text, status };
}

/**
 * Merges `huddle/<name>` into the workspace's current branch with a merge commit. On conflict the
 * merge is aborted and a MergeConflictError names the files: neither side loses anything.
 */
export async function mergeWorktree(root: string, name: string): Promise<MergeResult> {
  assertName(name);
  const repo = await openRepo(root);
  await syncBranch(repo, name);
  return serialized(repo.commonDir, async () => {
    const branch = worktreeBranch(name);
    if (!(await branchExists(root, branch))) throw noWorktree(root, name);
    const into = await currentBranch(root);
    if (!into) throw new WorktreeError(`the workspace is not on a branch (detached HEAD); check out the branch to merge ${branch} into, then merge again`);
    if (into === branch) throw new WorktreeError(`the workspace itself is on ${branch}; check out the branch to merge it into first`);
    if (await mergeInProgress(root)) {
      throw new WorktreeError('the workspace is in the middle of a merge; finish it (git commit) or abort it (git merge --abort) first');
    }
    // An abort cannot always bring back uncommitted changes, so a merge starts only from a clean tree.
    const dirty = await changedFiles(root, false);
    if (dirty.length > 0) {
      throw new WorktreeError(
        `the workspace has uncommitted changes (${listFew(dirty)}); commit or stash them first, so that a conflicting merge can be undone without touching them`,
      );
    }
    const dir = worktreePath(root, name);
    const uncommitted = existsSync(path.join(dir, '.git')) ? await checkoutChanges(repo, name).catch(() => []) : [];
    const left = uncommitted.length ? `; ${name} has uncommitted changes in its worktree (${listFew(uncommitted)}), not merged until it commits them` : '';
    const commits = (await unmergedCommits(root, branch)).length;
    if (commits === 0) {
      return { branch, into, commits, uncommitted, message: `nothing to merge: ${branch} has no commits that ${into} lacks${left}` };
    }
    const merge = await git(root, ['merge', '--no-ff', '--no-edit', '-m', `Merge ${branch} (teammate ${name})`, branch]);
    if (merge.code === 0) {
      return { branch, into, commits, uncommitted, message: `merged ${branch} into ${into} (${commits} commit${commits === 1 ? '' : 's'})${left}` };
    }
    const conflicts = (await git(root, ['diff', '--name-only', '-z', '--diff-filter=U'])).stdout.split('\0').filter(Boolean);
    if (await mergeInProgress(root)) {
      const abort = await git(root, ['merge', '--abort']);
      if (abort.code !== 0 || (await mergeInProgress(root))) {
        throw new WorktreeError(
          `merging ${branch} stopped and git merge --abort failed (${firstLines(abort.stderr)}); the workspace is mid-merge: resolve it or abort it by hand`,
        );
      }
    }
    const details = `${merge.stdout}${merge.stderr}`.trim();
    if (conflicts.length > 0) throw new MergeConflictError(branch, into, conflicts, details);
    // Refused before it began (say, an untracked file would be overwritten): nothing changed.
    throw new WorktreeError(`git merge ${branch} failed: ${firstLines(details, 4)}`);
  });
}

async function mergeInProgress(root: string): Promise<boolean> {
  return (await git(root, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'])).code === 0;
}

/**
 * Removes the worktree and its branch. Refuses uncommitted changes and unmerged commits unless
 * `force`; the branch is deleted only when merged, or when forced (its last commit is named so
 * it can be brought back).
 */
export async function removeWorktree(root: string, name: string, options: { force?: boolean } = {}): Promise<string> {
  assertName(name);
  const repo = await openRepo(root);
  return serialized(repo.commonDir, async () => {
    const force = options.force ?? false;
    await syncBranchNow(repo, name);
    const status = await statusOf(repo, name);
    if (!status.exists && !status.branchExists) throw noWorktree(root, name);
    if (!force && status.uncommitted.length > 0) {
      throw new WorktreeError(
        `${name}'s worktree has uncommitted changes (${listFew(status.uncommitted)}); commit and merge them, or remove with --force to discard them`,
      );
    }
    if (!force && status.unmerged.length > 0) {
      const count = status.unmerged.length;
      throw new WorktreeError(
        `${status.branch} has ${count} commit${count === 1 ? '' : 's'} not merged into ${status.base}; /merge ${name} first, or remove with --force to drop them`,
      );
    }
    const done: string[] = [];
    const gitDir = worktreeGitDir(root, name);
    if (status.exists || existsSync(gitDir)) {
      if ((await listRegistered(root)).has(realOrSame(status.path))) {
        await gitOk(root, ['worktree', 'remove', ...(force ? ['--force'] : []), status.path], 'git worktree remove');
      }
      // rm does not follow symlinks: whatever the teammate left in there, only its own files go.
      rmSync(status.path, { recursive: true, force: true });
      rmSync(gitDir, { recursive: true, force: true });
      done.push(`removed ${path.relative(root, status.path)}`);
    }
    if (status.branchExists) {
      const tip = (await gitOk(root, ['rev-parse', '--short', `refs/heads/${status.branch}`], 'git rev-parse')).trim();
      await gitOk(root, ['branch', status.unmerged.length > 0 ? '-D' : '-d', status.branch], 'git branch delete');
      done.push(
        status.unmerged.length > 0
          ? `deleted ${status.branch} with ${status.unmerged.length} unmerged commit(s) (it was at ${tip}; git branch ${status.branch} ${tip} brings it back)`
          : `deleted ${status.branch}`,
      );
    }
    return done.join('; ');
  });
}
