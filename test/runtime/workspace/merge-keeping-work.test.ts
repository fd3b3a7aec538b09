// mergeKeepingWork (runtime/workspace/merge-keeping-work.ts) on real repositories: a branch merged
// beside the person's uncommitted edits keeps them; a conflict, or a merge that would overwrite an
// uncommitted file, changes nothing at all.
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEST_GIT_IDENTITY, useTestGitIdentity } from '../../helpers/git-identity.js';
import { MergeRefusedError, mergeKeepingWork } from '../../../src/runtime/workspace/merge-keeping-work.js';

useTestGitIdentity();
let root: string;

async function git(...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: root, env: TEST_GIT_IDENTITY })).stdout;
}

/** A branch `pick` from main that changes `file` to `text`, main checked out again. */
async function branchWith(file: string, text: string): Promise<void> {
  await git('switch', '-q', '-c', 'pick');
  writeFileSync(path.join(root, file), text);
  await git('add', file);
  await git('commit', '-q', '-m', `pick: ${file}`);
  await git('switch', '-q', 'main');
}

beforeEach(async () => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-merge-keep-')));
  await git('init', '-q', '-b', 'main');
  writeFileSync(path.join(root, 'a.txt'), 'a\n');
  writeFileSync(path.join(root, 'b.txt'), 'b\n');
  await git('add', '.');
  await git('commit', '-q', '-m', 'initial');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('mergeKeepingWork', () => {
  it('merges beside uncommitted edits and new files, which stay as they were', async () => {
    await branchWith('a.txt', 'a from pick\n');
    writeFileSync(path.join(root, 'b.txt'), 'b edited, not committed\n');
    writeFileSync(path.join(root, 'new.txt'), 'untracked\n');
    const result = await mergeKeepingWork(root, 'pick', 'Merge pick');
    expect(result.into).toBe('main');
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('a from pick\n');
    expect(await git('log', '-1', '--format=%s %p')).toMatch(/^Merge pick \w+ \w+$/);
    expect(readFileSync(path.join(root, 'b.txt'), 'utf8')).toBe('b edited, not committed\n');
    expect(await git('status', '--porcelain')).toBe(' M b.txt\n?? new.txt');
  });

  it('refuses a merge that would overwrite an uncommitted edit, changing nothing', async () => {
    await branchWith('a.txt', 'a from pick\n');
    writeFileSync(path.join(root, 'a.txt'), 'a edited by the person\n');
    const head = await git('rev-parse', 'HEAD');
    const refused = await mergeKeepingWork(root, 'pick', 'Merge pick').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MergeRefusedError);
    expect((refused as MergeRefusedError).message).toMatch(/would overwrite your uncommitted changes in a\.txt; nothing was changed/);
    expect(await git('rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('a edited by the person\n');
  });

  it('refuses a conflicting merge, changing nothing', async () => {
    await branchWith('a.txt', 'a from pick\n');
    writeFileSync(path.join(root, 'a.txt'), 'a on main\n');
    await git('commit', '-q', '-am', 'main: a');
    writeFileSync(path.join(root, 'b.txt'), 'b edited\n');
    const head = await git('rev-parse', 'HEAD');
    const refused = await mergeKeepingWork(root, 'pick', 'Merge pick').catch((error: unknown) => error);
    expect((refused as MergeRefusedError).files).toEqual(['a.txt']);
    expect((refused as Error).message).toMatch(/conflicts in a\.txt; nothing was changed/);
    expect(await git('rev-parse', 'HEAD')).toBe(head);
    expect(await git('status', '--porcelain')).toBe(' M b.txt');
  });

  it('names an untracked file of the person that is in the way as untracked', async () => {
    await branchWith('c.txt', 'c from pick\n');
    writeFileSync(path.join(root, 'c.txt'), "the person's own c\n");
    const refused = await mergeKeepingWork(root, 'pick', 'Merge pick').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MergeRefusedError);
    expect((refused as MergeRefusedError).files).toEqual(['c.txt']);
    expect((refused as Error).message).toMatch(/would overwrite your untracked file c\.txt; nothing was changed/);
    expect(readFileSync(path.join(root, 'c.txt'), 'utf8')).toBe("the person's own c\n");
  });

  it('says why when git cannot move the branch for another reason (the index locked), not that work would be overwritten', async () => {
    await branchWith('a.txt', 'a from pick\n');
    const head = await git('rev-parse', 'HEAD');
    // Another git command at work in the workspace (or one that crashed) holds the index.
    writeFileSync(path.join(root, '.git', 'index.lock'), '');
    const refused = await mergeKeepingWork(root, 'pick', 'Merge pick').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).not.toMatch(/overwrite/);
    expect((refused as Error).message).toMatch(/^merging pick into main failed: .*index\.lock.*; nothing was changed/);
    expect(await git('rev-parse', 'HEAD')).toBe(head);
  });
});
