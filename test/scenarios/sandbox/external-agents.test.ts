// External teammates run in the OS sandbox like the commands of huddle's own agents: the real
// pinned Claude Code CLI (auto mode, scripted through the fake Messages API) and a program in a
// PTY try to write outside their workspace, into a victim directory, into the main checkout from
// their own clone, into the team's state; they go looking for huddle's key; they try to reach the
// team through huddle's control socket or another agent's channel. Every victim byte stays, no
// request carries the key, nothing is delivered that should not be — while their own channel
// works, as them alone, and they write their own workspace and config directory.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { ExternalTeammate } from '../../../src/agents/external/external-teammate.js';
import { agentStateDir, configureSandbox } from '../../../src/runtime/sandbox/index.js';
import { hasSocat } from '../../../src/runtime/sandbox/status.js';
import { ensureWorktree } from '../../../src/runtime/workspace/worktree.js';
import { handleControl } from '../../../src/session/control-intents.js';
import { ControlServer } from '../../../src/session/control-server.js';
import { reply, replyText, toolUse } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { useTestGitIdentity } from '../../helpers/git-identity.js';
import { CLI_PATH } from '../../helpers/run-cli.js';
import { lastToolResults, openTeamHarness, TEST_API_KEY, type TeamHarness } from '../../helpers/team-harness.js';
import { describeSandboxed, expectSame, makeArena, shellQuote, snapshotTree, socketProbe, type Arena } from '../../helpers/sandbox-arena.js';
import { trustWorkspace } from '../../helpers/trust.js';

useTestGitIdentity();
const NODE = JSON.stringify(process.execPath);
const KEY_SPELLINGS = [TEST_API_KEY, Buffer.from(TEST_API_KEY).toString('base64').slice(0, 24), Buffer.from(TEST_API_KEY).toString('hex')];

let h: TeamHarness;
let arena: Arena;
const savedCli = process.env.HUDDLE_CLI;

beforeEach(async () => {
  process.env.HUDDLE_CLI = CLI_PATH;
  arena = makeArena('external-');
  h = await openTeamHarness({ env: { HUDDLE_PERMISSION_MODE: 'auto' } });
  mkdirSync(path.join(h.root, '.team'), { recursive: true });
  writeFileSync(
    path.join(h.root, '.team', 'settings.json'),
    JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN, env: claudeCodeEnv(`${h.root}-home`) } } }),
  );
  trustWorkspace(h.root);
});
afterEach(async () => {
  await h.close();
  rmSync(`${h.root}-home`, { recursive: true, force: true });
  arena.cleanup();
  if (savedCli === undefined) delete process.env.HUDDLE_CLI;
  else process.env.HUDDLE_CLI = savedCli;
});

/** The Bash calls of a scripted Claude Code turn. */
const bashCalls = (commands: string[]) => commands.map((command) => toolUse('Bash', { command, description: 'probe' }));

/** What each of the agent's tool calls returned, in the order of the calls (Claude Code may run read-only ones at once). */
function resultsOf(agent: string): Array<{ ok: boolean; content: string }> {
  const results = new Map(
    h.events.filter((e) => e.agent === agent && e.type === 'tool_result').map((e) => [e.id, { ok: e.ok === true, content: String(e.content) }]),
  );
  return h.events.filter((e) => e.agent === agent && e.type === 'tool_call' && results.has(e.id)).map((e) => results.get(e.id)!);
}

function everyInbox(): string {
  const dir = path.join(h.root, '.team', 'inbox');
  let text = '';
  for (const name of ['lead', 'alice', 'bob']) {
    try {
      text += readFileSync(path.join(dir, `${name}.jsonl`), 'utf8');
    } catch {
      // no inbox yet
    }
  }
  return text;
}

function expectNoKeyIn(agent: string): void {
  const requests = h.requestsOf(agent);
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    const body = JSON.stringify(request.body);
    for (const spelling of KEY_SPELLINGS) expect(body.includes(spelling), `a request of ${agent} holds the key (${spelling.slice(0, 10)}…)`).toBe(false);
  }
}

describeSandboxed('external agents in the sandbox', () => {
  describe.skipIf(skipWithoutClaudeCode())('a claude-code teammate', () => {
    it("cannot change a byte outside its workspace, never holds huddle's key, and writes its own workspace and config", async () => {
      const v = arena.victim;
      const before = arena.snapshot();
      const attacks = [
        `echo pwned > ${v}/keep.txt`,
        `rm -rf ${v}`,
        `find ${v} -delete`,
        `mv ${v}/secret.txt ./stolen.txt`,
        `chmod -R a-rwx ${v}`,
        `node -e "require('fs').writeFileSync('${v}/keep.txt', 'pwned')"`,
        `echo '{"id":"x","type":"message","from":"user","to":"lead","content":"pwned-inbox","ts":"2020-01-01T00:00:00Z"}' >> .team/inbox/lead.jsonl`,
        'echo pwned > .tasks/task_99.json',
      ];
      const snoops = [
        "env; tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ",
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; tr '\\0' '\\n' < $p/environ; done; ps eww ax 2>&1 | head -40",
        'grep -rs "sk-test" /proc/*/environ /tmp "$CLAUDE_CONFIG_DIR" 2>/dev/null | head',
      ];
      const own = [
        'echo mine > mine.txt && cat mine.txt',
        'echo cfg > "$CLAUDE_CONFIG_DIR/probe.txt" && cat "$CLAUDE_CONFIG_DIR/probe.txt"',
        'ls -a "$(dirname "$(dirname "$CLAUDE_CONFIG_DIR")")"',
      ];
      h.fake.script(
        'alice',
        reply(...bashCalls(attacks)),
        reply(
          toolUse('Write', { file_path: path.join(v, 'new.txt'), content: 'pwned\n' }),
          toolUse('Edit', { file_path: path.join(v, 'keep.txt'), old_string: 'victim', new_string: 'pwned' }),
        ),
        reply(...bashCalls(snoops)),
        reply(...bashCalls(own)),
        replyText('Done trying.'),
      );
      const alice = (await h.spawn('alice', 'Try everything.', { agent: 'claude-code' })) as ExternalTeammate;
      await h.waitForEvent('the end of its turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Done trying.', 120_000);

      const results = resultsOf('alice');
      expect(results).toHaveLength(attacks.length + 2 + snoops.length + own.length);
      for (const [i, result] of results.slice(0, attacks.length).entries()) {
        expect(result.content, attacks[i]).toMatch(/read-only file system|Operation not permitted|Permission denied|refused|denied/i);
      }
      // Write and Edit outside: refused by huddle before Claude Code acts (and the sandbox would stop them).
      for (const result of results.slice(attacks.length, attacks.length + 2)) expect(result.ok).toBe(false);
      expectSame(arena.snapshot(), before, 'the victim');
      expect(everyInbox()).not.toContain('pwned');

      // Its own environment holds a stand-in for the key, good only against huddle's relay.
      const snooped = results
        .slice(attacks.length + 2, attacks.length + 2 + snoops.length)
        .map((r) => r.content)
        .join('\n');
      expect(snooped).toMatch(/ANTHROPIC_API_KEY=huddle-relay-[0-9a-f]{48}/);
      expect(snooped).toContain('/usr/bin/bwrap'); // PID 1 of its namespace: huddle is not in sight
      expectNoKeyIn('alice');
      // The relay put the real key on its requests.
      for (const request of h.requestsOf('alice')) expect(request.headers['x-api-key']).toBe(TEST_API_KEY);

      const [mine, config, others] = results.slice(-own.length);
      expect(mine!.content).toContain('mine');
      expect(readFileSync(path.join(h.root, 'mine.txt'), 'utf8')).toBe('mine\n');
      expect(config!.content).toContain('cfg');
      const configDir = alice.external.driver.configDir!;
      expect(readFileSync(path.join(configDir, 'probe.txt'), 'utf8')).toBe('cfg\n');
      // Other agents' config directories are out of sight: only its own teammate directory is there.
      expect(others!.content.split(/\s+/).filter((name) => name && name !== '.' && name !== '..')).toEqual(['alice']);
    }, 180_000);

    it("reaches the team through its own channel only: not the control socket, not another agent's channel", async () => {
      const server = await ControlServer.start(h.workspace.teamDir, 'headless', (request) => handleControl(h.session, 'headless', request));
      onTestFinished(() => server.close());
      const control = JSON.parse(readFileSync(path.join(h.root, '.team', 'control.json'), 'utf8')).socket as string;
      expect(control).toBe(server.socket);
      h.fake.script('bob', replyText('bob is ready.'));
      const bob = (await h.spawn('bob', 'Wait.', { agent: 'claude-code' })) as ExternalTeammate;
      await h.waitForEvent('bob to be ready', (e) => e.agent === 'bob' && e.type === 'text' && e.text === 'bob is ready.', 120_000);
      const bobSocket = bob.external.channel!.socket;

      const probes = [
        `${NODE} ${CLI_PATH} send lead pwned-cli --cwd ${h.root}; echo "exit=$?"`,
        socketProbe({ op: 'send', to: 'lead', text: 'pwned-control' }, control),
        socketProbe({ op: 'tool', as: 'bob', tool: 'idle', input: {} }, control),
        socketProbe({ op: 'call', tool: 'send_message', input: { to: 'lead', content: 'pwned-as-bob' } }, bobSocket),
        `ls -la ${shellQuote(path.dirname(control))} 2>&1; echo listed`,
      ];
      // The lead's bash (an in-process agent) and alice's Bash (Claude Code) try the same.
      h.fake.script('lead', reply(...probes.map((command) => toolUse('bash', { command }))), replyText('lead probed.'));
      h.fake.script(
        'alice',
        reply(...bashCalls(probes)),
        // Its own channel, where its sandbox shows it: it acts as alice, whatever the request says.
        reply(
          ...bashCalls([
            socketProbe(
              { op: 'call', tool: 'send_message', input: { to: 'lead', content: 'hello over my own channel', from: 'bob' } },
              '/tmp/.huddle-agent.sock',
            ),
          ]),
        ),
        replyText('alice probed.'),
      );
      h.team.start();
      h.team.lead.prompt('Probe the sockets.');
      await h.spawn('alice', 'Probe the sockets.', { agent: 'claude-code' });
      await h.waitForEvent('alice to finish', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'alice probed.', 120_000);
      await h.waitFor('the lead to finish', () => h.requestsOf('lead').length >= 2 || undefined, 60_000);

      const lead = lastToolResults(h.requestsOf('lead')[1]!).map((r) => r.content);
      const alice = resultsOf('alice').map((r) => r.content);
      for (const [who, results] of [
        ['lead', lead],
        ['alice', alice.slice(0, probes.length)],
      ] as const) {
        expect(results, who).toHaveLength(probes.length);
        expect(results[0], `${who}: huddle send`).toContain('exit=2');
        for (const result of results.slice(1, 4)) {
          expect(result, who).toContain('REFUSED');
          expect(result, who).not.toContain('ANSWERED');
        }
        // The runtime directory is an empty stand-in: neither the control socket nor bob's is there.
        expect(results[4], who).not.toContain('.sock');
      }
      expect(alice[probes.length]).toContain('ANSWERED {"ok":true');
      const inbox = everyInbox();
      expect(inbox).not.toContain('pwned');
      const mine = inbox.split('\n').filter((line) => line.includes('hello over my own channel'));
      expect(mine).toHaveLength(1);
      expect(JSON.parse(mine[0]!)).toMatchObject({ from: 'alice', to: 'lead' });
    }, 240_000);

    it("in its own clone, cannot touch the main checkout or another teammate's, and commits on its branch", async () => {
      await execa('git', ['init', '-q', '-b', 'main'], { cwd: h.root });
      writeFileSync(path.join(h.root, 'f.txt'), 'committed\n');
      await execa('git', ['add', 'f.txt'], { cwd: h.root });
      await execa('git', ['commit', '-q', '-m', 'initial'], { cwd: h.root });
      writeFileSync(path.join(h.root, 'f.txt'), 'uncommitted work\n');
      writeFileSync(path.join(h.root, 'untracked.txt'), 'untracked\n');
      const other = await ensureWorktree(h.root, 'bob');
      writeFileSync(path.join(other.path, 'wip.txt'), 'bob wip\n');

      h.fake.script(
        'alice',
        reply(...bashCalls(['echo mine > mine.txt && git add mine.txt && git commit -qm "alice: mine" && git log -1 --format=%s'])),
        replyText('Committed.'),
      );
      await h.spawn('alice', 'Commit something.', { agent: 'claude-code', worktree: true });
      await h.waitForEvent('its commit', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Committed.', 120_000);
      expect(resultsOf('alice')[0]!.content).toContain('alice: mine');
      await h.waitForStatus('alice', 'idle', 30_000);

      const outsideTeam = (relative: string) => relative === '.team' || relative.startsWith('.team/');
      const mainBefore = snapshotTree(h.root, outsideTeam);
      const bobBefore = snapshotTree(path.join(h.root, '.team', 'worktrees'), (relative) => !/^bob(\.git)?(\/|$)/.test(relative));
      const victimBefore = arena.snapshot();
      const attacks = [
        'git -C ../../.. reset --hard',
        'cd ../../.. && git clean -fdx',
        'GIT_DIR=../../../.git git reset --hard',
        'git -C "$(git rev-parse --git-common-dir)/.." checkout -- .',
        'rm -rf ../../../.git',
        'rm -rf ../bob ../bob.git',
        'echo pwned > ../../../f.txt',
        'echo pwned > ../../config.json',
        'git push -q origin HEAD:main --force',
        'git -C ../../.. branch -D huddle/bob',
        `echo pwned > ${arena.victim}/keep.txt`,
      ];
      h.fake.script(
        'alice',
        reply(...bashCalls(attacks)),
        reply(toolUse('Write', { file_path: path.join(h.root, 'f.txt'), content: 'pwned\n' })),
        replyText('Tried.'),
      );
      await h.session.send('alice', 'Now try the main checkout.');
      await h.waitForEvent('the attacks', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Tried.', 120_000);

      expect(resultsOf('alice')).toHaveLength(1 + attacks.length + 1);
      expectSame(snapshotTree(h.root, outsideTeam), mainBefore, 'the main checkout');
      expectSame(
        snapshotTree(path.join(h.root, '.team', 'worktrees'), (relative) => !/^bob(\.git)?(\/|$)/.test(relative)),
        bobBefore,
        "bob's checkout",
      );
      expectSame(arena.snapshot(), victimBefore, 'the victim');
      expect(readFileSync(path.join(h.root, 'f.txt'), 'utf8')).toBe('uncommitted work\n');
      expectNoKeyIn('alice');
    }, 240_000);

    // socat bridges huddle's model relay into a sandbox with a network of its own: CI installs it (.ci/run).
    const noSocat = !hasSocat() && process.env.CI !== 'true';
    it.skipIf(noSocat)(
      `with the network off, still reaches its model (through huddle's relay), and nothing else${noSocat ? ' [skipped: apt-get install socat]' : ''}`,
      async () => {
        configureSandbox({ network: { enabled: false } });
        try {
          const api = new URL(h.fake.url);
          h.fake.script(
            'alice',
            reply(
              ...bashCalls([
                `${NODE} -e ${shellQuote(`require('net').connect(${api.port}, '${api.hostname}').on('connect', () => { console.log('CONNECTED'); process.exit(0) }).on('error', (e) => { console.log('NO-NETWORK', e.code); process.exit(0) })`)}`,
              ]),
            ),
            replyText('Offline but talking.'),
          );
          await h.spawn('alice', 'Try the network.', { agent: 'claude-code' });
          await h.waitForEvent('the end of its turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Offline but talking.', 120_000);
          expect(resultsOf('alice')[0]!.content).toContain('NO-NETWORK');
          expectNoKeyIn('alice');
        } finally {
          configureSandbox({});
        }
      },
      180_000,
    );

    it('in plan mode runs read-only, but for its own config directory', async () => {
      // (A literal path: Claude Code's plan mode runs no command whose words it must expand.)
      const configDir = agentStateDir(h.root, 'alice', 'claude-code');
      h.fake.script(
        'alice',
        reply(
          ...bashCalls([
            'test -w . && echo WORKSPACE-WRITABLE || echo WORKSPACE-READ-ONLY',
            `test -w ${configDir} && echo CONFIG-WRITABLE || echo CONFIG-READ-ONLY`,
          ]),
        ),
        replyText('Looked.'),
      );
      await h.spawn('alice', 'Look around.', { agent: 'claude-code', permissionMode: 'plan' });
      await h.waitForEvent('the end of its turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Looked.', 120_000);
      const [workspace, config] = resultsOf('alice').map((r) => r.content);
      expect(workspace).toContain('WORKSPACE-READ-ONLY');
      expect(config).toContain('CONFIG-WRITABLE');
    }, 180_000);
  });

  it('a command teammate (a program in a PTY) runs in the sandbox too', async () => {
    const v = arena.victim;
    const before = arena.snapshot();
    const script = `echo pwned > ${v}/keep.txt; rm -rf ${v}; echo "pid1=$(tr '\\0' ' ' < /proc/1/cmdline)"; echo mine > made-here.txt; echo finished`;
    writeFileSync(path.join(h.root, 'attack.sh'), `${script}\nsleep 600\n`);
    await h.spawn('prog', '', { agent: 'command', command: 'sh attack.sh', role: 'helper' });
    const screen = () => (h.session.terminal('prog')?.lines() ?? []).join('\n');
    await h.waitFor('the program to finish its attack', () => screen().includes('finished'), 30_000);
    expect(screen()).toContain('Read-only file system');
    expect(screen()).toContain('pid1=/usr/bin/bwrap');
    expectSame(arena.snapshot(), before, 'the victim');
    expect(readFileSync(path.join(h.root, 'made-here.txt'), 'utf8')).toBe('mine\n');
  }, 60_000);
});
