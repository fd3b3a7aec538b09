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

async function put(relative: string, content: string | Buffer, base = root): Promise<void> {
  await mkdir(path.dirname(path.join(base, relative)), { recursive: true });
  await writeFile(path.join(base, relative), content);
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-grep-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'huddle-outside-'));
  await put('src/a.ts', 'const TODO = 1;\nfunction main() {}\n// todo: later\n');
  await put('src/b.ts', 'export function helper() {}\r\n');
  await put('docs/notes.md', 'main idea\n');
  await put('node_modules/dep/index.js', 'function main() {}\n');
  await put('.git/config', 'function main\n');
  await put('secret.ts', 'function main() { leak }\n', outside);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const grep = (input: Record<string, unknown>, signal?: AbortSignal) => registry.run('grep', input, makeToolContext(root, { signal }));

describe('grep', () => {
  it('finds matches as path:line:text across the workspace', async () => {
    const result = await grep({ pattern: 'function \\w+\\(' });
    expect(result).toEqual({ content: 'src/a.ts:2:function main() {}\nsrc/b.ts:1:export function helper() {}' });
  });

  it('searches a directory or a single file', async () => {
    expect((await grep({ pattern: 'main', path: 'docs' })).content).toBe('docs/notes.md:1:main idea');
    expect((await grep({ pattern: '(?i:todo)', path: 'src/a.ts' })).content).toBe('src/a.ts:1:const TODO = 1;\nsrc/a.ts:3:// todo: later');
  });

  it('says when nothing matches', async () => {
    expect(await grep({ pattern: 'zebra' })).toEqual({ content: 'no matches for /zebra/ in .' });
  });

  it('reports an invalid regex clearly', async () => {
    const result = await grep({ pattern: 'foo(' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^grep failed: invalid regular expression: .*foo\(.*/);
  });

  it('skips binary files and files over 2 MiB', async () => {
    await put('bin/data.bin', Buffer.concat([Buffer.from('main'), Buffer.from([0]), Buffer.from('main')]));
    await put('big/huge.txt', `main\n${'x'.repeat(2 * 1024 * 1024)}`);
    const result = await grep({ pattern: '^main' });
    expect(result.content).toBe('docs/notes.md:1:main idea\n[skipped 1 binary file and 1 file over 2 MiB]');
  });

  it('stops at 500 matches and cuts long lines', async () => {
    await put('many.txt', `${Array.from({ length: 600 }, (_, i) => `hit ${i}`).join('\n')}\n`);
    await put('wide.txt', `hit ${'y'.repeat(1000)}\n`);
    const lines = (await grep({ pattern: 'hit', path: 'many.txt' })).content.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[499]).toBe('many.txt:500:hit 499');
    expect(lines[500]).toBe('[stopped at 500 matches; narrow the pattern or the path]');
    const wide = (await grep({ pattern: 'hit', path: 'wide.txt' })).content;
    expect(wide).toBe(`wide.txt:1:hit ${'y'.repeat(296)}…`);
  });

  it('refuses paths outside the workspace and does not follow links out', async () => {
    await symlink(outside, path.join(root, 'out'));
    await symlink(path.join(outside, 'secret.ts'), path.join(root, 'secret-link.ts'));
    for (const requested of ['..', '../x', 'out', 'secret-link.ts', outside]) {
      const result = await grep({ pattern: 'main', path: requested });
      expect(result.isError, requested).toBe(true);
      expect(result.content).toContain(`path '${requested}' is outside the workspace`);
    }
    const all = await grep({ pattern: 'leak' });
    expect(all.content).toBe('no matches for /leak/ in .');
  });

  it('says when the path does not exist', async () => {
    const result = await grep({ pattern: 'x', path: 'nope' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('no such file or directory: nope; use glob');
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await grep({ pattern: 'main' }, controller.signal);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/\[interrupted\]$/);
  });
});
