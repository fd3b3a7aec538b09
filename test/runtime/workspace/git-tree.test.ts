// The index reader and tree writer the checkpoints use instead of `git write-tree`
// (runtime/workspace/git-index.ts, git-tree.ts): for an index with names that sort differently as
// files and as directories, nested directories, an executable, a symbolic link and a name that is
// not UTF-8, the tree ids are those git writes, in SHA-1 and SHA-256 repositories.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readGitIndex } from '../../../src/runtime/workspace/git-index.js';
import { writeTrees } from '../../../src/runtime/workspace/git-tree.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-git-tree-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...TEST_GIT_IDENTITY } }).trim();

for (const format of ['sha1', 'sha256'] as const) {
  it(`writes the trees git writes (${format})`, () => {
    const ws = path.join(base, format);
    mkdirSync(ws);
    git(ws, 'init', '-q', `--object-format=${format}`);
    for (const dir of ['a', 'a/b', 'a-b', 'c/d/e']) mkdirSync(path.join(ws, dir), { recursive: true });
    for (const file of ['a.txt', 'a/b/c.txt', 'a/x', 'a-b/y', 'a0', 'a-', 'c/d/e/f', 'Z']) writeFileSync(path.join(ws, file), `${file}\n`);
    writeFileSync(Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x6e, 0xe9, 0x2e, 0x74])]), 'a Latin-1 name\n');
    chmodSync(path.join(ws, 'a0'), 0o755);
    symlinkSync('a.txt', path.join(ws, 'link'));
    git(ws, 'add', '-A');
    const entries = readGitIndex(path.join(ws, '.git', 'index'), format === 'sha1' ? 20 : 32)!;
    expect(entries.map((e) => e.path)).toContain('a/b/c.txt');
    const written: string[] = [];
    const id = writeTrees(entries, (body) => {
      const data = Buffer.concat([Buffer.from(`tree ${body.length}\0`), body]);
      written.push(createHash(format).update(data).digest('hex'));
      return written.at(-1)!;
    });
    expect(id).toBe(git(ws, 'write-tree'));
    expect(written).toHaveLength(7); // root, a, a/b, a-b, c, c/d, c/d/e
  });
}

it('reads an index of version 4 (prefix-compressed) as undefined: git writes that tree', () => {
  const ws = path.join(base, 'v4');
  mkdirSync(ws);
  git(ws, 'init', '-q');
  writeFileSync(path.join(ws, 'f'), 'x\n');
  git(ws, '-c', 'index.version=4', 'add', '-A');
  expect(readGitIndex(path.join(ws, '.git', 'index'), 20)).toBeUndefined();
});
