// A Claude Code teammate's lifecycle with the real pinned CLI: interrupted mid-turn it goes on
// with its next message in the same session; /restart gives it a fresh session with a restart
// turn; a headless run stopped with Ctrl+C and resumed continues its Claude Code session
// (--resume <id>), so the conversation it had is still there.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { baseEnv, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { trustWorkspace } from '../../helpers/trust.js';

const skip = skipWithoutClaudeCode();

function settings(root: string): void {
  mkdirSync(path.join(root, '.team'), { recursive: true });
  writeFileSync(
    path.join(root, '.team', 'settings.json'),
    JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN, env: claudeCodeEnv(`${root}-home`) } } }),
  );
  trustWorkspace(root);
}

const conversation = (fake: FakeApi, agent: string, index: number) =>
  JSON.stringify(fake.requests.filter((r) => r.agent === agent)[index]?.body.messages ?? []);

describe.skipIf(skip)('a claude-code teammate in-process: interrupt and restart', () => {
  let h: TeamHarness;
  const savedCli = process.env.HUDDLE_CLI;
  beforeEach(async () => {
    process.env.HUDDLE_CLI = CLI_PATH;
    h = await openTeamHarness();
    settings(h.root);
  });
  afterEach(async () => {
    await h.close();
    rmSync(`${h.root}-home`, { recursive: true, force: true });
    if (savedCli === undefined) delete process.env.HUDDLE_CLI;
    else process.env.HUDDLE_CLI = savedCli;
  });

  it('is interrupted mid-turn and carries on in the same session; a restart starts a new one', async () => {
    h.fake.script(
      'alice',
      { kind: 'hang', content: [text('Thinking about the first thing')] },
      replyText('Second thing done.'),
      // The restart's summary of its transcript (written by huddle's model, as for its own agents).
      replyText('SUMMARY: the first thing was interrupted, the second is done.'),
      replyText('Fresh start acknowledged.'),
    );
    await h.spawn('alice', 'Do the first thing.', { agent: 'claude-code' });
    await h.waitFor('its first request', () => h.requestsOf('alice').length >= 1, 60_000);
    await h.waitFor('it to be in a turn', () => h.session.agentState('alice')?.inTurn);
    expect(h.session.interrupt('alice')).toBe(true);
    await h.waitForEvent('the interruption', (e) => e.agent === 'alice' && e.type === 'error' && e.interrupted === true, 30_000);
    await h.waitForStatus('alice', 'idle', 30_000);
    const session = h.team.ctx.roster.get('alice')!.agent_session;

    await h.session.send('alice', 'Now the second thing.');
    await h.waitForEvent('the second turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Second thing done.', 60_000);
    // The same Claude Code session: its conversation still holds the first prompt.
    expect(conversation(h.fake, 'alice', 1)).toContain('Do the first thing.');
    expect(conversation(h.fake, 'alice', 1)).toContain('Now the second thing.');
    expect(h.team.ctx.roster.get('alice')!.agent_session).toBe(session);
    await h.waitForStatus('alice', 'idle', 30_000);

    // /restart: a new Claude Code session whose first turn is the restart turn (identity, tasks, summary).
    const result = await h.session.restart('alice');
    expect(result.message).toBe('restarted alice with a summary of its transcript; its tasks and workspace are kept; it works again from its summary');
    await h.waitForEvent('the restarted turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Fresh start acknowledged.', 60_000);
    const fresh = conversation(h.fake, 'alice', 3);
    expect(fresh).toContain('SUMMARY: the first thing was interrupted, the second is done.');
    expect(fresh).toContain('You were restarted with a fresh context');
    expect(fresh).not.toContain('Do the first thing.');
    await h.waitFor('a new session id', () => {
      const id = h.team.ctx.roster.get('alice')!.agent_session;
      return id && id !== session;
    });
  }, 180_000);
});

describe.skipIf(skip)('a claude-code teammate across a resume (headless)', () => {
  let fake: FakeApi;
  let ws: Workspace;
  beforeEach(async () => {
    fake = await startFakeApi();
    ws = makeWorkspace('huddle-cc-resume-');
    settings(ws.dir);
  });
  afterEach(async () => {
    await fake.close();
    rmSync(`${ws.dir}-home`, { recursive: true, force: true });
    ws.cleanup();
  });

  it('continues its Claude Code session after Ctrl+C and --resume', async () => {
    fake.script(
      'lead',
      reply(text('Spawning.'), toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Remember the word PELICAN.', agent: 'claude-code' })),
      // The lead waits for a message that will not come before the run is stopped.
      { kind: 'hang' },
    );
    fake.script('alice', replyText('I will remember PELICAN.'));
    const env = { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url };
    const first = spawn(process.execPath, [CLI_PATH, '-p', 'Start alice.'], { cwd: ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    first.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => first.once('close', resolve));
    // Alice's turn is over and the lead's second call hangs: stop the run as a person would.
    const deadline = Date.now() + 90_000;
    const rosterOf = () => {
      try {
        return JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')).members as Array<{
          name: string;
          status: string;
          agent_session?: string;
        }>;
      } catch {
        return [];
      }
    };
    while (!(rosterOf().find((m) => m.name === 'alice')?.status === 'idle' && fake.requests.filter((r) => r.agent === 'lead').length >= 2)) {
      if (Date.now() > deadline) throw new Error(`alice never went idle: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    first.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    const session = rosterOf().find((m) => m.name === 'alice')!.agent_session;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);

    fake.script('lead', reply(toolUse('send_message', { to: 'alice', content: 'Which word?' })), replyText('Waiting.'), replyText('alice remembered.'));
    fake.script('alice', reply(toolUse('mcp__huddle__send_message', { to: 'lead', content: 'The word is PELICAN.' })), replyText('Answered.'));
    const second = await runCli(['-p', 'Ask alice for the word.', '--resume'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 120_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('alice remembered.');
    // Her Claude Code session went on: its conversation holds what she was told before the stop.
    const resumed = fake.requests.filter((r) => r.agent === 'alice').at(-2)!;
    const messages = JSON.stringify(resumed.body.messages);
    expect(messages).toContain('Remember the word PELICAN.');
    expect(messages).toContain('I will remember PELICAN.');
    expect(messages).toContain('Which word?');
    expect(rosterOf().find((m) => m.name === 'alice')!.agent_session).toBe(session);
  }, 240_000);
});
