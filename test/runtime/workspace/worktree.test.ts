// Teammate worktrees with real git in temp repositories: create and reuse, status and diff,
// merge (a conflict is aborted with nothing lost on either side), and guarded removal.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestGitIdentity } from '../../helpers/git-identity.js';
import {
  ensureWorktree,
  listWorktreeNames,
  MergeConflictError,
  mergeWorktree,
  NOT_A_REPO_MESSAGE,
  removeWorktree,
  worktreeDiff,
  worktreePath,
  worktreeStatus,
} from '../../../src/runtime/workspace/worktree.js';

useTestGitIdentity();

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'huddle-wt-')));
  dirs.push(dir);
  return dir;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd })).stdout;
}

/** A repository on `main` with one commit holding f.txt. */
async function repo(): Promise<string> {
  const root = tempDir();
  await git(root, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(root, 'f.txt'), 'original\n');
  await git(root, 'add', 'f.txt');
  await git(root, 'commit', '-q', '-m', 'initial');
  return root;
}

async function commitIn(dir: string, file: string, content: string, message: string): Promise<void> {
  writeFileSync(path.join(dir, file), content);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', message);
}

async function mergeInProgress(root: string): Promise<boolean> {
  const result = await execa('git', ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { cwd: root, reject: false });
  return result.exitCode === 0;
}

describe('teammate worktrees', () => {
  it('needs a git repository with a commit, and says so', async () => {
    const plain = tempDir();
    await expect(ensureWorktree(plain, 'alice')).rejects.toThrow(NOT_A_REPO_MESSAGE);
    await git(plain, 'init', '-q', '-b', 'main');
    await expect(ensureWorktree(plain, 'alice')).rejects.toThrow(NOT_A_REPO_MESSAGE);
    expect(existsSync(path.join(plain, '.team', 'worktrees'))).toBe(false);
    await expect(mergeWorktree(plain, 'alice')).rejects.toThrow(NOT_A_REPO_MESSAGE);
  });

  it('creates the worktree on huddle/<name> from HEAD, keeps it out of the main status, and reuses it', async () => {
    const root = await repo();
    const info = await ensureWorktree(root, 'alice');
    expect(info).toMatchObject({ branch: 'huddle/alice', relativePath: path.join('.team', 'worktrees', 'alice'), created: true });
    expect(info.workspace.root).toBe(worktreePath(root, 'alice'));
    expect(readFileSync(path.join(info.path, 'f.txt'), 'utf8')).toBe('original\n');
    expect(await git(info.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('huddle/alice');
    expect(await git(root, 'rev-parse', 'huddle/alice')).toBe(await git(root, 'rev-parse', 'main'));
    // Not an untracked embedded repository in the main workspace.
    expect(await git(root, 'status', '--porcelain')).toBe('');

    writeFileSync(path.join(info.path, 'work.txt'), 'in progress\n');
    const again = await ensureWorktree(root, 'alice');
    expect(again.created).toBe(false);
    expect(readFileSync(path.join(again.path, 'work.txt'), 'utf8')).toBe('in progress\n');

    await expect(ensureWorktree(root, '../evil')).rejects.toThrow(/not a teammate name/);

    // Deleted by hand after a commit: made again on the same branch, its commits intact.
    await git(again.path, 'add', '-A');
    await git(again.path, 'commit', '-q', '-m', 'kept');
    rmSync(again.path, { recursive: true, force: true });
    const remade = await ensureWorktree(root, 'alice');
    expect(remade.created).toBe(true);
    expect(readFileSync(path.join(remade.path, 'work.txt'), 'utf8')).toBe('in progress\n');
    expect(await git(remade.path, 'log', '-1', '--format=%s')).toBe('kept');
  });

  it('gives a workspace that is a subdirectory of its repository the same subdirectory of the worktree', async () => {
    const top = await repo();
    const root = path.join(top, 'sub');
    mkdirSync(root);
    const info = await ensureWorktree(root, 'bob');
    expect(info.path).toBe(path.join(root, '.team', 'worktrees', 'bob'));
    expect(info.workspace.root).toBe(path.join(info.path, 'sub'));
    expect(existsSync(path.join(info.path, 'f.txt'))).toBe(true);
  });

  it('reports status and the diff against the base: commits, uncommitted edits and new files', async () => {
    const root = await repo();
    const { path: dir } = await ensureWorktree(root, 'alice');
    await commitIn(dir, 'f.txt', 'original\ncommitted line\n', 'alice: add a line');
    writeFileSync(path.join(dir, 'f.txt'), 'original\ncommitted line\nuncommitted line\n');
    writeFileSync(path.join(dir, 'new.txt'), 'brand new\n');

    const status = await worktreeStatus(root, 'alice');
    expect(status).toMatchObject({ exists: true, branchExists: true, base: 'main' });
    expect(status.uncommitted.sort()).toEqual(['f.txt', 'new.txt']);
    expect(status.unmerged).toHaveLength(1);
    expect(status.unmerged[0]).toMatch(/ alice: add a line$/);

    const { text } = await worktreeDiff(root, 'alice');
    const committed = text.indexOf('+committed line');
    const uncommitted = text.indexOf('+uncommitted line');
    expect(committed).toBeGreaterThan(0);
    expect(uncommitted).toBeGreaterThan(committed);
    expect(text).toContain('+brand new');
    expect(text).toContain('# committed on huddle/alice, against main (1 unmerged commit)');
    await expect(worktreeDiff(root, 'nobody')).rejects.toThrow(/'nobody' has no worktree or huddle\/nobody branch/);
  });

  it('merges with a merge commit, only from a clean workspace, and says when there is nothing to merge', async () => {
    const root = await repo();
    const { path: dir } = await ensureWorktree(root, 'alice');
    await commitIn(dir, 'a.txt', 'from alice\n', 'alice work');
    writeFileSync(path.join(dir, 'scratch.txt'), 'not committed\n');

    writeFileSync(path.join(root, 'f.txt'), 'edited by the person\n');
    await expect(mergeWorktree(root, 'alice')).rejects.toThrow(/the workspace has uncommitted changes \(f\.txt\); commit or stash them first/);
    expect(readFileSync(path.join(root, 'f.txt'), 'utf8')).toBe('edited by the person\n');
    await git(root, 'checkout', '--', 'f.txt');

    const result = await mergeWorktree(root, 'alice');
    expect(result.message).toMatch(/^merged huddle\/alice into main \(1 commit\); alice has uncommitted changes in its worktree \(scratch\.txt\)/);
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('from alice\n');
    expect((await git(root, 'log', '-1', '--format=%P')).split(' ')).toHaveLength(2);
    expect((await mergeWorktree(root, 'alice')).message).toMatch(/^nothing to merge: huddle\/alice has no commits that main lacks/);
  });

  it('aborts a conflicting merge: the files are named, both branches keep their commits, the workspace is clean', async () => {
    const root = await repo();
    const alice = await ensureWorktree(root, 'alice');
    const bob = await ensureWorktree(root, 'bob');
    await commitIn(alice.path, 'f.txt', 'alice version\n', 'alice edit');
    await commitIn(bob.path, 'f.txt', 'bob version\n', 'bob edit');
    await commitIn(bob.path, 'g.txt', 'bob only\n', 'bob second');

    await mergeWorktree(root, 'alice');
    const before = await git(root, 'rev-parse', 'HEAD');
    const error = await mergeWorktree(root, 'bob').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MergeConflictError);
    expect((error as MergeConflictError).files).toEqual(['f.txt']);
    expect((error as MergeConflictError).message).toMatch(/^merging huddle\/bob into main conflicts in f\.txt; the merge was aborted/);
    expect((error as MergeConflictError).details).toContain('CONFLICT');

    expect(await mergeInProgress(root)).toBe(false);
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect(await git(root, 'rev-parse', 'HEAD')).toBe(before);
    expect(readFileSync(path.join(root, 'f.txt'), 'utf8')).toBe('alice version\n');
    expect(existsSync(path.join(root, 'g.txt'))).toBe(false);
    expect(await git(root, 'log', '--format=%s', 'huddle/bob')).toMatch(/^bob second\nbob edit\n/);
    expect(readFileSync(path.join(bob.path, 'f.txt'), 'utf8')).toBe('bob version\n');
    expect((await worktreeStatus(root, 'bob')).unmerged).toHaveLength(2);
  });

  it('removes only what is safe to remove, unless forced (and names the dropped commit)', async () => {
    const root = await repo();
    const { path: dir } = await ensureWorktree(root, 'alice');
    writeFileSync(path.join(dir, 'wip.txt'), 'work in progress\n');
    await expect(removeWorktree(root, 'alice')).rejects.toThrow(/alice's worktree has uncommitted changes \(wip\.txt\)/);
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'wip');
    await expect(removeWorktree(root, 'alice')).rejects.toThrow(/huddle\/alice has 1 commit not merged into main; \/merge alice first/);
    expect(existsSync(path.join(dir, 'wip.txt'))).toBe(true);

    const tip = await git(root, 'rev-parse', '--short', 'huddle/alice');
    const message = await removeWorktree(root, 'alice', { force: true });
    expect(message).toContain(`it was at ${tip}; git branch huddle/alice ${tip} brings it back`);
    expect(existsSync(dir)).toBe(false);
    expect(await git(root, 'branch', '--list', 'huddle/*')).toBe('');
    expect(await git(root, 'cat-file', '-t', tip)).toBe('commit');

    // Merged work goes without --force, branch included.
    const bob = await ensureWorktree(root, 'bob');
    await commitIn(bob.path, 'b.txt', 'bob\n', 'bob work');
    await mergeWorktree(root, 'bob');
    expect(await removeWorktree(root, 'bob')).toBe('removed .team/worktrees/bob; deleted huddle/bob');
    expect(await listWorktreeNames(root)).toEqual([]);
    await expect(removeWorktree(root, 'bob')).rejects.toThrow(/has no worktree/);
  });
});
