// A codex teammate, driving the real Codex CLI (`codex exec --json`) against a fake Responses API
// (a custom model provider in its config, given with -c): it claims a task through huddle's MCP
// server (Codex offers it as the namespace mcp__huddle, in its very first request), completes the
// task and reports; a message later is a new turn that resumes its thread (`codex exec resume`).
// The Codex CLI is the pinned devDependency @openai/codex (test/helpers/agent-cli.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, say, startFakeOpenAi, type FakeOpenAi } from '../../helpers/fake-openai.js';
import { CLI_PATH } from '../../helpers/run-cli.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { sandboxStatus } from '../../../src/runtime/sandbox/index.js';
import { expectSame, makeArena } from '../../helpers/sandbox-arena.js';
import { trustWorkspace } from '../../helpers/trust.js';
import { pinnedCli, skipWithoutCli } from '../../helpers/agent-cli.js';

const CODEX = pinnedCli('codex');
const SKIP = skipWithoutCli('codex');

let h: TeamHarness;
let openai: FakeOpenAi;
let home: string;
const savedCli = process.env.HUDDLE_CLI;

beforeEach(async () => {
  process.env.HUDDLE_CLI = CLI_PATH;
  h = await openTeamHarness();
  openai = await startFakeOpenAi();
  home = mkdtempSync(path.join(os.tmpdir(), 'huddle-codex-home-'));
  mkdirSync(path.join(home, '.codex'), { recursive: true });
  mkdirSync(path.join(h.root, '.team'), { recursive: true });
  const provider = [
    '-c',
    'model_provider="fake"',
    '-c',
    'model_providers.fake.name="fake"',
    '-c',
    `model_providers.fake.base_url="${openai.url}"`,
    '-c',
    'model_providers.fake.env_key="OPENAI_API_KEY"',
    '-c',
    'model_providers.fake.wire_api="responses"',
  ];
  const env = { HOME: home, CODEX_HOME: path.join(home, '.codex'), OPENAI_API_KEY: 'sk-fake-openai' };
  writeFileSync(path.join(h.root, '.team', 'settings.json'), JSON.stringify({ agents: { codex: { command: CODEX ?? 'codex', args: provider, env } } }));
  trustWorkspace(h.root);
});
afterEach(async () => {
  await h.close();
  await openai.close();
  rmSync(home, { recursive: true, force: true });
  if (savedCli === undefined) delete process.env.HUDDLE_CLI;
  else process.env.HUDDLE_CLI = savedCli;
});

describe.skipIf(SKIP)('a codex teammate (the real Codex CLI)', () => {
  it('claims through huddle, completes and reports once, and resumes its thread on the next message', async () => {
    const report = 'task #1 done by codex';
    await h.team.ctx.board.create({ subject: 'Say hello' }, 'lead');
    openai.script(
      [call('claim_task', { task_id: 1 }, 'mcp__huddle')],
      [call('task_update', { task_id: 1, status: 'completed' }, 'mcp__huddle')],
      [call('send_message', { to: 'lead', content: report }, 'mcp__huddle')],
      [say('Reported.')],
    );
    await h.spawn('cx', 'Claim task #1, do it, report to lead.', { agent: 'codex', model: 'gpt-5' });
    await h.waitForEvent('its first turn to end', (e) => e.agent === 'cx' && e.type === 'text' && String(e.text).includes('Reported.'), 90_000);
    await h.waitForStatus('cx', 'idle', 30_000);

    expect(await h.team.ctx.board.get(1)).toMatchObject({ status: 'completed', owner: 'cx' });
    expect(h.inbox('lead').filter((m) => m.content === report)).toEqual([expect.objectContaining({ from: 'cx' })]);
    const results = h.events.filter((e) => e.agent === 'cx' && e.type === 'tool_result');
    expect(results.map((e) => [e.name, e.ok])).toEqual([
      ['mcp__huddle__claim_task', true],
      ['mcp__huddle__task_update', true],
      ['mcp__huddle__send_message', true],
    ]);
    expect(String(results[0]!.content)).toContain('claimed task #1');
    const usage = h.events.filter((e) => e.agent === 'cx' && e.type === 'usage');
    expect(Number(usage.at(-1)!.output_tokens)).toBeGreaterThan(0);
    const thread = h.team.ctx.roster.get('cx')!.agent_session;
    expect(typeof thread).toBe('string');
    // huddle's identity line came with its first turn, and its team tools with its first request.
    expect(JSON.stringify(openai.requests[0]!.body.input)).toContain("You are 'cx', role: coder, team: ");
    const namespace = openai.requests[0]!.body.tools.find((t: { name?: string }) => t.name === 'mcp__huddle');
    expect(namespace?.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['claim_task', 'task_update', 'send_message']));

    openai.script([say('Noted the follow-up.')]);
    const before = openai.requests.length;
    await h.session.send('cx', 'also say goodbye');
    await h.waitForEvent('the second turn', (e) => e.agent === 'cx' && e.type === 'text' && String(e.text).includes('Noted the follow-up.'), 90_000);
    const next = JSON.stringify(openai.requests[before]!.body.input);
    expect(next).toContain('Reported.');
    expect(next).toContain('also say goodbye');
    expect(h.team.ctx.roster.get('cx')!.agent_session).toBe(thread);
  }, 240_000);
});

// Its commands run in huddle's sandbox (Codex's own, bubblewrap too, cannot nest inside it, so huddle turns
// it off there): they write the workspace, not a byte outside it.
describe.skipIf(SKIP || (!sandboxStatus().available && process.env.CI !== 'true'))('a codex teammate in the sandbox', () => {
  it('writes its workspace and nothing outside it', async () => {
    const arena = makeArena('codex-');
    try {
      const before = arena.snapshot();
      const COMMAND = `echo mine > made-by-codex.txt; echo pwned > ${arena.victim}/keep.txt; touch ${arena.victim}/new-file; echo finished`;
      openai.script([call('exec_command', { cmd: COMMAND })], [say('Tried.')]);
      await h.spawn('cx', 'Run the command.', { agent: 'codex', model: 'gpt-5', permissionMode: 'auto' });
      await h.waitForEvent('its turn to end', (e) => e.agent === 'cx' && e.type === 'text' && String(e.text).includes('Tried.'), 90_000);
      const result = h.events.find((e) => e.agent === 'cx' && e.type === 'tool_result');
      expect(String(result?.content)).toContain('finished');
      expect(String(result?.content)).toMatch(/Read-only file system/);
      expect(readFileSync(path.join(h.root, 'made-by-codex.txt'), 'utf8')).toBe('mine\n');
      expectSame(arena.snapshot(), before, 'the victim');
    } finally {
      arena.cleanup();
    }
  }, 180_000);
});
