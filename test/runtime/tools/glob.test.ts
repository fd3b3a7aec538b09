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

async function touch(relative: string, base = root): Promise<void> {
  await mkdir(path.dirname(path.join(base, relative)), { recursive: true });
  await writeFile(path.join(base, relative), '');
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-glob-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'huddle-outside-'));
  for (const name of ['src/b.ts', 'src/a.ts', 'src/sub/c.ts', 'README.md', '.env', '.git/HEAD', 'node_modules/x/index.ts', 'pkg/node_modules/y.ts']) {
    await touch(name);
  }
  await touch('secret.ts', outside);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const glob = (pattern: unknown) => registry.run('glob', { pattern }, makeToolContext(root));

describe('glob', () => {
  it('lists matching files sorted, skipping .git and node_modules', async () => {
    expect((await glob('**/*.ts')).content).toBe('src/a.ts\nsrc/b.ts\nsrc/sub/c.ts');
    expect((await glob('src/*.ts')).content).toBe('src/a.ts\nsrc/b.ts');
    expect((await glob('./src/*.ts')).content).toBe('src/a.ts\nsrc/b.ts');
    expect((await glob('**/*')).content).toBe('.env\nREADME.md\nsrc/a.ts\nsrc/b.ts\nsrc/sub/c.ts');
  });

  it('lists everything under a directory name', async () => {
    expect((await glob('src')).content).toBe('src/a.ts\nsrc/b.ts\nsrc/sub/c.ts');
  });

  it('says when nothing matches', async () => {
    expect(await glob('**/*.py')).toEqual({ content: 'no files match **/*.py' });
  });

  it('refuses absolute patterns and patterns with ..', async () => {
    for (const pattern of ['/etc/*', `${outside}/*`]) {
      const result = await glob(pattern);
      expect(result.isError).toBe(true);
      expect(result.content).toContain('use a pattern relative to the workspace root');
    }
    for (const pattern of ['../*', 'src/../../*', '{..,src}/*']) {
      const result = await glob(pattern);
      expect(result.isError, pattern).toBe(true);
      expect(result.content).toContain("leaves the workspace through '..'");
    }
  });

  it('does not list through symlinks that lead outside', async () => {
    await symlink(outside, path.join(root, 'out'));
    const through = await glob('out/*');
    expect(through.isError).toBe(true);
    expect(through.content).toContain("path 'out' is outside the workspace");
    const all = await glob('**/*.ts');
    expect(all.content).not.toContain('secret');
  });

  it('lists at most 1000 files and says how many more there are', async () => {
    await mkdir(path.join(root, 'many'));
    await Promise.all(Array.from({ length: 1010 }, (_, i) => writeFile(path.join(root, 'many', `f${String(i).padStart(4, '0')}.txt`), '')));
    const lines = (await glob('many/*.txt')).content.split('\n');
    expect(lines).toHaveLength(1001);
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines[999]).toBe('many/f0999.txt');
    expect(lines[1000]).toBe('[… and 10 more files; use a narrower pattern]');
  });
});
