// Bad input through the tools of a running team: each is a clear tool error (is_error, back to
// the model) or a warning event, and nothing else is disturbed: the agent goes on, the other
// tasks and messages are intact.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply, replyText, toolUse } from '../../helpers/fake-api.ts';
import { inboxLine, lastToolResults, lastUserTexts, openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function open(): Promise<TeamHarness> {
  harness = await openTeamHarness({ env: { HUDDLE_IDLE_TIMEOUT_MS: '20000' } });
  return harness;
}

/** Starts the lead on `prompt` and resolves with the tool results of its second request. */
async function leadToolResults(h: TeamHarness, prompt: string) {
  h.team.start();
  h.team.lead.prompt(prompt);
  await h.waitFor('the lead turn to end', () => h.team.lead.lastOutcome);
  expect(h.team.lead.lastOutcome?.kind).toBe('end_turn');
  return lastToolResults(h.requestsOf('lead')[1]!);
}

describe('bad input to a running team', () => {
  it('unknown recipient, unknown task id and a blockedBy cycle are tool errors; the rest of the call runs', async () => {
    const h = await open();
    // alice is a known name, busy in a long model call (so she claims nothing meanwhile).
    h.fake.script('alice', { kind: 'hang' });
    await h.spawn('alice', 'Think hard.');
    await h.waitFor('alice in her model call', () => h.requestsOf('alice')[0]);
    h.fake.script(
      'lead',
      reply(
        toolUse('send_message', { to: 'carol', content: 'hi' }),
        toolUse('task_update', { task_id: 99, status: 'completed' }),
        toolUse('task_get', { task_id: 42 }),
        toolUse('task_create', { subject: 'First' }),
        toolUse('task_create', { subject: 'Second', blockedBy: [1] }),
        toolUse('task_update', { task_id: 1, addBlockedBy: [2] }),
        toolUse('task_update', { task_id: 2, addBlocks: [2] }),
        toolUse('task_create', { subject: 'Third', blockedBy: [7] }),
        toolUse('send_message', { to: 'alice', content: 'Still reachable.' }),
      ),
      replyText('Done.'),
    );
    const results = await leadToolResults(h, 'Exercise the tools.');

    expect(results.map((r) => [r.is_error, r.content])).toEqual([
      [true, "send_message failed: no teammate named 'carol'; known names: lead, alice"],
      [true, 'task_update failed: no task #99; the board is empty'],
      [true, 'task_get failed: no task #42; the board is empty'],
      [false, 'created task #1: First'],
      [false, 'created task #2: Second (blocked by #1)'],
      [true, 'task_update failed: would create a cycle: #1 → #2 → #1 (each arrow: blocks); a task cannot wait for itself'],
      [true, expect.stringMatching(/^task_update failed: would create a cycle: #2 → #2/)],
      [true, 'task_create failed: no task #7; existing tasks: 1, 2'],
      [false, expect.stringMatching(/^sent to alice \(msg_/)],
    ]);
    // Nothing else was disturbed: the board holds exactly the two tasks, unchanged by the refusals.
    const tasks = await h.team.ctx.board.list();
    expect(tasks.map((t) => [t.id, t.status, t.blockedBy, t.blocks])).toEqual([
      [1, 'pending', [], [2]],
      [2, 'pending', [1], []],
    ]);
    // No inbox for the unknown name, and alice got the message after the errors.
    expect(h.inbox('carol')).toEqual([]);
    expect(h.inbox('alice').map((m) => m.content)).toEqual(['Still reachable.']);
    expect(h.team.lead.lastText).toBe('Done.');
  });

  it('a malformed task file gives a warning event; the rest of the board works', async () => {
    const h = await open();
    const tasksDir = h.workspace.tasksDir;
    mkdirSync(tasksDir, { recursive: true });
    await h.team.ctx.board.create({ subject: 'Good task' }, 'lead');
    writeFileSync(path.join(tasksDir, 'task_2.json'), '{"id": 2, "subject": "torn', 'utf8');
    h.fake.script(
      'lead',
      reply(
        toolUse('task_list', {}),
        toolUse('task_get', { task_id: 2 }),
        toolUse('task_create', { subject: 'Another good task' }),
        toolUse('task_get', { task_id: 1 }),
      ),
      replyText('Listed.'),
    );
    const results = await leadToolResults(h, 'Show the board.');

    const warnings = h.events.filter((e) => e.type === 'warning' && String(e.file).endsWith('task_2.json'));
    expect(warnings).toHaveLength(1); // once per content of the file, not on every scan
    expect(String(warnings[0]!.error)).toMatch(/^not valid JSON/);
    expect(results[0]!.is_error).toBe(false);
    expect(results[0]!.content).toContain('#1 [pending] Good task (owner: -)');
    expect(results[0]!.content).toMatch(/warning: skipped .*task_2\.json: not valid JSON/);
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringContaining('task_2.json is not a valid task file') });
    expect(results[2]).toMatchObject({ is_error: false, content: 'created task #3: Another good task' });
    expect(results[3]!.is_error).toBe(false);
    expect(JSON.parse(results[3]!.content)).toMatchObject({ id: 1, subject: 'Good task', status: 'pending' });

    // A teammate still claims the good tasks (and skips the broken one).
    h.fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const claim = /<auto-claimed>Task #(\d+)/.exec(lastUserTexts(request).join('\n'));
      if (claim) return reply(toolUse('task_update', { task_id: Number(claim[1]), status: 'completed' }));
      return replyText('Next.');
    });
    await h.spawn('alice', 'Take tasks.');
    await h.waitFor('both good tasks completed', async () => {
      const tasks = await h.team.ctx.board.list();
      return tasks.length === 2 && tasks.every((t) => t.status === 'completed') && tasks;
    });
    expect(readFileSync(path.join(tasksDir, 'task_2.json'), 'utf8')).toBe('{"id": 2, "subject": "torn');
    await h.waitForStatus('alice', 'idle');
  });

  it('a torn inbox line gives a warning event; the other messages are delivered', async () => {
    const h = await open();
    h.fake.script('alice', replyText('Ready.'), replyText('Got it.'), replyText('Got that too.'));
    const alice = await h.spawn('alice', 'Wait.');
    await h.waitForStatus('alice', 'idle');

    // A writer died mid-line: a fragment with no newline is left in alice's inbox.
    const inboxFile = path.join(h.workspace.teamDir, 'inbox', 'alice.jsonl');
    const good = await h.team.bus.send({ from: 'lead', to: 'alice', content: 'Before the tear.' });
    await h.waitFor('alice to read the first message', () => h.requestsOf('alice')[1]);
    await h.waitForStatus('alice', 'idle');
    appendFileSync(inboxFile, '{"id":"msg_torn","type":"message","from":"lead","to":"ali');
    const after = await h.team.bus.send({ from: 'lead', to: 'alice', content: 'After the tear.' });
    const request = await h.waitFor('alice to read the second message', () => h.requestsOf('alice')[2]);

    expect(lastUserTexts(request)).toEqual([`<inbox>\n${inboxLine('agent', after)}\n</inbox>`]);
    const warning = await h.waitForEvent('the torn-line warning', (e) => e.type === 'warning' && e.agent === 'alice');
    expect(warning).toMatchObject({ line: 2, text: '{"id":"msg_torn","type":"message","from":"lead","to":"ali' });
    expect(String(warning.message)).toMatch(/^skipped line 2 of .*alice\.jsonl: not valid JSON/);
    expect(h.events.filter((e) => e.type === 'warning')).toHaveLength(1);
    // Each good message reached the model once; the fragment never did.
    const history = JSON.stringify(request.body.messages);
    expect(history.split(good.content).length - 1).toBe(1);
    expect(history.split(after.content).length - 1).toBe(1);
    expect(history).not.toContain('msg_torn');
    await h.waitForStatus('alice', 'idle');
    expect(alice.finished).toBe(false);
  });
});
