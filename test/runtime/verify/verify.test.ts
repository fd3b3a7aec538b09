import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { plainSpawn, type SpawnLike } from '../../../src/runtime/process/spawn.js';
import { runVerify, verifyCommandFor, verifyFailureMessage } from '../../../src/runtime/verify/verify.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function workspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'huddle-verify-'));
  dirs.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('verify gates', () => {
  it('passes on exit 0, in the given workspace, through the injected spawn', async () => {
    const cwd = workspace();
    const calls: string[][] = [];
    const spawn: SpawnLike = (command, args, options) => {
      calls.push([command, ...args, String(options.cwd)]);
      return plainSpawn(command, args, options);
    };
    const result = await runVerify({ command: 'pwd; echo out; echo err >&2; true', cwd, spawn });
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false });
    expect(result.output).toBe(`${cwd}\nout\nerr\n`);
    expect(result.summary).toMatch(/^verify passed: pwd; echo out; echo err >&2; true \(exit 0, \d+( ms| s|\.\d s)\)$/);
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toBe('bash');
    expect(calls[0]!.at(-1)).toBe(cwd);
  });

  it('fails with the head and tail of a long output, for the agent to act on', async () => {
    const cwd = workspace();
    const result = await runVerify({
      command: 'echo FIRST; for i in $(seq 1 5000); do echo "line $i of noise"; done; echo "1 test failed: expected 2, got 3"; exit 1',
      cwd,
      maxChars: 2_000,
    });
    expect(result.ok).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(result.output.length).toBeLessThanOrEqual(2_000);
    expect(result.output).toMatch(/^FIRST\n/);
    expect(result.output).toContain('1 test failed: expected 2, got 3');
    expect(result.output).toMatch(/characters \([\d,]+ lines\) cut from the middle/);
    const message = verifyFailureMessage(4, result);
    expect(message).toMatch(
      /^Task #4 was not completed: verify failed: .* \(exit 1, .*\)\. Fix what fails and update the task again\.\nIts output \(head and tail\):\nFIRST/,
    );
  });

  it('kills the command and everything it started when the timeout passes, or when interrupted', async () => {
    const cwd = workspace();
    const timed = await runVerify({ command: 'sleep 300', cwd, timeoutMs: 200 });
    expect(timed).toMatchObject({ ok: false, timedOut: true });
    expect(timed.summary).toContain('killed after the 200 ms timeout');

    // The tree: a background grandchild must die with the command (waited on, not timed).
    const pidFile = path.join(cwd, 'bg.pid');
    const abort = new AbortController();
    const pending = runVerify({ command: `sleep 300 & echo $! > ${pidFile}; wait`, cwd, signal: abort.signal });
    await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8')).toMatch(/^\d+\n$/), { timeout: 20_000, interval: 20 });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    abort.abort();
    expect(await pending).toMatchObject({ ok: false, interrupted: true });
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 20_000, interval: 20 });
  });

  it('stops when interrupted, and says a missing command plainly', async () => {
    const cwd = workspace();
    const abort = new AbortController();
    const pending = runVerify({ command: 'echo started; sleep 300', cwd, signal: abort.signal });
    abort.abort();
    const result = await pending;
    expect(result).toMatchObject({ ok: false, interrupted: true });
    expect(result.summary).toContain('(interrupted)');

    const missing = await runVerify({ command: 'no-such-verify-tool --all', cwd });
    expect(missing.ok).toBe(false);
    expect(missing.exitCode).toBe(127);
    expect(missing.output).toContain('no-such-verify-tool: command not found');
  });

  it("takes the task's command, else the role's, else the settings default", () => {
    const settings = { command: 'npm test', roles: { tester: 'npm run test:all' } };
    expect(verifyCommandFor({ verify: 'make check' }, 'tester', settings)).toBe('make check');
    expect(verifyCommandFor({}, 'tester', settings)).toBe('npm run test:all');
    expect(verifyCommandFor({}, 'coder', settings)).toBe('npm test');
    expect(verifyCommandFor({ verify: '  ' }, undefined, undefined)).toBeUndefined();
  });
});
