import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathEscapeError, Workspace } from '../../../src/runtime/workspace/workspace.js';

let base: string;
let root: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'huddle-ws-')));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(root, 'src', 'a.ts'), '');
  await writeFile(path.join(outside, 'secret'), '');
  workspace = new Workspace(root);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function expectEscape(requested: string): void {
  expect(() => workspace.resolve(requested), requested).toThrow(PathEscapeError);
  expect(() => workspace.resolve(requested)).toThrow(`path '${requested}' is outside the workspace (${root})`);
}

describe('Workspace.resolve', () => {
  it('resolves relative and absolute paths inside the root, existing or not', () => {
    expect(workspace.resolve('src/a.ts')).toBe(path.join(root, 'src/a.ts'));
    expect(workspace.resolve(path.join(root, 'src/a.ts'))).toBe(path.join(root, 'src/a.ts'));
    expect(workspace.resolve('new/dir/file.ts')).toBe(path.join(root, 'new/dir/file.ts'));
    expect(workspace.resolve('src/../src/a.ts')).toBe(path.join(root, 'src/a.ts'));
    expect(workspace.resolve('.')).toBe(root);
  });

  it('refuses .. that leaves the root', () => {
    expectEscape('..');
    expectEscape('../outside/secret');
    expectEscape('src/../../outside/secret');
  });

  it('refuses absolute paths outside the root, including a sibling with the same prefix', () => {
    expectEscape('/etc/passwd');
    expectEscape(path.join(outside, 'secret'));
    expectEscape(`${root}-other/file`);
  });

  it('refuses a symlink to /etc and paths through it', async () => {
    await symlink('/etc', path.join(root, 'etc'));
    expectEscape('etc');
    expectEscape('etc/hostname');
    expectEscape('etc/not-there/new-file');
  });

  it('refuses a symlinked directory that points outside', async () => {
    await symlink(outside, path.join(root, 'src', 'out'));
    expectEscape('src/out/secret');
    expectEscape('src/out/new-file');
  });

  it('refuses a dangling symlink that points outside', async () => {
    await symlink(path.join(outside, 'not-yet'), path.join(root, 'dangling'));
    await symlink(path.join(outside, 'missing-dir'), path.join(root, 'dangling-dir'));
    expectEscape('dangling');
    expectEscape('dangling-dir/child');
  });

  it('allows symlinks that point inside, and gives their real target', async () => {
    await symlink('src', path.join(root, 'alias'));
    await symlink(path.join(root, 'src', 'a.ts'), path.join(root, 'a-link.ts'));
    await symlink('src/later.ts', path.join(root, 'dangling-inside'));
    expect(workspace.resolve('alias/a.ts')).toBe(path.join(root, 'src/a.ts'));
    expect(workspace.resolve('a-link.ts')).toBe(path.join(root, 'src/a.ts'));
    expect(workspace.resolve('dangling-inside')).toBe(path.join(root, 'src/later.ts'));
  });

  it('resolves names that do not exist yet through the links on their way, and a name under a file as written', async () => {
    await symlink('src', path.join(root, 'alias'));
    await symlink('src/later', path.join(root, 'dangling-dir'));
    await symlink(outside, path.join(root, 'out-link'));
    expect(workspace.resolve('alias/new/deeper.ts')).toBe(path.join(root, 'src/new/deeper.ts'));
    expect(workspace.resolve('dangling-dir/x/y.ts')).toBe(path.join(root, 'src/later/x/y.ts'));
    expect(workspace.resolve('src/a.ts/under-a-file')).toBe(path.join(root, 'src/a.ts/under-a-file'));
    expectEscape('out-link/new/file.txt');
  });

  it('refuses a symlink loop instead of hanging', async () => {
    await symlink('loop-b', path.join(root, 'loop-a'));
    await symlink('loop-a', path.join(root, 'loop-b'));
    expect(() => workspace.resolve('loop-a/x')).toThrow(/too many levels of symbolic links/);
  });
});

describe('Workspace', () => {
  it('uses the real path of the root and gives paths relative to it', async () => {
    await symlink(root, path.join(base, 'root-link'));
    const viaLink = new Workspace(path.join(base, 'root-link'));
    expect(viaLink.root).toBe(root);
    expect(viaLink.relative(path.join(root, 'src/a.ts'))).toBe('src/a.ts');
    expect(viaLink.relative(root)).toBe('.');
  });
});
