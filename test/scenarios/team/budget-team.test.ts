// Budgets in a running team: a teammate over its dollar budget waits (status `waiting`, context
// kept) before its next model call until the person extends it, then the run completes; /cost
// lists spend per task; a headless run over budget stops with exit code 3.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommandLine } from '../../../src/tui/commands/dispatch.js';
import type { CommandContext } from '../../../src/tui/commands/types.js';
import { ConsoleController } from '../../../src/tui/console-controller.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.ts';
import { openTeamHarness } from '../../helpers/team-harness.ts';
import { buildCliToTemp } from '../../helpers/build-cli.ts';

// claude-sonnet-4-6 costs $3 per million input tokens: 100k input tokens is $0.30 a call.
const DEAR = { input_tokens: 100_000, output_tokens: 1 };
const CHEAP = { input_tokens: 10, output_tokens: 5 };
const dear = (...args: Parameters<typeof reply>) => ({ ...reply(...args), usage: DEAR });
const cheap = <T extends object>(scripted: T) => ({ ...scripted, usage: CHEAP });

describe('a team over its budget', () => {
  it('pauses the spending teammate until the person extends its budget, then completes; /cost shows spend per task', async () => {
    const h = await openTeamHarness();
    try {
      const detach = h.team.approvals.attachAnswerer(); // as the console does
      h.team.budget.set('alice', 'usd', 0.5);
      const task = await h.team.ctx.board.create({ subject: 'Write the parser' }, 'lead');
      await h.team.ctx.board.claim(task.id, 'alice');

      h.fake.script(
        'lead',
        cheap(reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'write the parser (task #1)' }))),
        cheap(replyText('alice is on it')),
        cheap(replyText('all done: the parser is written')),
      );
      h.fake.script(
        'alice',
        dear(toolUse('task_get', { task_id: task.id })),
        dear(toolUse('task_list', {})),
        // Only after the extension:
        cheap(reply(toolUse('send_message', { to: 'lead', content: 'parser done' }))),
        cheap(replyText('done')),
      );
      h.team.start();
      h.team.lead.prompt('build a parser');

      const waiting = await h.waitFor('alice waits on her budget', () => h.team.ctx.roster.members().find((m) => m.name === 'alice' && m.status === 'waiting'));
      expect(waiting.status_reason).toMatch(/^budget: \$0\.60 of \$0\.50$/);
      const question = await h.waitFor('a budget stop in the needs-you queue', () => h.team.approvals.list().find((r) => r.tool === 'budget'));
      expect(question).toMatchObject({ agent: 'alice', kind: 'budget', summary: 'alice budget: $0.60 of $0.50' });
      // Stopped before the third call: the transcript is kept, nothing more was sent.
      expect(h.requestsOf('alice')).toHaveLength(2);
      expect(h.team.teammates.get('alice')!.loop.messages.length).toBeGreaterThanOrEqual(4);

      expect(h.team.approvals.resolve(question.id, 'approve')).toBe(true); // `y` in /approvals
      await h.waitFor('the run completes', async () => h.team.lead.lastText === 'all done: the parser is written' && (await h.team.isSettled()));
      expect(h.requestsOf('alice')).toHaveLength(4);
      expect(h.team.budget.limitsFor('alice').usd).toBeCloseTo(0.6 + 0.5, 3);
      expect(h.statuses('alice')).toContain('waiting');

      // /cost: per agent and per task, from the ledger (also on disk), as a page.
      await h.team.spend.flush();
      const store = createConsoleStore({ model: 'claude-sonnet-4-6', endpoint: '' });
      const controller = new ConsoleController(h.session, store, () => undefined);
      const context: CommandContext = { controller, state: { ...store.getState(), order: [] }, focus: 'lead' };
      const pageText = async (line: string, ctx: CommandContext = context) => {
        const result = await runCommandLine(line, ctx);
        expect(result.kind).toBe('page');
        return (result as { lines: string[] }).lines.join('\n');
      };
      const notes = [await pageText('/cost')];
      expect(notes[0]).toMatch(/per task:\n {2}#1 Write the parser: \$0\.60\d* \(4 calls; alice \$0\.60\d*\)/);
      expect(notes[0]).toMatch(/no task: \$0\.0\d+ \(3 calls\)/); // the lead's, and none of alice's
      // On disk, one line per call; alice's four on task #1.
      const onDisk = readFileSync(path.join(h.workspace.teamDir, 'spend.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { agent: string; task: { id: number; subject: string } | null });
      expect(onDisk.filter((line) => line.task?.id === 1 && line.task.subject === 'Write the parser')).toHaveLength(4);

      // /budget shows spend vs limits.
      notes.push(await pageText('/budget', { ...context, state: { ...context.state, order: ['lead', 'alice'] } }));
      expect(notes[1]).toMatch(/alice: \$0\.60\d* of \$1\.10 · 0\.\d min · 4 turns/);
      expect(await runCommandLine('/budget alice usd nope', context)).toMatchObject({
        kind: 'error',
        message: expect.stringContaining("no agent named 'alice'"),
      });
      controller.close();
      detach();
    } finally {
      await h.close();
    }
  });

  it('a person saying no stops the teammate (shut down with the budget reason)', async () => {
    const h = await openTeamHarness();
    try {
      h.team.approvals.attachAnswerer();
      h.team.budget.set('team', 'turns', 2);
      const bob = await h.spawn('bob', 'count to three');
      h.fake.script('bob', cheap(reply(toolUse('task_list', {}))), cheap(reply(toolUse('task_list', {}))), cheap(replyText('three')));
      const question = await h.waitFor('a budget stop', () => h.team.approvals.list().find((r) => r.agent === 'bob'));
      expect(question.summary).toBe('team budget: 2 of 2 turns');
      h.team.approvals.resolve(question.id, 'deny'); // `n`
      await bob.done;
      const member = h.team.ctx.roster.members().find((m) => m.name === 'bob')!;
      expect(member).toMatchObject({ status: 'shutdown', status_reason: 'stopped at team budget: 2 of 2 turns' });
      expect(h.requestsOf('bob')).toHaveLength(2);
    } finally {
      await h.close();
    }
  });
});

describe('headless over budget', () => {
  let cleanupCli: (() => void) | undefined;
  let runCli: typeof import('../../helpers/run-cli.ts').runCli;
  let fake: FakeApi;
  const workspaces: string[] = [];

  beforeAll(async () => {
    // A fresh bundle of this tree (dist/ belongs to `npm run build`).
    const built = await buildCliToTemp();
    cleanupCli = built.cleanup;
    process.env.HUDDLE_TEST_CLI = built.cli;
    ({ runCli } = await import('../../helpers/run-cli.ts'));
    fake = await startFakeApi();
  }, 60_000);

  afterAll(async () => {
    await fake?.close();
    cleanupCli?.();
    for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
  });

  const workspace = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'huddle-budget-ws-'));
    workspaces.push(dir);
    return dir;
  };
  const env = () => ({ ANTHROPIC_BASE_URL: fake.url });

  it('stops at the hard limit with exit code 3, a summary on stderr, and a done event with reason budget', async () => {
    const before = fake.requests.length;
    fake.script('lead', dear(toolUse('task_list', {})), dear(toolUse('task_list', {}))); // a third call would find nothing scripted
    const plain = await runCli(['-p', 'spend', '--budget-usd', '0.5', '--cwd', workspace()], { env: env() });
    expect(plain.code).toBe(3);
    expect(plain.stderr).toContain('huddle: stopped: the team reached its usd budget (team budget: $0.60 of $0.50; hit by lead)');
    expect(plain.stderr).toMatch(/lead: \$0\.60\d* in 2 model call\(s\)/);
    expect(fake.requests.length - before).toBe(2);

    // --json: the same stop as a done event; per-agent limits come from .team/budget.json.
    const dir = workspace();
    mkdirSync(path.join(dir, '.team'), { recursive: true });
    writeFileSync(path.join(dir, '.team', 'budget.json'), JSON.stringify({ agents: { lead: { turns: 1 } } }));
    fake.script('lead', cheap(reply(toolUse('task_list', {}))));
    const json = await runCli(['-p', 'spend', '--json', '--cwd', dir], { env: env() });
    expect(json.code).toBe(3);
    const done = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((event) => event.type === 'done');
    expect(done).toMatchObject({ ok: false, exit_code: 3, reason: 'budget', budget: { agent: 'lead', scope: 'lead', kind: 'turns', limit: 1 } });
    expect(fake.unscripted).toHaveLength(0);
  });

  it('refuses a broken budget file or flag with exit code 2 and what to fix', async () => {
    const dir = workspace();
    mkdirSync(path.join(dir, '.team'), { recursive: true });
    writeFileSync(path.join(dir, '.team', 'budget.json'), '{"team": {"usd": "lots"}}');
    const broken = await runCli(['-p', 'x', '--cwd', dir], { env: env() });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("team: a usd budget takes a number above 0, not 'lots'");
    const flag = await runCli(['-p', 'x', '--budget-turns', '2.5'], { env: env() });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--budget-turns takes a whole number above 0, not '2.5'");
  });
});
