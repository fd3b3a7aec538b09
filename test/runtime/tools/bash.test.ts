import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { sandboxStatus } from '../../../src/runtime/sandbox/index.js';

const registry = new ToolRegistry(coreTools());
let root: string;
const leftovers: number[] = [];

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'huddle-bash-'));
});
afterEach(async () => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(root, { recursive: true, force: true });
});

function bash(command: string, timeout_ms?: number, signal?: AbortSignal) {
  return registry.run('bash', { command, timeout_ms }, makeToolContext(root, { signal }));
}

/** Dead counts as gone even while the process waits as a zombie for its new parent to reap it. */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Host pids of the processes whose command line holds `marker`. Inside the sandbox `$!` and `$$`
 * are pids of its own PID namespace, so tests name their processes instead (`exec -a MARKER`).
 */
function hostPids(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker) && !processGone(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

let markers = 0;
function marker(): string {
  return `huddle-test-${process.pid}-${++markers}-${Date.now()}`;
}

describe('bash', () => {
  it('returns stdout and stderr interleaved, then the exit code', async () => {
    const result = await bash('echo one; echo two >&2; echo three; exit 2');
    expect(result.content).toBe('one\ntwo\nthree\n[exit code 2]');
    expect(result.isError).toBe(true);
  });

  it("starts no shell of huddle's that reads BASH_ENV: the command's own bash reads it once", async () => {
    // Each bash started on the way to the command would source it (a person's BASH_ENV passes into the sandbox).
    const script = path.join(root, 'bash-env.sh');
    await writeFile(script, `echo "sourced by $$" >> ${JSON.stringify(path.join(root, 'sourced'))}\n`);
    const before = process.env.BASH_ENV;
    process.env.BASH_ENV = script;
    try {
      const result = await bash('echo ran');
      expect(result.content).toBe('ran');
    } finally {
      if (before === undefined) delete process.env.BASH_ENV;
      else process.env.BASH_ENV = before;
    }
    expect(readFileSync(path.join(root, 'sourced'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('succeeds on exit code 0 and runs in the workspace root', async () => {
    const result = await bash('pwd');
    expect(result.content).toBe(await realpath(root));
    expect(result.isError).toBe(false);
  });

  it('runs the command as given: syntax errors name it, no extra arguments', async () => {
    const broken = await bash('if then');
    expect(broken.content).toContain("syntax error near unexpected token `then'");
    expect(broken.content).not.toContain('exec');
    expect(broken.content).toMatch(/\[exit code 2\]$/);
    const args = await bash('echo "$# args"');
    expect(args.content).toBe('0 args');
  });

  it('says when there was no output', async () => {
    const result = await bash('true');
    expect(result.content).toBe('(no output)');
  });

  it('closes stdin so that reading it does not wait', async () => {
    const result = await bash('cat; echo done');
    expect(result.content).toBe('done');
  });

  it('does not pass API keys to the command', async () => {
    const saved = { ...process.env };
    process.env.ANTHROPIC_API_KEY = 'sk-ant-secret-1';
    process.env.ANTHROPIC_AUTH_TOKEN = 'secret-token-2';
    process.env.HUDDLE_API_KEY = 'secret-3';
    process.env.HUDDLE_TEST_VISIBLE = 'visible-4';
    // A gateway's headers (often its credential) are huddle's to send, never a command's to read.
    process.env.ANTHROPIC_CUSTOM_HEADERS = 'X-Gateway-Key: gateway-secret-5';
    // So is its address, which may carry a credential.
    process.env.ANTHROPIC_BASE_URL = 'https://gateway.example/v1?token=gateway-secret-6';
    try {
      const result = await bash('env; echo "key=${ANTHROPIC_API_KEY-unset} headers=${ANTHROPIC_CUSTOM_HEADERS-unset} url=${ANTHROPIC_BASE_URL-unset}"');
      expect(result.content).toContain('key=unset headers=unset url=unset');
      expect(result.content).toContain('HUDDLE_TEST_VISIBLE=visible-4');
      // The values themselves (the word alone may be in a path: a checkout named …/secrets).
      for (const value of ['sk-ant-secret-1', 'secret-token-2', 'secret-3', 'gateway-secret-5', 'gateway-secret-6'])
        expect(result.content).not.toContain(value);
    } finally {
      process.env = saved;
    }
  });

  it('caps huge output, keeping the head and the tail', async () => {
    const result = await bash('seq 1 200000');
    expect(result.content.length).toBeLessThan(31_000);
    expect(result.content.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.content).toMatch(/\[… [\d,]+ characters \([\d,]+ lines\) cut from the middle …\]/);
    expect(result.content.endsWith('199999\n200000')).toBe(true);
  });

  it('kills the whole process tree on timeout', async () => {
    const name = marker();
    // Sleeps longer than the test may run: the call returns only because the timeout kills them.
    const result = await bash(`(exec -a ${name} sleep 300) & echo started > started.txt; sleep 300`, 500);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/\[killed after 500 ms timeout\]$/);
    expect(existsSync(path.join(root, 'started.txt'))).toBe(true);
    await waitFor(() => hostPids(name).length === 0, `background sleep ${name} to die`);
  });

  it('escalates to SIGKILL when the tree ignores SIGTERM', async () => {
    const name = marker();
    const result = await bash(`trap '' TERM; (trap '' TERM; exec -a ${name} sleep 300) & echo started > started.txt; wait`, 300);
    expect(result.content).toMatch(/\[killed after 300 ms timeout\]$/);
    expect(existsSync(path.join(root, 'started.txt'))).toBe(true);
    await waitFor(() => hostPids(name).length === 0, `background sleep ${name} to die`);
  });

  it('returns when the shell exits even if a background process keeps the output open', async () => {
    // Sandboxed, the background process ends with the shell (its PID namespace goes); without a
    // sandbox it lives on and the tool stops reading its output once the shell has exited.
    for (const sandbox of ['on', 'off'] as const) {
      const name = marker();
      const saved = process.env.HUDDLE_SANDBOX;
      if (sandbox === 'off') process.env.HUDDLE_SANDBOX = 'off';
      try {
        // Waiting for the background sleep would run into the 20 s timeout and end as killed, not exit 0.
        const result = await bash(`(exec -a ${name} sleep 300) & echo started`, 20_000);
        leftovers.push(...hostPids(name));
        expect(result.content).toContain('started');
        if (sandbox === 'off' || !sandboxStatus().available) expect(result.content).toContain('stopped reading when the shell exited');
        else await waitFor(() => hostPids(name).length === 0, 'the background process to end with the sandbox');
        expect(result.content).not.toMatch(/\[(killed|exit code)/);
        expect(result.isError).toBe(false);
      } finally {
        if (saved === undefined) delete process.env.HUDDLE_SANDBOX;
        else process.env.HUDDLE_SANDBOX = saved;
      }
    }
  });

  it('stops the command when the signal aborts', async () => {
    const shellName = marker();
    const childName = marker();
    const controller = new AbortController();
    // Sleeps longer than the test may run, under a 20 s timeout that would say "killed": only the abort says "[interrupted]".
    const pending = bash(`(exec -a ${childName} sleep 300) & echo started > started.txt; exec -a ${shellName} sleep 300`, 20_000, controller.signal);
    await waitFor(() => existsSync(path.join(root, 'started.txt')) && hostPids(shellName).length > 0, 'the command to start');
    controller.abort();
    const result = await pending;
    expect(result.content).toBe('[interrupted]');
    expect(result.isError).toBe(true);
    await waitFor(() => hostPids(shellName).length === 0 && hostPids(childName).length === 0, 'the shell and its child to die');
  });

  it('does not start a command when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await bash('touch ran', undefined, controller.signal);
    expect(result).toEqual({ content: '[interrupted]', isError: true });
    expect(existsSync(path.join(root, 'ran'))).toBe(false);
  });

  it('refuses timeouts above the maximum and summarizes the command on one line', async () => {
    const result = await bash('true', 700_000);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^invalid input for bash: timeout_ms/);
    expect(registry.summarize('bash', { command: 'echo  a\n  && echo b' })).toBe('echo a && echo b');
  });
});

describe('bash: an interrupted command does not go on', () => {
  it('after the interrupt, nothing later in the command runs', async () => {
    for (let round = 0; round < 5; round++) {
      const controller = new AbortController();
      const pending = bash(`echo started > started-${round}.txt; sleep 30; echo finished > finished-${round}.txt`, 20_000, controller.signal);
      await waitFor(() => existsSync(path.join(root, `started-${round}.txt`)), 'the command to start');
      controller.abort();
      expect((await pending).content).toBe('[interrupted]');
      // The shell's command line holds the command: once no such process is left, it wrote all it will.
      await waitFor(() => hostPids(`finished-${round}.txt`).length === 0, 'the shell to be gone');
      expect(existsSync(path.join(root, `finished-${round}.txt`)), `round ${round}`).toBe(false);
    }
  });
});
