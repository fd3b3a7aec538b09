// The settings' `sandbox` section reaches the sandbox, end to end. The network switched off: `huddle -p` with
// `"sandbox": {"network": {"enabled": false}}` in .team/settings.json, an agent (the fake Messages API)
// whose bash command reaches for a server on the host's 127.0.0.1, and nothing reaching it; the same
// run without the setting does reach it (so the probe can tell). A list entry that is no host is one
// line at startup (exit 2), naming the file and the key. `sandbox.hidden` hides a path of the host.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { hasSocat } from '../../../src/runtime/sandbox/status.js';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';

const MARKER = 'hello from the host';
let server: Server;
let port: number;
let fake: FakeApi;
let ws: Workspace;

beforeAll(async () => {
  server = createServer((_req, res) => res.end(`${MARKER}\n`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-network-settings-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

function settings(value: unknown): void {
  mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
  writeFileSync(path.join(ws.dir, '.team', 'settings.json'), JSON.stringify(value));
}

/** One bash call that fetches the host server with bash's /dev/tcp and with curl; what the agent saw. */
async function probe(): Promise<string> {
  // In a script: huddle's command deny-list refuses /dev/tcp on the command line itself.
  const script = `(exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3)\ncurl -s --max-time 5 --noproxy '*' http://127.0.0.1:${port}/\necho probed\n`;
  writeFileSync(path.join(ws.dir, 'probe.sh'), script);
  fake.enqueue(reply(toolUse('bash', { command: 'bash probe.sh' })), replyText('done'));
  const result = await runCli(['-p', 'fetch it'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  const toolResult = fake.requests[1]!.body.messages.at(-1).content.find((b: { type: string }) => b.type === 'tool_result');
  const content = typeof toolResult.content === 'string' ? toolResult.content : JSON.stringify(toolResult.content);
  expect(content).toContain('probed');
  return content;
}

describeSandboxed('the sandbox from the settings', () => {
  it('on by default: the probe reaches the host server', async () => {
    expect(await probe()).toContain(MARKER);
  }, 90_000);

  it('sandbox.network.enabled: false in .team/settings.json: nothing reaches it', async () => {
    settings({ sandbox: { network: { enabled: false } } });
    expect(await probe()).not.toContain(MARKER);
  }, 90_000);

  it('sandbox.hidden in the settings hides a path from commands', async () => {
    writeFileSync(path.join(ws.dir, 'private.txt'), 'PRIVATE 42\n');
    settings({ sandbox: { hidden: [path.join(ws.dir, 'private.txt')] } });
    fake.enqueue(reply(toolUse('bash', { command: 'cat private.txt; echo read' })), replyText('done'));
    const result = await runCli(['-p', 'read it'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    const content = JSON.stringify(fake.requests[1]!.body.messages.at(-1).content);
    expect(content).toContain('read');
    expect(content).not.toContain('PRIVATE 42');
  }, 60_000);

  it.skipIf(!hasSocat() && process.env.CI !== 'true')(
    'with deny: ["localhost"] the proxy refuses 127.1, and its socket directory is gone when huddle exits',
    async () => {
      const tmp = makeWorkspace('huddle-network-tmp-');
      try {
        settings({ sandbox: { network: { deny: ['localhost'] } } });
        writeFileSync(path.join(ws.dir, 'probe.sh'), `curl -s --max-time 5 --noproxy '' -x "$HTTP_PROXY" http://127.1:${port}/\necho probed\n`);
        fake.enqueue(reply(toolUse('bash', { command: 'bash probe.sh' })), replyText('done'));
        const result = await runCli(['-p', 'fetch it'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, TMPDIR: tmp.dir }, timeoutMs: 60_000 });
        expect(result.code, result.stderr).toBe(0);
        const content = JSON.stringify(fake.requests[1]!.body.messages.at(-1).content);
        expect(content).toMatch(/127\.[01.]+ (\(127\.0\.0\.1\) )?is denied by the sandbox network settings \(localhost\)/);
        expect(content).not.toContain(MARKER);
        expect(readdirSync(tmp.dir).filter((name) => name.startsWith('huddle-net-'))).toEqual([]);
      } finally {
        tmp.cleanup();
      }
    },
    90_000,
  );

  it('a list entry that is no host is one line naming the file and the key', async () => {
    settings({ sandbox: { network: { deny: ['localhost', 'http://evil.test/'] } } });
    const result = await runCli(['-p', 'hi'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('huddle: .team/settings.json: sandbox.network.deny[1]: not a host name, *.domain, address or CIDR range (e.g. "10.0.0.0/8")\n');
  }, 60_000);
});
