// A huddle leaves no sockets behind: the network filter's proxy socket and the control socket
// (with its pointer) are gone after a run, and what a run killed with SIGKILL mid-turn left (its
// proxy and control sockets, and an older huddle's /tmp/huddle-net-* directory) is swept by the
// next run, in another workspace. The runtime and temp directories are the test's own
// (XDG_RUNTIME_DIR, TMPDIR), so other huddles on the machine are neither seen nor touched.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH, runCli } from '../../helpers/run-cli.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

let fake: FakeApi;
let arena: Arena;
let runtime: string;
let tmp: string;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('leftovers-');
  // Short paths: a Unix socket's path has room for ~100 bytes.
  runtime = mkdtempSync('/tmp/hlo-');
  tmp = mkdtempSync('/tmp/hlt-');
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
  rmSync(runtime, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
});

function workspaceWithFilter(name: string): string {
  const ws = path.join(arena.base, name);
  mkdirSync(path.join(ws, '.team'), { recursive: true });
  // An allow-list: every sandboxed command goes through the filtering proxy's socket.
  writeFileSync(path.join(ws, '.team', 'settings.json'), JSON.stringify({ sandbox: { network: { allow: ['example.com'] } } }));
  return ws;
}

function env(): Record<string, string> {
  return { ANTHROPIC_BASE_URL: fake.url, XDG_RUNTIME_DIR: runtime, TMPDIR: tmp };
}

function sockets(): string[] {
  const dir = path.join(runtime, 'huddle');
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.sock')) : [];
}

function legacyDirs(): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith('huddle-net-'));
}

const proxied = () => reply(toolUse('bash', { command: 'echo "proxy=$HTTPS_PROXY"' }));

describeSandboxed('no sockets left behind', () => {
  it('after a run: no proxy socket, no control socket, no pointer', async () => {
    const ws = workspaceWithFilter('ws');
    fake.enqueue(proxied(), replyText('done'));
    const result = await runCli(['-p', 'run it', '--trust'], { cwd: ws, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify(fake.requests[1]!.body.messages.at(-1))).toContain('proxy=http://127.0.0.1:3128');
    expect(sockets()).toEqual([]);
    expect(legacyDirs()).toEqual([]);
    expect(existsSync(path.join(ws, '.team', 'control.json'))).toBe(false);
  });

  it('what a run killed mid-turn left is swept by the next run, in another workspace', { timeout: 60_000 }, async () => {
    const killedWs = workspaceWithFilter('killed');
    fake.respond((request) => (request.body.messages.length === 1 && request.agent === 'lead' ? proxied() : { kind: 'hang' }));
    const child = spawn(process.execPath, [CLI_PATH, '-p', 'run it', '--trust'], { cwd: killedWs, env: { ...baseEnv(), ...env() }, stdio: 'ignore' });
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    // The second call means the command ran through the proxy; the turn hangs there.
    await fake.waitForRequests(2, 30_000);
    child.kill('SIGKILL');
    await closed;
    const left = sockets();
    expect(
      left.some((name) => name.startsWith(`net-${child.pid}-`)),
      left.join(' '),
    ).toBe(true);
    expect(
      left.some((name) => name.startsWith('control-')),
      left.join(' '),
    ).toBe(true);
    // An older huddle's proxy directory, its socket long dead.
    mkdirSync(path.join(tmp, 'huddle-net-old123'));
    writeFileSync(path.join(tmp, 'huddle-net-old123', 'proxy.sock'), '');

    const nextWs = workspaceWithFilter('next');
    fake.respond((request) => (request.body.messages.length === 1 ? proxied() : replyText('done')));
    const result = await runCli(['-p', 'run it', '--trust'], { cwd: nextWs, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(sockets()).toEqual([]);
    expect(legacyDirs()).toEqual([]);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`after ${signal} mid-turn: nothing left either`, { timeout: 60_000 }, async () => {
      const ws = workspaceWithFilter(signal);
      fake.respond((request) => (request.body.messages.length === 1 && request.agent === 'lead' ? proxied() : { kind: 'hang' }));
      const child = spawn(process.execPath, [CLI_PATH, '-p', 'run it', '--trust'], { cwd: ws, env: { ...baseEnv(), ...env() }, stdio: 'ignore' });
      const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      await fake.waitForRequests(2, 30_000);
      expect(sockets().some((name) => name.startsWith(`net-${child.pid}-`))).toBe(true);
      child.kill(signal);
      expect(await closed).toBe(130);
      expect(sockets()).toEqual([]);
      expect(existsSync(path.join(ws, '.team', 'control.json'))).toBe(false);
    });
  }
});
