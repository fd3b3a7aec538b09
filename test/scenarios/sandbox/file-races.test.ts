// The file tools against a workspace that changes under them: a process swaps a directory for a
// symlink to a victim directory outside, as fast as it can, while read_file, write_file, edit_file
// and grep run hundreds of times. Not one victim byte may be read or changed. Hard links made to
// outside files are refused; names like `..foo.txt` are inside.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { expectSame, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const registry = new ToolRegistry(coreTools());
const ROUNDS = 300;
const READ_ROUNDS = 1000;
let arena: Arena;
let swapper: ChildProcess | undefined;

beforeEach(() => {
  arena = makeArena('races-');
});
afterEach(async () => {
  if (swapper?.pid !== undefined && swapper.exitCode === null) {
    const gone = new Promise((resolve) => swapper!.once('exit', resolve));
    swapper.kill('SIGKILL');
    await gone;
  }
  swapper = undefined;
  arena.cleanup();
});

const run = (name: string, input: Record<string, unknown>) => registry.run(name, input, makeToolContext(arena.ws));

/** Swaps ws/d between a real directory and a symlink to the victim until killed; resolves once it has swapped. */
async function startSwapping(): Promise<void> {
  const d = path.join(arena.ws, 'd');
  mkdirSync(d);
  writeFileSync(path.join(d, 'secret.txt'), 'workspace copy\n');
  writeFileSync(path.join(d, 'keep.txt'), 'workspace keep\n');
  const marker = path.join(arena.base, 'swapping');
  const script = `cd ${JSON.stringify(arena.ws)}; n=0; while true; do mv d d.real; ln -s ${JSON.stringify(arena.victim)} d; n=$((n+1)); [ $n = 20 ] && touch ${JSON.stringify(marker)}; rm d; mv d.real d; done`;
  swapper = spawn('bash', ['-c', script], { stdio: 'ignore' });
  while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('file tools while a directory is swapped for a symlink out of the workspace', () => {
  it('read_file and grep never read a victim byte', async () => {
    await startSwapping();
    let refused = 0;
    for (let i = 0; i < READ_ROUNDS; i++) {
      const read = await run('read_file', { path: 'd/secret.txt' });
      expect(read.content).not.toContain('VICTIM SECRET');
      if (read.isError) refused++;
      if (i % 10 === 0) expect((await run('grep', { pattern: 'SECRET|copy', path: 'd' })).content).not.toContain('VICTIM');
    }
    // The race was real: some calls met the symlink and were refused.
    expect(refused).toBeGreaterThan(0);
  });

  it('write_file and edit_file never change a victim byte', async () => {
    const before = arena.snapshot();
    await startSwapping();
    let written = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const write = await run('write_file', { path: `d/keep.txt`, content: `workspace keep ${i}\n` });
      if (!write.isError) written++;
      await run('write_file', { path: `d/new-${i}.txt`, content: 'new\n' });
      await run('edit_file', { path: 'd/secret.txt', old_text: 'VICTIM SECRET 42', new_text: 'edited' });
      await run('write_file', { path: `d/sub-${i}/x.txt`, content: 'deep\n' });
    }
    expect(written).toBeGreaterThan(0);
    swapper?.kill('SIGKILL');
    expectSame(arena.snapshot(), before, 'the victim');
  });
});

describe('hard links', () => {
  it('refuses reading or writing a file whose other link is outside; a file linked only inside reads', async () => {
    linkSync(path.join(arena.victim, 'secret.txt'), path.join(arena.ws, 'linked.txt'));
    const before = arena.snapshot();
    const read = await run('read_file', { path: 'linked.txt' });
    expect(read.isError).toBe(true);
    expect(read.content).toMatch(/has 2 hard links and not all of them are inside the workspace/);
    const write = await run('write_file', { path: 'linked.txt', content: 'pwned\n' });
    expect(write.content).toMatch(/has 2 hard links; writing it would split them/);
    const edit = await run('edit_file', { path: 'linked.txt', old_text: 'VICTIM', new_text: 'pwned' });
    expect(edit.isError).toBe(true);
    expect((await run('grep', { pattern: 'VICTIM' })).content).not.toContain('VICTIM SECRET');
    expectSame(arena.snapshot(), before, 'the victim');

    writeFileSync(path.join(arena.ws, 'a.txt'), 'linked inside\n');
    linkSync(path.join(arena.ws, 'a.txt'), path.join(arena.ws, 'b.txt'));
    expect((await run('read_file', { path: 'b.txt' })).content).toContain('linked inside');
  });
});

describe('writes', () => {
  it('replace the file whole (atomically), keep its mode, and allow names that start with two dots', async () => {
    const file = path.join(arena.ws, 'run.sh');
    writeFileSync(file, '#!/bin/sh\necho one\n', { mode: 0o755 });
    expect((await run('edit_file', { path: 'run.sh', old_text: 'one', new_text: 'two' })).isError).toBeFalsy();
    expect(statSync(file).mode & 0o777).toBe(0o755);
    expect(readFileSync(file, 'utf8')).toBe('#!/bin/sh\necho two\n');
    expect((await run('write_file', { path: '..foo.txt', content: 'dots\n' })).content).toBe('created ..foo.txt (1 line)');
    expect((await run('read_file', { path: '..foo.txt' })).content).toContain('dots');
    expect((await run('write_file', { path: '../outside.txt', content: 'x' })).content).toContain('is outside the workspace');
  });
});

describe('grep with a pattern that backtracks without end', () => {
  it('is stopped by its time limit while the process stays responsive', async () => {
    writeFileSync(path.join(arena.ws, 'evil.txt'), `${'a'.repeat(42)}!\n`);
    const saved = process.env.HUDDLE_REGEX_TIMEOUT_MS;
    process.env.HUDDLE_REGEX_TIMEOUT_MS = '500';
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const result = await run('grep', { pattern: '(a+)+$' });
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/ran for more than 500 ms and was stopped; it probably backtracks/);
      // The event loop kept running meanwhile (a signal handler would have too).
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
      if (saved === undefined) delete process.env.HUDDLE_REGEX_TIMEOUT_MS;
      else process.env.HUDDLE_REGEX_TIMEOUT_MS = saved;
    }
    expect((await run('grep', { pattern: 'a+!' })).content).toBe(`evil.txt:1:${'a'.repeat(42)}!`);
  });
});
