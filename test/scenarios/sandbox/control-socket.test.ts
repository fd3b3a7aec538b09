// The control socket of a live huddle drives the whole team (send as the person, interrupt, run
// teammate tools as anyone), so no sandboxed command may reach it: a real `huddle -p` whose lead
// (auto mode, scripted through the fake API) tries `huddle send`, `huddle status`, and a raw
// connect() to the socket the pointer file names (a read-only bind does not stop connect()).
// Each is refused and nothing reaches anyone's inbox.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { lastToolResults } from '../../helpers/team-harness.js';
import { CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { describeSandboxed, socketProbe } from '../../helpers/sandbox-arena.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-ctlsock-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

describeSandboxed('the control socket, from inside the sandbox', () => {
  it('a sandboxed bash command cannot send, interrupt or act as a teammate through it', async () => {
    const node = JSON.stringify(process.execPath);
    const probes = [
      `${node} ${CLI_PATH} send lead pwned-by-cli --cwd ${ws.dir}; echo "exit=$?"`,
      `${node} ${CLI_PATH} status --cwd ${ws.dir}; echo "exit=$?"`,
      socketProbe({ op: 'send', to: 'lead', text: 'pwned-by-socket' }),
      socketProbe({ op: 'interrupt', agent: 'lead' }),
      socketProbe({ op: 'tool', as: 'lead', tool: 'idle', input: {} }),
    ];
    fake.script('lead', reply(...probes.map((command) => toolUse('bash', { command }))), replyText('done probing'));
    const result = await runCli(['-p', 'Probe the control socket.', '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('done probing');

    const results = lastToolResults(fake.requests.filter((r) => r.agent === 'lead')[1]!);
    expect(results).toHaveLength(probes.length);
    expect(results[0]!.content).toContain('exit=2');
    expect(results[1]!.content).toContain('exit=2');
    for (const [i, probe] of results.slice(2).entries()) {
      expect(probe.content, `probe ${i + 2}`).toContain('REFUSED');
      expect(probe.content, `probe ${i + 2}`).not.toContain('ANSWERED');
    }
    // Nothing was delivered: the lead's inbox (if any) holds no probe's text, and only two requests were made.
    let inbox = '';
    try {
      inbox = readFileSync(path.join(ws.dir, '.team', 'inbox', 'lead.jsonl'), 'utf8');
    } catch {
      // no inbox file: nothing was ever sent to the lead
    }
    expect(inbox).not.toContain('pwned');
    expect(fake.requests.filter((r) => r.agent === 'lead')).toHaveLength(2);
  }, 90_000);
});
