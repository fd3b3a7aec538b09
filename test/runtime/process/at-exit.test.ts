// One 'exit' listener for all of huddle's cleanups (src/runtime/process/at-exit.ts): a team with many parts
// open never reaches Node's limit of ten listeners, whose warning would print over the console.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { atExit } from '../../../src/runtime/process/at-exit.js';

const MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../../src/runtime/process/at-exit.ts')).href;

describe('atExit', () => {
  it('adds one exit listener however many parts ask, and none again after they cancel', () => {
    const cancels = [atExit(() => undefined)];
    const before = process.listenerCount('exit');
    for (let i = 0; i < 20; i++) cancels.push(atExit(() => undefined));
    expect(process.listenerCount('exit')).toBe(before);
    for (const cancel of cancels) cancel();
    cancels.push(atExit(() => undefined));
    expect(process.listenerCount('exit')).toBe(before);
    for (const cancel of cancels) cancel();
  });

  it('runs what was asked at exit, in order, past one that throws, and not what was cancelled', () => {
    // A process of its own: its exit is the real one (process.exit with work still registered).
    const script = `
      const { atExit } = await import(${JSON.stringify(MODULE)});
      atExit(() => process.stdout.write('first\\n'));
      atExit(() => { throw new Error('broken cleanup'); });
      const cancel = atExit(() => process.stdout.write('cancelled\\n'));
      atExit(() => process.stdout.write('last\\n'));
      cancel();
      process.exit(3);
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '--no-warnings=ExperimentalWarning', '-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stdout).toBe('first\nlast\n');
  });
});
