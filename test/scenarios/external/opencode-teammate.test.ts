// An opencode teammate, driving the real pinned OpenCode CLI (`opencode run --format json`) against
// the fake Messages API through huddle's model relay (its Anthropic provider points at the relay,
// with a stand-in key; huddle's key never enters its sandbox): it is offered huddle's team tools
// (huddle_claim_task, …) in its first request, claims a task with them, completes it and reports
// to the lead once; a message later continues its session (--session); an interrupt ends its turn
// and the next message carries on in the same session. In huddle's sandbox its shell writes the
// workspace and nothing outside it; in plan mode (its plan agent, a read-only sandbox) it writes nothing.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, text, toolUse } from '../../helpers/fake-api.js';
import { findOpenCode, openCodeEnv, skipWithoutOpenCode } from '../../helpers/opencode.js';
import { CLI_PATH } from '../../helpers/run-cli.js';
import { openTeamHarness, TEST_API_KEY, type TeamHarness } from '../../helpers/team-harness.js';
import { trustWorkspace } from '../../helpers/trust.js';
import { sandboxStatus } from '../../../src/runtime/sandbox/index.js';
import { expectSame, makeArena } from '../../helpers/sandbox-arena.js';

const skip = skipWithoutOpenCode();

let h: TeamHarness;
const savedCli = process.env.HUDDLE_CLI;

beforeEach(async () => {
  // huddle's MCP server runs from the built CLI (this test drives the team in-process).
  process.env.HUDDLE_CLI = CLI_PATH;
  h = await openTeamHarness();
  mkdirSync(path.join(h.root, '.team'), { recursive: true });
  writeFileSync(
    path.join(h.root, '.team', 'settings.json'),
    JSON.stringify({ agents: { opencode: { command: findOpenCode() ?? 'opencode', env: openCodeEnv(`${h.root}-home`) } } }),
  );
  trustWorkspace(h.root);
});
afterEach(async () => {
  await h.close();
  rmSync(`${h.root}-home`, { recursive: true, force: true });
  if (savedCli === undefined) delete process.env.HUDDLE_CLI;
  else process.env.HUDDLE_CLI = savedCli;
});

const conversation = (index: number) => JSON.stringify(h.requestsOf('oc')[index]?.body.messages ?? []);

describe.skipIf(skip)('an opencode teammate (the real OpenCode CLI)', () => {
  it("is offered huddle's tools, claims through them, reports once, and continues its session on the next message", async () => {
    const report = 'task #1 done by opencode';
    await h.team.ctx.board.create({ subject: 'Say hello' }, 'lead');
    h.fake.script(
      'oc',
      reply(text('Claiming.'), toolUse('huddle_claim_task', { task_id: 1 })),
      reply(toolUse('huddle_task_update', { task_id: 1, status: 'completed' })),
      reply(toolUse('huddle_send_message', { to: 'lead', content: report })),
      replyText('Reported.'),
    );
    await h.spawn('oc', 'Claim task #1, do it, report to lead.', { agent: 'opencode' });
    await h.waitForEvent('its first turn to end', (e) => e.agent === 'oc' && e.type === 'text' && String(e.text).includes('Reported.'), 120_000);
    await h.waitForStatus('oc', 'idle', 30_000);

    // The first request offers huddle's team tools, and carries huddle's identity in its system prompt.
    const first = h.requestsOf('oc')[0]!;
    const tools = (first.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['huddle_task_list', 'huddle_claim_task', 'huddle_task_update', 'huddle_send_message', 'huddle_idle']));
    expect(JSON.stringify(first.body.system)).toContain("You are 'oc', role: coder, team: ");
    expect(conversation(0)).toContain('Claim task #1, do it, report to lead.');
    // Through huddle's relay: the request reached the API with huddle's key, which OpenCode never had.
    expect(first.headers['x-api-key']).toBe(TEST_API_KEY);
    expect(first.body.model).toBe('claude-sonnet-4-6');

    expect(await h.team.ctx.board.get(1)).toMatchObject({ status: 'completed', owner: 'oc' });
    expect(h.inbox('lead').filter((m) => m.content === report)).toEqual([expect.objectContaining({ from: 'oc' })]);
    const results = h.events.filter((e) => e.agent === 'oc' && e.type === 'tool_result');
    expect(results.map((e) => [e.name, e.ok])).toEqual([
      ['huddle_claim_task', true],
      ['huddle_task_update', true],
      ['huddle_send_message', true],
    ]);
    expect(String(results[0]!.content)).toContain('claimed task #1');
    // Its tokens and the cost OpenCode prices them at.
    const usage = h.events.filter((e) => e.agent === 'oc' && e.type === 'usage');
    expect(Number(usage.at(-1)!.output_tokens)).toBeGreaterThan(0);
    expect(Number(usage.at(-1)!.cost_usd)).toBeGreaterThan(0);
    // How full its context is: its last step's input (cached or not) and output.
    expect(Number(usage.at(-1)!.context_tokens)).toBeGreaterThan(Number(usage.at(-1)!.output_tokens));
    const session = h.team.ctx.roster.get('oc')!.agent_session;
    expect(session).toMatch(/^ses_/);

    // A message later is a new turn of the same session: the model sees what came before.
    h.fake.script('oc', replyText('Noted the follow-up.'));
    const before = h.requestsOf('oc').length;
    await h.session.send('oc', 'also say goodbye');
    await h.waitForEvent('the second turn', (e) => e.agent === 'oc' && e.type === 'text' && String(e.text).includes('Noted the follow-up.'), 120_000);
    const next = conversation(before);
    expect(next).toContain('Reported.');
    expect(next).toContain('also say goodbye');
    expect(h.team.ctx.roster.get('oc')!.agent_session).toBe(session);
  }, 300_000);

  it('is interrupted mid-turn and carries on in the same session', async () => {
    h.fake.script('oc', { kind: 'hang', content: [text('Thinking about the first thing')] }, replyText('Second thing done.'));
    await h.spawn('oc', 'Do the first thing.', { agent: 'opencode' });
    await h.waitFor('its first request', () => h.requestsOf('oc').length >= 1, 120_000);
    await h.waitFor('it to be in a turn', () => h.session.agentState('oc')?.inTurn);
    expect(h.session.interrupt('oc')).toBe(true);
    await h.waitForEvent('the interruption', (e) => e.agent === 'oc' && e.type === 'error' && e.interrupted === true, 30_000);
    await h.waitForStatus('oc', 'idle', 30_000);
    const session = await h.waitFor('its session id', () => h.team.ctx.roster.get('oc')!.agent_session);

    await h.session.send('oc', 'Now the second thing.');
    await h.waitForEvent('the second turn', (e) => e.agent === 'oc' && e.type === 'text' && e.text === 'Second thing done.', 120_000);
    // The same OpenCode session: its conversation still holds the first prompt.
    expect(conversation(1)).toContain('Do the first thing.');
    expect(conversation(1)).toContain('Now the second thing.');
    expect(h.team.ctx.roster.get('oc')!.agent_session).toBe(session);
  }, 300_000);
});

// Its commands run in huddle's sandbox (OpenCode has none of its own): they write the workspace, not a byte outside it.
describe.skipIf(skip || (!sandboxStatus().available && process.env.CI !== 'true'))('an opencode teammate in the sandbox', () => {
  it('writes its workspace and nothing outside it', async () => {
    const arena = makeArena('opencode-');
    try {
      const before = arena.snapshot();
      const COMMAND = `echo mine > made-by-opencode.txt; echo pwned > ${arena.victim}/keep.txt; touch ${arena.victim}/new-file; echo finished`;
      h.fake.script('oc', reply(toolUse('bash', { command: COMMAND, description: 'Try the command' })), replyText('Tried.'));
      await h.spawn('oc', 'Run the command.', { agent: 'opencode', permissionMode: 'auto' });
      await h.waitForEvent('its turn to end', (e) => e.agent === 'oc' && e.type === 'text' && String(e.text).includes('Tried.'), 120_000);
      const result = h.events.find((e) => e.agent === 'oc' && e.type === 'tool_result');
      expect(result?.name).toBe('bash');
      expect(String(result?.content)).toContain('finished');
      expect(String(result?.content)).toMatch(/Read-only file system/);
      expect(readFileSync(path.join(h.root, 'made-by-opencode.txt'), 'utf8')).toBe('mine\n');
      expectSame(arena.snapshot(), before, 'the victim');
    } finally {
      arena.cleanup();
    }
  }, 300_000);

  it("in plan mode starts, uses huddle's tools, and writes nothing", async () => {
    await h.team.ctx.board.create({ subject: 'Plan the change' }, 'lead');
    h.fake.script(
      'oc',
      reply(toolUse('huddle_task_list', {})),
      reply(toolUse('write', { filePath: path.join(h.root, 'planned.txt'), content: 'no\n' })),
      replyText('Planned.'),
    );
    await h.spawn('oc', 'Plan it.', { agent: 'opencode', permissionMode: 'plan' });
    await h.waitForEvent('its turn to end', (e) => e.agent === 'oc' && e.type === 'text' && String(e.text).includes('Planned.'), 120_000);
    const results = h.events.filter((e) => e.agent === 'oc' && e.type === 'tool_result');
    expect(results.map((e) => [e.name, e.ok])).toEqual([
      ['huddle_task_list', true],
      ['write', false],
    ]);
    expect(String(results[0]!.content)).toContain('Plan the change');
    expect(existsSync(path.join(h.root, 'planned.txt'))).toBe(false);
  }, 300_000);
});
