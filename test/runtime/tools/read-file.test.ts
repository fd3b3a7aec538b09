import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-read-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'huddle-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const read = (input: Record<string, unknown>) => registry.run('read_file', input, makeToolContext(root));

async function writeLines(name: string, count: number): Promise<void> {
  const lines = Array.from({ length: count }, (_, i) => `line ${i + 1}`);
  await writeFile(path.join(root, name), `${lines.join('\n')}\n`);
}

describe('read_file', () => {
  it('numbers lines like cat -n', async () => {
    await writeFile(path.join(root, 'a.txt'), 'alpha\n\tbeta\n');
    const result = await read({ path: 'a.txt' });
    expect(result).toEqual({ content: '     1\talpha\n     2\t\tbeta' });
  });

  it('reads a page at a time with offset and limit', async () => {
    await writeLines('big.txt', 5400);
    const first = await read({ path: 'big.txt' });
    const firstLines = first.content.split('\n');
    expect(firstLines).toHaveLength(2001);
    expect(firstLines[0]).toBe('     1\tline 1');
    expect(firstLines[1999]).toBe('  2000\tline 2000');
    expect(firstLines[2000]).toBe('[lines 1-2000 of 5400; call again with offset 2001 to read more]');

    const page = await read({ path: 'big.txt', offset: 2001, limit: 3 });
    expect(page.content).toBe(
      '  2001\tline 2001\n  2002\tline 2002\n  2003\tline 2003\n' + '[lines 2001-2003 of 5400; call again with offset 2004 to read more]',
    );

    const end = await read({ path: 'big.txt', offset: 5399 });
    expect(end.content).toBe('  5399\tline 5399\n  5400\tline 5400\n[lines 5399-5400 of 5400]');
  });

  it('refuses an offset past the end and a zero offset', async () => {
    await writeLines('short.txt', 3);
    const past = await read({ path: 'short.txt', offset: 10 });
    expect(past.isError).toBe(true);
    expect(past.content).toContain('offset 10 is past the end of short.txt, which has 3 lines');
    const zero = await read({ path: 'short.txt', offset: 0 });
    expect(zero.isError).toBe(true);
    expect(zero.content).toMatch(/^invalid input for read_file: offset/);
  });

  it('cuts very long lines and hides the CR of CRLF line ends', async () => {
    await writeFile(path.join(root, 'long.txt'), `${'x'.repeat(5000)}\r\nshort\r\n`);
    const result = await read({ path: 'long.txt' });
    const [first, second] = result.content.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)}… [line cut, 5000 characters]`);
    expect(second).toBe('     2\tshort');
  });

  it('says when a file is empty', async () => {
    await writeFile(path.join(root, 'empty.txt'), '');
    const result = await read({ path: 'empty.txt' });
    expect(result).toEqual({ content: 'empty.txt is empty (0 bytes)' });
  });

  it('refuses directories, binary files and missing files with a hint', async () => {
    await mkdir(path.join(root, 'dir'));
    await writeFile(path.join(root, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x47]));
    const dir = await read({ path: 'dir' });
    expect(dir).toEqual({ content: 'read_file failed: dir is a directory; use glob to list its files', isError: true });
    const binary = await read({ path: 'image.bin' });
    expect(binary.isError).toBe(true);
    expect(binary.content).toContain('image.bin is a binary file');
    const missing = await read({ path: 'nope/missing.ts' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('file not found: nope/missing.ts; use glob');
  });

  it('reads absolute paths inside the workspace', async () => {
    await writeFile(path.join(root, 'a.txt'), 'inside\n');
    const result = await read({ path: path.join(root, 'a.txt') });
    expect(result.content).toBe('     1\tinside');
  });

  it('refuses paths that leave the workspace', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    await symlink(outside, path.join(root, 'linkdir'));
    for (const requested of [
      '../x',
      `../${path.basename(outside)}/secret.txt`,
      path.join(outside, 'secret.txt'),
      'link.txt',
      'linkdir/secret.txt',
      '/etc/hostname',
    ]) {
      const result = await read({ path: requested });
      expect(result.isError, requested).toBe(true);
      expect(result.content, requested).toContain(`path '${requested}' is outside the workspace`);
      expect(result.content).not.toContain('top secret');
    }
  });

  it('follows symlinks that stay inside the workspace', async () => {
    await writeFile(path.join(root, 'real.txt'), 'real\n');
    await symlink('real.txt', path.join(root, 'alias.txt'));
    const result = await read({ path: 'alias.txt' });
    expect(result.content).toBe('     1\treal');
  });
});
