// A gemini teammate, driving the real Gemini CLI against a fake Gemini API (GOOGLE_GEMINI_BASE_URL):
// it claims a task through huddle's MCP server (mcp_huddle_claim_task), writes a file with its own
// write_file tool, completes the task and reports; a message later is a new turn that continues
// its session (--resume). The Gemini CLI is the pinned devDependency @google/gemini-cli
// (test/helpers/agent-cli.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { geminiCall, geminiText, startFakeGemini, type FakeGemini } from '../../helpers/fake-gemini.js';
import { CLI_PATH, REPO_ROOT } from '../../helpers/run-cli.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { sandboxStatus } from '../../../src/runtime/sandbox/index.js';
import { expectSame, makeArena } from '../../helpers/sandbox-arena.js';
import { trustWorkspace } from '../../helpers/trust.js';
import { pinnedCli, skipWithoutCli } from '../../helpers/agent-cli.js';

const GEMINI = pinnedCli('gemini');
const SKIP = skipWithoutCli('gemini');

let h: TeamHarness;
let gemini: FakeGemini;
let home: string;
let cache: string;
const savedCli = process.env.HUDDLE_CLI;

beforeEach(async () => {
  // huddle's MCP server runs from the built CLI (this test drives the team in-process).
  process.env.HUDDLE_CLI = CLI_PATH;
  h = await openTeamHarness();
  gemini = await startFakeGemini();
  home = mkdtempSync(path.join(os.tmpdir(), 'huddle-gemini-home-'));
  // Gemini refuses settings in directories others may write (the temp dir): its cache is in the repo's.
  mkdirSync(path.join(REPO_ROOT, 'node_modules', '.cache'), { recursive: true });
  cache = mkdtempSync(path.join(REPO_ROOT, 'node_modules', '.cache', 'huddle-gemini-'));
  mkdirSync(path.join(home, '.gemini'), { recursive: true });
  writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  mkdirSync(path.join(h.root, '.team'), { recursive: true });
  const env = { HOME: home, XDG_CACHE_HOME: cache, GEMINI_API_KEY: 'fake-gemini-key', GOOGLE_GEMINI_BASE_URL: gemini.url };
  writeFileSync(path.join(h.root, '.team', 'settings.json'), JSON.stringify({ agents: { gemini: { command: GEMINI ?? 'gemini', env } } }));
  trustWorkspace(h.root);
});
afterEach(async () => {
  await h.close();
  await gemini.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
  if (savedCli === undefined) delete process.env.HUDDLE_CLI;
  else process.env.HUDDLE_CLI = savedCli;
});

describe.skipIf(SKIP)('a gemini teammate (the real Gemini CLI)', () => {
  it('claims through huddle, writes with its own tool, reports once, and continues its session on the next message', async () => {
    const target = path.join(h.root, 'gemini.txt');
    const report = 'gemini.txt written (task #1)';
    await h.team.ctx.board.create({ subject: 'Write gemini.txt' }, 'lead');
    gemini.script(
      [geminiText('Claiming.'), geminiCall('mcp_huddle_claim_task', { task_id: 1 })],
      [geminiCall('write_file', { file_path: target, content: 'from gemini\n' })],
      [geminiCall('mcp_huddle_task_update', { task_id: 1, status: 'completed' })],
      [geminiCall('mcp_huddle_send_message', { to: 'lead', content: report })],
      [geminiText('Reported.')],
    );
    await h.spawn('gem', 'Claim task #1, do it, report to lead.', { agent: 'gemini' });
    await h.waitForEvent('its first turn to end', (e) => e.agent === 'gem' && e.type === 'text' && String(e.text).includes('Reported.'), 90_000);
    await h.waitForStatus('gem', 'idle', 30_000);

    expect(readFileSync(target, 'utf8')).toBe('from gemini\n');
    expect(await h.team.ctx.board.get(1)).toMatchObject({ status: 'completed', owner: 'gem' });
    expect(h.inbox('lead').filter((m) => m.content === report)).toEqual([expect.objectContaining({ from: 'gem' })]);
    const calls = h.events.filter((e) => e.agent === 'gem' && e.type === 'tool_call').map((e) => e.name);
    expect(calls).toEqual(['mcp_huddle_claim_task', 'write_file', 'mcp_huddle_task_update', 'mcp_huddle_send_message']);
    const usage = h.events.filter((e) => e.agent === 'gem' && e.type === 'usage');
    expect(Number(usage.at(-1)!.output_tokens)).toBeGreaterThan(0);
    const session = h.team.ctx.roster.get('gem')!.agent_session;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    // huddle's identity line came with its first turn, and its team tools with its first request.
    const first = gemini.requests.find((r) => r.url.includes('streamGenerateContent'))!;
    expect(JSON.stringify(first.body.contents)).toContain("You are 'gem', role: coder, team: ");
    const offered = (first.body.tools ?? []).flatMap((t: { functionDeclarations?: Array<{ name: string }> }) =>
      (t.functionDeclarations ?? []).map((f) => f.name),
    );
    expect(offered).toEqual(expect.arrayContaining(['mcp_huddle_claim_task', 'mcp_huddle_task_update', 'mcp_huddle_send_message']));

    // A message later is a new turn of the same session: the model sees what came before.
    gemini.script([geminiText('Noted the follow-up.')]);
    const before = gemini.requests.length;
    await h.session.send('gem', 'also add a second line');
    await h.waitForEvent('the second turn', (e) => e.agent === 'gem' && e.type === 'text' && String(e.text).includes('Noted the follow-up.'), 90_000);
    const next = gemini.requests.slice(before).find((r) => r.url.includes('streamGenerateContent'))!;
    const contents = JSON.stringify(next.body.contents);
    expect(contents).toContain('Reported.');
    expect(contents).toContain('also add a second line');
    expect(h.team.ctx.roster.get('gem')!.agent_session).toBe(session);
  }, 240_000);
});

// Its commands run in huddle's sandbox: they write the workspace, not a byte outside it.
describe.skipIf(SKIP || (!sandboxStatus().available && process.env.CI !== 'true'))('a gemini teammate in the sandbox', () => {
  it('writes its workspace and nothing outside it', async () => {
    const arena = makeArena('gemini-');
    try {
      const before = arena.snapshot();
      const COMMAND = `echo mine > made-by-gemini.txt; echo pwned > ${arena.victim}/keep.txt; touch ${arena.victim}/new-file; echo finished`;
      gemini.script([geminiCall('run_shell_command', { command: COMMAND })], [geminiText('Tried.')]);
      await h.spawn('gem', 'Run the command.', { agent: 'gemini', permissionMode: 'auto' });
      await h.waitForEvent('its turn to end', (e) => e.agent === 'gem' && e.type === 'text' && String(e.text).includes('Tried.'), 90_000);
      const result = h.events.find((e) => e.agent === 'gem' && e.type === 'tool_result');
      expect(String(result?.content)).toContain('finished');
      expect(String(result?.content)).toMatch(/Read-only file system/);
      expect(readFileSync(path.join(h.root, 'made-by-gemini.txt'), 'utf8')).toBe('mine\n');
      expectSame(arena.snapshot(), before, 'the victim');
    } finally {
      arena.cleanup();
    }
  }, 180_000);
});
