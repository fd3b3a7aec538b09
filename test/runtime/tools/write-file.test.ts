import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';

const registry = new ToolRegistry(coreTools());
let root: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-write-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'huddle-outside-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const write = (input: Record<string, unknown>) => registry.run('write_file', input, makeToolContext(root));

describe('write_file', () => {
  it('creates a file and its parent directories', async () => {
    const result = await write({ path: 'src/deep/a.ts', content: 'export const a = 1;\n' });
    expect(result).toEqual({ content: 'created src/deep/a.ts (1 line)' });
    expect(await readFile(path.join(root, 'src/deep/a.ts'), 'utf8')).toBe('export const a = 1;\n');
  });

  it('overwrites an existing file and counts bytes, not characters', async () => {
    await writeFile(path.join(root, 'a.txt'), 'old content');
    const result = await write({ path: 'a.txt', content: 'é' });
    expect(result).toEqual({ content: 'overwrote a.txt (1 line)' });
    expect(await readFile(path.join(root, 'a.txt'), 'utf8')).toBe('é');
  });

  it('writes empty files', async () => {
    const result = await write({ path: 'empty', content: '' });
    expect(result.content).toBe('created empty (0 lines)');
    expect(await readFile(path.join(root, 'empty'), 'utf8')).toBe('');
  });

  it('refuses to replace a directory', async () => {
    await mkdir(path.join(root, 'dir'));
    const result = await write({ path: 'dir', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('dir is a directory');
  });

  it('says which part of the path is a file when a directory would have to be made in its place', async () => {
    await writeFile(path.join(root, 'notes'), 'keep me\n');
    const result = await write({ path: 'notes/today/a.md', content: 'x' });
    expect(result).toEqual({
      content: 'write_file failed: notes is a file, not a directory, so notes/today/a.md cannot be made; choose another path',
      isError: true,
    });
    expect(await readFile(path.join(root, 'notes'), 'utf8')).toBe('keep me\n');
  });

  it('refuses paths that leave the workspace, through .. or symlinks', async () => {
    await symlink(outside, path.join(root, 'linkdir'));
    await symlink(path.join(outside, 'created-by-link'), path.join(root, 'dangling'));
    for (const requested of ['../escape.txt', 'linkdir/new.txt', 'dangling', path.join(outside, 'abs.txt')]) {
      const result = await write({ path: requested, content: 'x' });
      expect(result.isError, requested).toBe(true);
      expect(result.content).toContain(`path '${requested}' is outside the workspace`);
    }
    expect(existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'created-by-link'))).toBe(false);
    expect(existsSync(path.join(outside, 'abs.txt'))).toBe(false);
  });

  it('rejects input without content', async () => {
    const result = await write({ path: 'a.txt' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^invalid input for write_file: content/);
  });
});
