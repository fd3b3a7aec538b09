// Claude Code's permission prompts answered by huddle (the real pinned CLI, in-process team): in
// ask mode a Bash command off the allow-list waits for the person (roster `waiting`, the needs-you
// queue) and runs once approved; the deny-list refuses a destructive command in every mode; a
// write outside its workspace is refused.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, toolUse } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { CLI_PATH } from '../../helpers/run-cli.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { trustWorkspace } from '../../helpers/trust.js';

let h: TeamHarness;
const savedCli = process.env.HUDDLE_CLI;

beforeEach(async () => {
  process.env.HUDDLE_CLI = CLI_PATH;
  h = await openTeamHarness({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
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
  if (savedCli === undefined) delete process.env.HUDDLE_CLI;
  else process.env.HUDDLE_CLI = savedCli;
});

describe.skipIf(skipWithoutClaudeCode())("Claude Code's permission prompts, answered by huddle", () => {
  it('asks the person in ask mode, refuses the deny-list and writes outside its workspace', async () => {
    const detach = h.session.attachPerson();
    const outside = path.join(path.dirname(h.root), `${path.basename(h.root)}-outside.txt`);
    h.fake.script(
      'alice',
      reply(toolUse('Bash', { command: 'touch made-by-bash.txt', description: 'make a file' })),
      reply(toolUse('Bash', { command: 'rm -rf /', description: 'destroy' })),
      reply(toolUse('Write', { file_path: outside, content: 'nope\n' })),
      replyText('Done trying.'),
    );
    await h.spawn('alice', 'Try some commands.', { agent: 'claude-code' });

    // The touch waits for the person: alice is `waiting`, the request is in the needs-you queue.
    const request = await h.waitFor('the approval request', () => h.session.waitingForPerson().find((r) => r.agent === 'alice'), 60_000);
    expect(request.summary).toContain('touch made-by-bash.txt');
    expect(h.team.ctx.roster.get('alice')).toMatchObject({ status: 'waiting' });
    expect(h.session.answer(request.id, 'approve')).toContain('approved');

    await h.waitForEvent('the end of its turn', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Done trying.', 60_000);
    expect(existsSync(path.join(h.root, 'made-by-bash.txt'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
    const results = h.events.filter((e) => e.agent === 'alice' && e.type === 'tool_result');
    expect(results.map((e) => e.ok)).toEqual([true, false, false]);
    expect(String(results[1]!.content)).toMatch(/refused|denied|blocked/i);
    expect(String(results[2]!.content)).toContain('outside your workspace');
    // What Claude Code was told is what its model saw as the tool results.
    const last = JSON.stringify(h.requestsOf('alice').at(-1)!.body.messages);
    expect(last).toContain('outside your workspace');
    detach();
  }, 120_000);
});
