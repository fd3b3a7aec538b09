// Permission modes through real agent loops: the in-process team against the fake Messages API
// (plan-mode teammates, the deny-list in auto mode, ask mode without anyone to ask, the approvals
// queue), and one headless run of the built CLI with --permission-mode ask.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventRecord as HuddleEvent } from '../../../src/runtime/events/events.js';
import { reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.ts';
import { lastToolResults, type TeamHarness } from '../../helpers/team-harness.ts';
import { harnessPerTest } from '../../helpers/harness-per-test.js';
import { loadSettings } from '../../../src/runtime/settings/load.js';
import { makeWorkspace, runCli } from '../../helpers/run-cli.ts';

const open = harnessPerTest();

/** The tool results of `agent`, in order: [tool name, ok, content]. */
function results(h: TeamHarness, agent: string): Array<[string, boolean, string]> {
  return h.events.filter((e) => e.agent === agent && e.type === 'tool_result').map((e) => [String(e.name), e.ok === true, String(e.content)]);
}

/** Resolves when `agent` has had `n` tool results. */
function toolResultCount(h: TeamHarness, agent: string, n: number) {
  return h.waitFor(`${n} tool results of ${agent}`, () => results(h, agent).length >= n);
}

describe('permission modes', () => {
  it('a teammate in plan mode may read but is refused writes, and carries on', async () => {
    const h = await open();
    h.fake.script(
      'alice',
      reply(
        toolUse('write_file', { path: 'notes.txt', content: 'x' }),
        toolUse('bash', { command: 'touch made-by-bash.txt' }),
        toolUse('edit_file', { path: 'keep.txt', old_text: 'keep', new_text: 'changed' }),
        toolUse('bash', { command: 'cat keep.txt' }),
      ),
      reply(toolUse('idle', {})),
    );
    writeFileSync(path.join(h.root, 'keep.txt'), 'keep\n');
    const spawned = await h.team.spawn({ name: 'alice', role: 'reviewer', prompt: 'Review.', permissionMode: 'plan' }, 'lead');
    expect(spawned).toContain('it runs in permission mode plan');
    await h.waitForStatus('alice', 'idle');

    const got = results(h, 'alice');
    expect(got.map(([name, ok]) => [name, ok])).toEqual([
      ['write_file', false],
      ['bash', false],
      ['edit_file', false],
      ['bash', true],
      ['idle', true],
    ]);
    expect(got[0]![2]).toMatch(/^refused in plan mode \(read-only\): write_file is not available/);
    expect(got[1]![2]).toContain("refused in plan mode (read-only): 'touch' is not on the read-only list");
    expect(got[3]![2]).toContain('keep');
    expect(existsSync(path.join(h.root, 'notes.txt'))).toBe(false);
    expect(existsSync(path.join(h.root, 'made-by-bash.txt'))).toBe(false);
    expect(readFileSync(path.join(h.root, 'keep.txt'), 'utf8')).toBe('keep\n');
  });

  it('role front matter sets a mode; the lead cannot spawn a teammate looser than the run', async () => {
    const h = await open({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    mkdirSync(path.join(h.root, '.team', 'roles'), { recursive: true });
    writeFileSync(path.join(h.root, '.team', 'roles', 'auditor.md'), '---\npermission_mode: plan\n---\nYou audit.\n');
    writeFileSync(path.join(h.root, '.team', 'roles', 'broken.md'), '---\npermission_mode: yolo\n---\nx\n');
    h.fake.respond((request) => (request.agent === 'lead' ? undefined : reply(toolUse('idle', {}))));

    const auditor = await h.team.spawn({ name: 'ann', role: 'auditor', prompt: 'Audit.' }, 'lead');
    expect(auditor).toContain("it runs in permission mode plan (the run's is ask)");
    expect(auditor).toContain('permission_mode must be one of plan, ask, auto, not "yolo"');
    expect(h.team.permissions.modeOf('ann')).toBe('plan');

    const looser = await h.team.spawn({ name: 'bob', role: 'coder', prompt: 'Code.', permissionMode: 'auto' }, 'lead');
    expect(looser).toContain("permission_mode auto is looser than this run's (ask), so it runs in ask");
    expect(h.team.permissions.modeOf('bob')).toBe('ask');
    // The person (the console's /spawn) may choose any mode.
    await h.team.spawn({ name: 'cat', role: 'coder', prompt: 'Code.', permissionMode: 'auto' }, 'user');
    expect(h.team.permissions.modeOf('cat')).toBe('auto');
    await h.waitForStatus('cat', 'idle');
  });

  it('auto mode: a command on the deny-list is refused with its rule, and the loop goes on', async () => {
    const h = await open();
    writeFileSync(path.join(h.root, 'sentinel.txt'), 'still here\n');
    h.fake.script(
      'lead',
      reply(
        toolUse('bash', { command: "r''m -rf ." }),
        toolUse('bash', { command: 'echo next > after.txt' }),
        toolUse('bash', { command: 'bash -c "git push --force origin main"' }),
      ),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('Clean up.');
    await h.waitFor('the lead to finish its turn', () => h.team.lead.lastOutcome?.kind === 'end_turn');

    const got = results(h, 'lead');
    expect(got.map(([name, ok]) => [name, ok])).toEqual([
      ['bash', false],
      ['bash', true],
      ['bash', false],
    ]);
    expect(got[0]![2]).toContain("refused by huddle's deny-list (rule rm-recursive): recursive delete of the workspace");
    expect(got[0]![2]).toContain('in every permission mode');
    expect(got[2]![2]).toContain('rule git-force-push');
    expect(readFileSync(path.join(h.root, 'sentinel.txt'), 'utf8')).toBe('still here\n');
    expect(readFileSync(path.join(h.root, 'after.txt'), 'utf8')).toBe('next\n');
    // The model saw the refusal as an error result, and answered.
    const second = h.requestsOf('lead')[1]!;
    expect(lastToolResults(second)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('rule rm-recursive') });
    expect(h.team.lead.lastText).toBe('Done.');
  });

  it('ask mode with nobody to ask: commands off the allow-list and protected writes are refused, saying so', async () => {
    const h = await open({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    mkdirSync(path.join(h.root, '.team'), { recursive: true });
    writeFileSync(path.join(h.root, '.team', 'allow.json'), '["node"]\n');
    // The person trusts the workspace's allow-list (docs/trust.md).
    loadSettings({ cwd: h.root, trust: true });
    h.fake.script(
      'lead',
      reply(
        toolUse('bash', { command: 'touch made.txt' }),
        toolUse('bash', { command: 'ls -a' }),
        toolUse('bash', { command: "node -e \"require('fs').writeFileSync('by-node.txt', '1')\"" }),
        toolUse('write_file', { path: 'src/ok.txt', content: 'fine\n' }),
        toolUse('write_file', { path: '.git/config', content: 'x' }),
      ),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('Go.');
    await h.waitFor('the lead to finish its turn', () => h.team.lead.lastOutcome?.kind === 'end_turn');

    const got = results(h, 'lead');
    expect(got.map(([name, ok]) => [name, ok])).toEqual([
      ['bash', false],
      ['bash', true],
      ['bash', true],
      ['write_file', true],
      ['write_file', false],
    ]);
    expect(got[0]![2]).toBe(
      '\'touch made.txt\' needs approval, which a headless run cannot ask for; run with --permission-mode auto or add it to the allow-list ("permissions": {"allow": ["touch"]} in .team/settings.json or .team/settings.local.json)',
    );
    expect(got[4]![2]).toBe(
      'refused: .git/config is inside .git (git runs what its config and hooks say), which agents never change in any permission mode; say what should change and the person edits it themselves',
    );
    expect(existsSync(path.join(h.root, 'made.txt'))).toBe(false);
    expect(existsSync(path.join(h.root, 'by-node.txt'))).toBe(true);
    expect(existsSync(path.join(h.root, '.git'))).toBe(false);
    expect(h.events.some((e) => e.type === 'approval_requested')).toBe(false);
  });

  it('the approvals queue: the call waits (status waiting), runs when approved, is refused when denied, and "always" allow-lists it', async () => {
    const h = await open({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    const detach = h.team.approvals.attachAnswerer();
    h.fake.script(
      'lead',
      reply(toolUse('bash', { command: 'touch approved.txt' })),
      reply(toolUse('bash', { command: 'touch denied.txt' })),
      reply(toolUse('bash', { command: 'touch always.txt' })),
      reply(toolUse('bash', { command: 'touch again.txt' })),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('Make files.');
    const requested = (n: number) => h.waitFor(`approval request ${n}`, () => h.events.filter((e) => e.type === 'approval_requested')[n - 1]);

    const first = await requested(1);
    expect(first).toMatchObject({ agent: 'lead', tool: 'bash', summary: 'touch approved.txt', prefixes: ['touch'] });
    expect(String(first.reason)).toContain("'touch approved.txt' is not on the allow-list");
    const waiting = await h.waitForStatus('lead', 'waiting');
    expect(waiting.status_reason).toBe('permission: touch approved.txt');
    expect(h.team.approvals.list().map((r) => r.summary)).toEqual(['touch approved.txt']);
    expect(existsSync(path.join(h.root, 'approved.txt'))).toBe(false);
    expect(h.team.approvals.resolve(String(first.id), 'approve')).toBe(true);
    await toolResultCount(h, 'lead', 1);
    expect(results(h, 'lead')[0]!.slice(0, 2)).toEqual(['bash', true]);
    expect(existsSync(path.join(h.root, 'approved.txt'))).toBe(true);
    expect(h.statuses('lead')).toEqual(expect.arrayContaining(['working', 'waiting']));

    const second = await requested(2);
    h.team.approvals.resolve(String(second.id), 'deny');
    await toolResultCount(h, 'lead', 2);
    expect(results(h, 'lead')[1]).toEqual(['bash', false, expect.stringContaining('the person denied this (bash: touch denied.txt)')]);
    expect(existsSync(path.join(h.root, 'denied.txt'))).toBe(false);

    const third = await requested(3);
    h.team.approvals.resolve(String(third.id), 'always');
    await h.waitFor('the lead to finish its turn', () => h.team.lead.lastOutcome?.kind === 'end_turn');
    // "Always" answers are personal settings: .team/settings.local.json, not committed.
    expect(JSON.parse(readFileSync(path.join(h.root, '.team', 'settings.local.json'), 'utf8'))).toEqual({ permissions: { allow: ['touch'] } });
    expect(existsSync(path.join(h.root, 'always.txt'))).toBe(true);
    // Allow-listed now: the fourth command ran without a question.
    expect(existsSync(path.join(h.root, 'again.txt'))).toBe(true);
    expect(h.events.filter((e) => e.type === 'approval_requested')).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'approval_resolved').map((e) => e.decision)).toEqual(['approve', 'deny', 'always']);
    expect(h.team.approvals.size).toBe(0);
    detach();
  });

  it("a denial carries the person's reason to the agent; a protected write's question shows what it would write", async () => {
    const h = await open({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    const detach = h.team.approvals.attachAnswerer();
    h.fake.script(
      'lead',
      reply(toolUse('bash', { command: 'npm install left-pad' })),
      reply(toolUse('write_file', { path: '.env', content: 'A=1\nB=2\n' })),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('Set it up.');
    const first: HuddleEvent = await h.waitForEvent('the first question', (e) => e.type === 'approval_requested');
    expect(h.team.approvals.resolve(String(first.id), 'deny', 'user', 'we use pnpm here')).toBe(true);
    await toolResultCount(h, 'lead', 1);
    expect(results(h, 'lead')[0]).toEqual(['bash', false, expect.stringContaining('They said: we use pnpm here.')]);
    expect(h.events.find((e) => e.type === 'approval_resolved')).toMatchObject({ decision: 'deny', by: 'user', note: 'we use pnpm here' });
    const second: HuddleEvent = await h.waitForEvent('the write question', (e) => e.type === 'approval_requested' && e.id !== first.id);
    expect(second).toMatchObject({ tool: 'write_file', summary: '.env', detail: '+++ .env (3 lines)\n+A=1\n+B=2\n+' });
    h.team.approvals.resolve(String(second.id), 'deny');
    await toolResultCount(h, 'lead', 2);
    expect(results(h, 'lead')[1]![2]).not.toContain('They said');
    detach();
  });

  it('an interrupt while waiting withdraws the request', async () => {
    const h = await open({ env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    h.team.approvals.attachAnswerer();
    h.fake.script('lead', reply(toolUse('write_file', { path: '.env', content: 'SECRET=1\n' })), replyText('Stopped.'));
    h.team.start();
    h.team.lead.prompt('Write the env file.');
    const asked: HuddleEvent = await h.waitForEvent('the approval request', (e) => e.type === 'approval_requested');
    expect(asked).toMatchObject({ tool: 'write_file', summary: '.env', prefixes: [] });
    h.team.lead.interrupt();
    await h.waitForEvent('the request withdrawn', (e) => e.type === 'approval_resolved' && e.decision === 'cancelled');
    await h.waitFor('the interrupted turn', () => h.team.lead.lastOutcome?.kind === 'interrupted');
    expect(h.team.approvals.size).toBe(0);
    expect(existsSync(path.join(h.root, '.env'))).toBe(false);
    expect(h.team.ctx.roster.get('lead')?.status).not.toBe('waiting');
  });
});

describe('headless --permission-mode ask', () => {
  it('refuses a command off the allow-list, saying why, and the run still ends', async () => {
    const fake = await startFakeApi();
    const ws = makeWorkspace('huddle-perm-');
    try {
      fake.enqueue(reply(toolUse('bash', { command: 'touch made.txt' })), replyText('Could not.'));
      const result = await runCli(['-p', 'make a file', '--permission-mode', 'ask', '--json'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
      expect(result.code, result.stderr).toBe(0);
      const events = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as HuddleEvent);
      const refused = events.find((e) => e.type === 'tool_result');
      expect(refused).toMatchObject({ name: 'bash', ok: false });
      expect(String(refused!.content)).toContain(
        'needs approval, which a headless run cannot ask for; run with --permission-mode auto or add it to the allow-list',
      );
      expect(existsSync(path.join(ws.dir, 'made.txt'))).toBe(false);

      const bad = await runCli(['-p', 'x', '--permission-mode', 'yolo'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--permission-mode takes plan, ask or auto, not 'yolo'");
      const badEnv = await runCli(['-p', 'x'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, HUDDLE_PERMISSION_MODE: 'sometimes' } });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain("HUDDLE_PERMISSION_MODE must be one of plan, ask, auto, not 'sometimes'");
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
});
