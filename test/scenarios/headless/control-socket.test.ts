// Driving a live huddle from another process (docs/contract.md#command-line): `huddle status`, `huddle send`,
// `huddle interrupt` against a headless run, through its control socket; exit 2 when none runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
let live: ChildProcess | undefined;

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-control-');
});
afterEach(async () => {
  if (live && live.exitCode === null) live.kill('SIGKILL');
  live = undefined;
  await fake.close();
  ws.cleanup();
});

/** A headless run in the background; resolves with its exit code and output when it ends. */
function startHeadless(prompt: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_PATH, '-p', prompt], {
    cwd: ws.dir,
    env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live = child;
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Writes `text` to the socket as it is; the answers (JSON lines) it gets before the socket closes. */
function rawExchange(socket: string, text: string): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const connection = connect({ path: socket });
    let received = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (received += chunk));
    connection.on('error', reject);
    connection.on('close', () =>
      resolve(
        received
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown),
      ),
    );
    connection.on('connect', () => connection.write(text));
  });
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const control = (args: string[]) => runCli([...args, '--cwd', ws.dir], { cwd: ws.dir });

describe('the control socket of a live headless run', () => {
  it('answers status, delivers send exactly once from "user", interrupts, and says when none is live', async () => {
    // The lead's first model call hangs: the run is live until it is interrupted.
    fake.script('lead', { kind: 'hang' }, replyText('Got it: the message from outside.'));
    const run = startHeadless('Wait for a message.');
    await fake.waitForRequests(1, 30_000);
    const pointer = path.join(ws.dir, '.team', 'control.json');
    await until('the control socket', () => existsSync(pointer));
    const { socket, pid } = JSON.parse(readFileSync(pointer, 'utf8'));
    expect(pid).toBe(live!.pid);
    // Owner-only: nobody else may drive this team.
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(pointer).mode & 0o777).toBe(0o600);
    // A line that is not a request gets one answer saying why, and the connection ends.
    expect(await rawExchange(socket, 'status please\n')).toEqual([{ ok: false, error: 'the request is not JSON', code: 'usage' }]);

    const status = await control(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout);
    expect(report).toMatchObject({ pid: live!.pid, face: 'headless', workspace: ws.dir });
    expect(report.agents).toEqual([expect.objectContaining({ name: 'lead', role: 'lead', status: 'working', agent: 'huddle', in_turn: true })]);
    const table = await control(['status']);
    expect(table.stdout).toMatch(/^lead\s+lead\s+working/m);

    const unknown = await control(['send', 'nobody', 'hi']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no teammate named 'nobody'");

    const sent = await control(['send', 'lead', 'hello', 'from', 'outside']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^sent to lead \(msg_/);

    const interrupted = await control(['interrupt', 'lead']);
    expect(interrupted.code, interrupted.stderr).toBe(0);
    expect(interrupted.stdout).toBe('interrupted lead\n');

    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Got it: the message from outside.');
    // Delivered once, from the person, as one inbox turn.
    const inbox = readFileSync(path.join(ws.dir, '.team', 'inbox', 'lead.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(inbox).toEqual([expect.objectContaining({ from: 'user', to: 'lead', type: 'message', content: 'hello from outside' })]);
    const lastRequest = fake.requests.filter((r) => r.agent === 'lead').at(-1)!;
    expect(JSON.stringify(lastRequest.body.messages).split('hello from outside').length - 1).toBe(1);

    // The run is over: its pointer is gone, and a client says no huddle is live.
    expect(existsSync(pointer)).toBe(false);
    const none = await control(['status']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no huddle is running in ${ws.dir}`);
  }, 90_000);

  it('exits 2 with one line when no huddle ever ran in the workspace', async () => {
    for (const args of [['status'], ['send', 'lead', 'hi'], ['interrupt', 'lead']]) {
      const result = await control(args);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain('no huddle is running in');
    }
  });

  it('finds a live huddle whose socket path would be too long for a Unix socket', async () => {
    const deep = path.join(ws.dir, 'a'.repeat(60), 'b'.repeat(60));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(deep, { recursive: true });
    fake.script('lead', { kind: 'hang' });
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'wait'], { cwd: deep, env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url }, stdio: 'ignore' });
    live = child;
    const exited = new Promise((resolve) => child.once('close', resolve));
    const pointer = path.join(deep, '.team', 'control.json');
    await until('the control socket', () => existsSync(pointer));
    const { socket } = JSON.parse(readFileSync(pointer, 'utf8'));
    expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(100);
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
    const status = await runCli(['status', '--json', '--cwd', deep]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).workspace).toBe(deep);
    child.kill('SIGTERM');
    await exited;
    expect(existsSync(socket)).toBe(false);
  }, 60_000);
});
