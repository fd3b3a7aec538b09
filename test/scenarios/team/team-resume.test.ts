// Team.resumeMembers on a workspace left as a crash leaves it: logs, inbox cursors, roster and board
// written by hand at exactly the points a kill can hit, then the team resumed in process against
// the fake Messages API.
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT } from '../../../src/agents/loop/transcript-replay.js';
import { formatInbox } from '../../../src/runtime/inbox.js';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { reply, replyText, toolUse } from '../../helpers/fake-api.js';
import {
  allUserTexts,
  inboxMessages,
  lastToolResults,
  messageKey,
  openTeamHarness,
  systemText,
  toolNames,
  type TeamHarness,
} from '../../helpers/team-harness.js';

let h: TeamHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Appends events to an agent's log of an earlier (crashed) session. */
function oldLog(harness: TeamHarness, agent: string, events: object[]): void {
  const dir = path.join(harness.workspace.teamDir, 'logs', agent);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'session-2020-01-01T00-00-00-000Z.ndjson');
  for (const event of events) appendFileSync(file, `${JSON.stringify({ ts: '2020-01-01T00:00:00.000Z', agent, ...event })}\n`);
}

describe('Team.resumeMembers', () => {
  it('delivers a message whose delivery was logged but never acked exactly once, in the resume turn', async () => {
    h = await openTeamHarness();
    const harness = h;
    await harness.team.ctx.roster.add({ name: 'alice', role: 'coder', model: harness.config.model, status: 'shutdown' });
    const sent = await harness.team.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Task #1 done by alice' });
    const later = await harness.team.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'one more thing' });
    const peeked = await harness.team.bus.peek('lead', { limit: 1 });
    expect(peeked.messages.map((m) => m.id)).toEqual([sent.id]);
    // The kill came after the delivery was logged, before the ack and before the inbox turn.
    oldLog(harness, 'lead', [
      { type: 'prompt', text: 'build it', source: 'user' },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'text', text: 'Waiting for the team.' },
      { type: 'message_delivered', ids: [sent.id], messages: peeked.messages, next_offset: peeked.nextOffset },
    ]);
    harness.fake.respond(() => replyText('noted'));

    const report = await harness.team.resumeMembers();
    expect(report.resumed.map((r) => r.name)).toEqual(['lead']);
    harness.team.start();
    harness.team.lead.prompt('continue');
    await harness.waitFor('the lead to answer twice', () => harness.requestsOf('lead').length >= 1 && harness.team.lead.isIdle);
    await harness.waitFor('the lead inbox to be read', async () => (await harness.team.bus.unreadCount('lead')) === 0 && harness.team.lead.isIdle);

    const all = harness.requestsOf('lead').at(-1)!;
    const texts = allUserTexts(all).join('\n');
    const shown = inboxMessages(allUserTexts(all)).map(messageKey);
    expect(shown.filter((key) => key === messageKey(sent)).length, 'the logged-but-unacked message, once').toBe(1);
    expect(shown.filter((key) => key === messageKey(later)).length, 'the unread message after it, once').toBe(1);
    expect(texts).toContain("<identity>You are 'lead', role: lead, team:");
    expect(texts).toContain('build it');
    expect(texts).toContain('continue');
    // No new delivery of the logged one.
    const redelivered = harness.events.filter((e) => e.type === 'message_delivered' && (e.ids as string[]).includes(sent.id));
    expect(redelivered).toEqual([]);
  });

  it('does not show again a message whose inbox turn reached the model before the kill', async () => {
    h = await openTeamHarness();
    const harness = h;
    await harness.team.ctx.roster.add({ name: 'alice', role: 'coder', model: harness.config.model, status: 'shutdown' });
    const sent = await harness.team.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Task #1 done by alice' });
    const peeked = await harness.team.bus.peek('lead');
    await harness.team.bus.ack('lead', peeked.nextOffset);
    // The kill came after the inbox turn was logged (as the loop logs it: the ids left out) and answered.
    oldLog(harness, 'lead', [
      { type: 'prompt', text: 'build it', source: 'user' },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'text', text: 'Waiting for the team.' },
      { type: 'message_delivered', ids: [sent.id], messages: peeked.messages, next_offset: peeked.nextOffset },
      { type: 'prompt', text: formatInbox(peeked.messages), source: 'inbox' },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'text', text: 'Alice is done.' },
    ]);
    harness.fake.respond(() => replyText('noted'));

    await harness.team.resumeMembers();
    harness.team.start();
    harness.team.lead.prompt('continue');
    await harness.waitFor('the lead to answer', () => harness.requestsOf('lead').length >= 1 && harness.team.lead.isIdle);

    const shown = inboxMessages(allUserTexts(harness.requestsOf('lead').at(-1)!)).map(messageKey);
    expect(shown.filter((key) => key === messageKey(sent)).length, 'the message the model read before the kill, once').toBe(1);
  });

  it('brings back working and idle teammates, answers a cut tool call, releases the tasks of a failed one', async () => {
    h = await openTeamHarness();
    const harness = h;
    const { roster, board, bus } = harness.team.ctx;
    for (const name of ['alice', 'bob', 'carol']) await roster.add({ name, role: 'coder', model: harness.config.model, status: 'working' });
    await roster.setStatus('bob', 'idle');
    await roster.setStatus('carol', 'failed', { error: 'model call failed' });
    const t1 = await board.create({ subject: 'Write the greeting' }, 'lead');
    const t2 = await board.create({ subject: 'Write the farewell' }, 'lead');
    await board.claim(t1.id, 'alice');
    await board.claim(t2.id, 'carol');
    oldLog(harness, 'alice', [
      { type: 'prompt', text: `<auto-claimed>Task #${t1.id}: Write the greeting</auto-claimed>`, source: 'auto_claim' },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'tool_call', id: 'toolu_cut', name: 'write_file', input: { path: 'out/a.txt', content: 'hi' } },
    ]);
    oldLog(harness, 'bob', [{ type: 'prompt', text: 'Take tasks', source: 'spawn' }, { type: 'usage' }, { type: 'text', text: 'Ready.' }]);
    harness.fake.respond((request) => {
      // alice stays in its turn, so the released task is bob's to take.
      if (request.agent === 'alice') return { kind: 'hang' };
      return replyText('ok');
    });

    const report = await harness.team.resumeMembers();
    expect(report.resumed.map((r) => [r.name, r.idle, r.interrupted])).toEqual([
      ['lead', true, 0],
      ['alice', false, 1],
      ['bob', true, 0],
    ]);
    expect(report.released).toEqual([{ name: 'carol', tasks: 1, reason: 'failed earlier (model call failed)' }]);
    const released = await board.get(t2.id);
    expect([released.status, released.owner]).toEqual(['pending', null]);
    expect(roster.get('carol')?.status).toBe('shutdown');

    const first = await harness.waitFor('alice to be asked', () => harness.requestsOf('alice')[0]);
    expect(systemText(first)).toMatch(/^You are 'alice', role: coder, team: /m);
    expect(lastToolResults(first)).toEqual([{ tool_use_id: 'toolu_cut', content: INTERRUPTED_RESULT, is_error: true }]);
    const resume = allUserTexts(first).at(-1)!;
    expect(resume).toMatch(/^<identity>You are 'alice', role: coder, team: [^\n]*huddle was restarted/);
    expect(resume).toContain(`\nTask #${t1.id}: Write the greeting`);

    // bob resumed idle: no model call, its resume turn waits in its transcript; it takes the released task.
    const bobAsked = await harness.waitFor('bob to take the released task', () => harness.requestsOf('bob')[0]);
    const bobTexts = allUserTexts(bobAsked);
    expect(bobTexts.some((t) => t.includes("<identity>You are 'bob'") && t.includes('huddle was restarted'))).toBe(true);
    expect(bobTexts.at(-1)).toContain(`<auto-claimed>Task #${t2.id}: Write the farewell</auto-claimed>`);
    expect(await bus.unreadCount('bob')).toBe(0);
  });

  it('compacts a transcript too large to replay whole, then adds the resume turn', async () => {
    h = await openTeamHarness();
    const harness = h;
    const big = 'x'.repeat(450_000); // ~112k tokens: over half of a 200k window
    oldLog(harness, 'lead', [
      { type: 'prompt', text: 'read the big file', source: 'user' },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'tool_call', id: 'toolu_big', name: 'read_file', input: { path: 'big.txt' } },
      { type: 'tool_result', id: 'toolu_big', name: 'read_file', ok: true, content: big },
      { type: 'usage', input_tokens: 1, output_tokens: 1 },
      { type: 'text', text: 'It is all x.' },
    ]);
    harness.fake.respond((request) => (request.body?.tools?.length ? replyText('ok') : replyText('SUMMARY: the big file is all x.')));
    await harness.team.resumeMembers();
    harness.team.start();
    harness.team.lead.prompt('continue');
    const asked = await harness.waitFor('the lead to be asked after the summary', () => harness.requestsOf('lead').find((r) => r.body?.tools?.length));
    const texts = allUserTexts(asked);
    const body = JSON.stringify(asked.body.messages);
    expect(body.length).toBeLessThan(20_000);
    expect(texts[0]).toContain('<summary>\nSUMMARY: the big file is all x.\n</summary>');
    expect(texts.some((t) => t.includes('huddle was restarted'))).toBe(true);
    expect(texts.at(-1)).toBe('continue');
    expect(harness.events.some((e) => e.agent === 'lead' && e.type === 'compaction' && e.kind === 'summary')).toBe(true);
  });

  it('logs the board state a kill cut from the log (task file written, event not), once', async () => {
    h = await openTeamHarness();
    const harness = h;
    // A board without events: its writes reach the files only, as when the kill comes between the two.
    const silent = new FileBoard(harness.workspace.tasksDir);
    const task = await silent.create({ subject: 'Write the greeting' }, 'lead');
    await silent.claim(task.id, 'alice');
    await silent.update(task.id, { status: 'completed' }, 'alice');
    const logged = await harness.team.ctx.board.create({ subject: 'Logged as it happened' }, 'lead');
    harness.fake.respond(() => replyText('ok'));
    await harness.team.resumeMembers();
    const reconciled = harness.events.filter((e) => e.type === 'task' && e.action === 'reconciled');
    expect(reconciled.map((e) => [(e.task as { id: number }).id, (e.task as { status: string }).status])).toEqual([[task.id, 'completed']]);
    expect(reconciled.some((e) => (e.task as { id: number }).id === logged.id)).toBe(false);
  });
});

describe('a reviewer stopped holding a review', () => {
  it('a plan-mode teammate stopped before its plan was approved comes back read-only, whatever its status said', async () => {
    h = await openTeamHarness();
    const harness = h;
    const { roster } = harness.team.ctx;
    // Stopped before its first turn (its status still `working`) and while exploring: neither had its plan approved.
    await roster.add({ name: 'dana', role: 'coder', model: harness.config.model, status: 'working', plan_mode: 'pending' });
    await roster.add({ name: 'erin', role: 'coder', model: harness.config.model, status: 'working', plan_mode: 'approved' });
    oldLog(harness, 'dana', [{ type: 'prompt', text: 'Write usage.txt. You are in plan mode: send your plan first.', source: 'spawn' }]);
    oldLog(harness, 'erin', [{ type: 'prompt', text: 'Write notes.txt.', source: 'spawn' }]);
    harness.fake.respond(() => replyText('ok'));

    await harness.team.resumeMembers();
    const dana = await harness.waitFor('dana to be asked', () => harness.requestsOf('dana')[0]);
    const erin = await harness.waitFor('erin to be asked', () => harness.requestsOf('erin')[0]);
    expect(toolNames(dana)).toContain('plan_approval');
    expect(toolNames(dana)).not.toContain('write_file');
    expect(toolNames(erin)).toContain('write_file');
    expect(toolNames(erin)).not.toContain('plan_approval');
  });

  it('the roster remembers a plan-mode teammate until its plan is approved', async () => {
    h = await openTeamHarness();
    const harness = h;
    harness.fake.script('fay', reply(toolUse('plan_approval', { plan: 'Write the notes.' })), replyText('Waiting.'));
    await harness.spawn('fay', 'Write the notes.', { planModeRequired: true });
    expect(harness.team.ctx.roster.get('fay')?.plan_mode).toBe('pending');
    const request = await harness.waitForEvent('the plan', (e) => e.type === 'message_sent' && e.message_type === 'plan_approval_request');
    const requestId = /request_id: "(plan_[^"]+)"/.exec(String(request.content))![1]!;
    await harness.team.decidePlan(requestId, true);
    await harness.waitFor('the roster to say approved', () => harness.team.ctx.roster.get('fay')?.plan_mode === 'approved');
  });

  it('comes back without it held: the review goes back to the board and is taken and decided again', async () => {
    h = await openTeamHarness();
    const harness = h;
    const { roster, board } = harness.team.ctx;
    await roster.add({ name: 'alice', role: 'coder', model: harness.config.model, status: 'shutdown' });
    await roster.add({ name: 'rita', role: 'reviewer', model: harness.config.model, status: 'working' });
    const task = await board.create({ subject: 'Write the greeting', requires_review: true }, 'lead');
    await board.claim(task.id, 'alice');
    await board.update(task.id, { status: 'review' }, 'alice');
    // The kill came after the review was taken on the board, before its turn was in rita's log.
    expect(await board.claimReview('rita')).toMatchObject({ id: task.id, reviewer: 'rita' });
    oldLog(harness, 'rita', [{ type: 'prompt', text: 'Review what comes', source: 'spawn' }, { type: 'usage' }, { type: 'text', text: 'Ready.' }]);
    harness.fake.respond((request) => {
      if (request.agent !== 'rita') return replyText('ok');
      const asked = allUserTexts(request).some((text) => text.includes(`<review-requested>Task #${task.id}`));
      if (asked && lastToolResults(request).length === 0) return reply(toolUse('review_approve', { task_id: task.id, comment: 'Fine.' }));
      return lastToolResults(request).length ? reply(toolUse('idle', {})) : replyText('Ready.');
    });

    await harness.team.resumeMembers();
    harness.team.start();
    await harness.waitFor('the review decided', async () => (await board.get(task.id)).status === 'completed');
    expect(await board.get(task.id)).toMatchObject({ status: 'completed', reviewer: 'rita', review_comment: 'Fine.' });
  });
});
