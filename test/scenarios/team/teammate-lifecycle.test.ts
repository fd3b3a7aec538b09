// A teammate's lifecycle (docs/contract.md#protocols): WORK, then IDLE until an
// inbox message or a claimable task wakes it (events, not a poll), or the idle timeout shuts it
// down; failures end as `failed`, never a stale `working`. In-process, against the fake API.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileBus } from '../../../src/runtime/store/file/file-bus.js';
import { overloaded, reply, replyText, text, toolUse, type Scripted } from '../../helpers/fake-api.ts';
import { inboxLine, lastToolResults, lastUserTexts, systemBlocks, turnsOf } from '../../helpers/team-harness.ts';
import { harnessPerTest } from '../../helpers/harness-per-test.js';

const open = harnessPerTest();

describe('teammate lifecycle', () => {
  it('with no work it goes idle and shuts itself down after the idle timeout, with a reason', async () => {
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '300' } });
    h.fake.script('alice', replyText('Nothing on the board for me.'));
    const alice = await h.spawn('alice', 'Look for work.');

    const idle = await h.waitForEvent('alice idle', (e) => e.agent === 'alice' && e.type === 'status' && e.status === 'idle');
    const member = await h.waitForStatus('alice', 'shutdown');
    await alice.done;

    expect(member.status_reason).toBe('idle for 300 ms');
    expect(h.statuses('alice')).toEqual(['working', 'idle', 'shutdown']);
    const shutdown = h.events.find((e) => e.agent === 'alice' && e.type === 'status' && e.status === 'shutdown')!;
    // Not before the timeout (a little slack for timer and clock granularity).
    expect(Date.parse(shutdown.ts) - Date.parse(idle.ts)).toBeGreaterThanOrEqual(280);
    expect(alice.finished).toBe(true);
    expect(h.requestsOf('alice')).toHaveLength(1);
    expect(h.fake.unscripted).toEqual([]);
  });

  it('an idle teammate wakes at once on an inbox message, delivered as one <inbox> turn', async () => {
    // An idle timeout longer than the test may run: only the message can wake her.
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '600000' } });
    h.fake.script('alice', replyText('Ready.'), replyText('Hello, lead.'));
    await h.spawn('alice', 'Wait for instructions.');
    await h.waitForStatus('alice', 'idle');

    const message = await h.team.bus.send({ from: 'lead', to: 'alice', content: 'Say hello.' });
    const request = await h.waitFor('alice to call the model again', () => h.requestsOf('alice')[1], 25_000);
    expect(lastUserTexts(request)).toEqual([`<inbox>\n${inboxLine('agent', message)}\n</inbox>`]);
    await h.waitForStatus('alice', 'idle');
    expect(h.statuses('alice')).toEqual(['working', 'idle', 'working', 'idle']);
  });

  it('an idle teammate wakes on a newly claimable task and auto-claims it with the exact turn', async () => {
    // An idle timeout longer than the test may run: only the board's change can wake her.
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '600000' } });
    const board = h.team.ctx.board;
    // Task #1 is the lead's, in progress; #2 waits for it.
    await board.create({ subject: 'Design the schema' }, 'lead');
    await board.claim(1, 'lead');
    await board.create({ subject: 'Write the migration', blockedBy: [1] }, 'lead');
    h.fake.script('alice', replyText('Ready.'), reply(toolUse('idle', {})));
    const alice = await h.spawn('alice', 'Take tasks from the board.');
    await h.waitForStatus('alice', 'idle');

    // A blocked task is no work: alice stays idle while #1 is open (she looked after going idle).
    expect((await board.get(2)).owner).toBeNull();
    expect(h.requestsOf('alice')).toHaveLength(1);

    await board.update(1, { status: 'completed' }, 'lead');
    const request = await h.waitFor('alice to work on task #2', () => h.requestsOf('alice')[1], 25_000);
    // Its first line is the claim; a fresh context follows it (docs/contract.md#injected-turns).
    expect(lastUserTexts(request)[0]!.split('\n')[0]).toBe('<auto-claimed>Task #2: Write the migration</auto-claimed>');
    const task = await board.get(2);
    expect(task).toMatchObject({ status: 'in_progress', owner: 'alice', blockedBy: [] });
    // The claim came after the completion of its blocker, in event order.
    const taskEvents = h.events.filter((e) => e.type === 'task');
    const completed = taskEvents.findIndex((e) => e.action === 'completed');
    const claimed = taskEvents.findIndex((e) => e.action === 'claimed' && e.agent === 'alice');
    expect(claimed).toBeGreaterThan(completed);
    await h.waitForStatus('alice', 'idle');
    expect(alice.finished).toBe(false);
  });

  it('an auto-claimed task with a description gets the exact line first', async () => {
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '10000' } });
    await h.team.ctx.board.create({ subject: 'Fix the login bug', description: 'The login form rejects valid passwords.' }, 'lead');
    h.fake.script('alice', replyText('Ready.'), replyText('On it.'));
    await h.spawn('alice', 'Take tasks from the board.');
    const request = await h.waitFor('the auto-claimed turn', () => h.requestsOf('alice')[1]);
    const [turn] = lastUserTexts(request);
    expect(turn!.split('\n')[0]).toBe('<auto-claimed>Task #1: Fix the login bug</auto-claimed>');
    // It had work in reach when its first turn ended, so it never showed as idle in between
    // (the second 'working' is the same status, its reason now naming the task: liveness).
    await h.waitForStatus('alice', 'idle');
    expect(h.statuses('alice')).toEqual(['working', 'working', 'idle']);
  });

  it('a teammate whose model fails for good becomes failed with the error, and the lead is told', async () => {
    const h = await open({ env: { HUDDLE_MAX_RETRIES: '1', HUDDLE_RETRY_BASE_MS: '5' } });
    h.fake.script('alice', overloaded(), overloaded());
    h.fake.script('bob', { kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad' } } });
    const alice = await h.spawn('alice', 'Do the thing.');
    const bob = await h.spawn('bob', 'Do the other thing.');

    const failedAlice = await h.waitForStatus('alice', 'failed');
    const failedBob = await h.waitForStatus('bob', 'failed');
    await Promise.all([alice.done, bob.done]);

    expect(failedAlice.error).toBe('overloaded (529) (after 2 attempts)');
    expect(failedBob.error).toMatch(/^HTTP 400 invalid_request_error: .*messages: bad/);
    // Never a stale `working`: the last status is failed and the loops have ended.
    expect(h.statuses('alice').at(-1)).toBe('failed');
    expect(h.statuses('bob').at(-1)).toBe('failed');
    expect(alice.finished && bob.finished).toBe(true);
    expect(h.events.filter((e) => e.agent === 'alice' && e.type === 'retry')).toHaveLength(1);
    expect(h.requestsOf('alice')).toHaveLength(2);
    expect(h.requestsOf('bob')).toHaveLength(1);

    const told = await h.waitFor('the lead to be told', () => {
      const inbox = h.inbox('lead');
      return inbox.length >= 2 ? inbox : undefined;
    });
    expect(told.map((m) => [m.from, m.type, m.content]).sort()).toEqual([
      ['huddle', 'message', `[huddle] alice failed: ${failedAlice.error}`],
      ['huddle', 'message', `[huddle] bob failed: ${failedBob.error}`],
    ]);
    // The lead is told before the status says failed (which may end a headless run).
    for (const name of ['alice', 'bob']) {
      const toldAt = h.events.findIndex((e) => e.type === 'message_sent' && e.to === 'lead' && String(e.content).includes(`${name} failed`));
      const failedAt = h.events.findIndex((e) => e.agent === name && e.type === 'status' && e.status === 'failed');
      expect(toldAt).toBeGreaterThanOrEqual(0);
      expect(toldAt).toBeLessThan(failedAt);
    }
  });

  it('several teammates stream at the same time', async () => {
    const h = await open();
    const slow = (who: string): Scripted => ({ kind: 'message', content: [text(`${who}: ${'working on it '.repeat(6)}`)], delayMs: 40, textChunk: 8 });
    h.fake.script('alice', slow('alice'));
    h.fake.script('bob', slow('bob'));
    await Promise.all([h.spawn('alice', 'Go.'), h.spawn('bob', 'Go.')]);
    await Promise.all([h.waitForStatus('alice', 'idle'), h.waitForStatus('bob', 'idle')]);

    const window = (agent: string) => {
      const start = h.requestsOf(agent)[0]!.at;
      const end = Date.parse(h.events.find((e) => e.agent === agent && e.type === 'usage')!.ts);
      return { start, end };
    };
    const a = window('alice');
    const b = window('bob');
    expect(a.end - a.start).toBeGreaterThan(300); // each stream takes a while...
    expect(a.start).toBeLessThan(b.end); // ...and they overlap in time
    expect(b.start).toBeLessThan(a.end);
    // The deltas interleave: some of bob's arrive between alice's first and last.
    const deltas = h.events.filter((e) => e.type === 'text_delta');
    const aliceIdx = deltas.flatMap((e, i) => (e.agent === 'alice' ? [i] : []));
    const between = deltas.slice(aliceIdx[0], aliceIdx.at(-1)).filter((e) => e.agent === 'bob');
    expect(between.length).toBeGreaterThan(0);
  });

  it("every teammate's own system block starts with its identity line, after the block its role shares", async () => {
    const h = await open();
    h.fake.script('alice', replyText('Ready.'));
    h.fake.script('rev-1', replyText('Ready.'));
    await h.spawn('alice', 'Go.');
    await h.spawn('rev-1', 'Review.', { role: 'reviewer' });
    await Promise.all([h.waitForStatus('alice', 'idle'), h.waitForStatus('rev-1', 'idle')]);
    const team = h.team.ctx.teamName;
    expect(team).toBe(path.basename(h.workspace.root));
    const [aliceShared, aliceOwn] = systemBlocks(h.requestsOf('alice')[0]!);
    const [reviewerShared, reviewerOwn] = systemBlocks(h.requestsOf('rev-1')[0]!);
    expect(aliceOwn!.text.startsWith(`You are 'alice', role: coder, team: ${team}.\n`)).toBe(true);
    expect(reviewerOwn!.text.startsWith(`You are 'rev-1', role: reviewer, team: ${team}.\n`)).toBe(true);
    // The role's instructions are in the shared block, marked for the prompt cache; nothing of the agent's own is.
    expect(reviewerShared!.text).toContain('As a reviewer');
    expect(reviewerShared!.cache_control).toEqual({ type: 'ephemeral' });
    expect(aliceShared!.text).not.toContain('alice');
    expect(reviewerShared!.text).not.toContain('rev-1');
  });

  it('messages are delivered as one <inbox> user turn, one JSON line each, exactly once', async () => {
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '10000' } });
    // The first answer streams slowly: both messages arrive while alice is in that call.
    h.fake.script(
      'alice',
      { kind: 'message', content: [text('Thinking about it for a while.')], delayMs: 150, textChunk: 4 },
      reply(toolUse('read_inbox', {})),
      replyText('Done.'),
    );
    await h.spawn('alice', 'Wait for instructions.');
    await h.waitFor('alice first request', () => h.requestsOf('alice')[0]);
    const first = await h.team.bus.send({ from: 'lead', to: 'alice', content: 'First: read "notes.md".' });
    const second = await h.team.bus.send({ from: 'lead', to: 'alice', content: 'Second: then\nsay done.' });
    const request = await h.waitFor('alice second request', () => h.requestsOf('alice')[1]);

    // Both in one user turn, exactly as docs/contract.md#injected-turns has it (the newline in the content stays escaped).
    expect(lastUserTexts(request)).toEqual([`<inbox>\n${inboxLine('agent', first)}\n${inboxLine('agent', second)}\n</inbox>`]);
    // A message's id is not the model's business (no tool takes it): left out.
    expect(lastUserTexts(request)[0]).not.toContain(first.id);

    // Exactly once: read_inbox then finds nothing new, and the last request holds each message once.
    const third = await h.waitFor('alice third request', () => h.requestsOf('alice')[2]);
    expect(lastToolResults(third)).toMatchObject([{ content: 'no new messages', is_error: false }]);
    const history = JSON.stringify(turnsOf(third));
    expect(history.split('First: read').length - 1).toBe(1);
    expect(history.split('Second: then').length - 1).toBe(1);
    await h.waitForStatus('alice', 'idle');
    const delivered = h.events.filter((e) => e.agent === 'alice' && e.type === 'message_delivered' && (e.ids as string[]).length > 0);
    expect(delivered.map((e) => e.ids)).toEqual([[first.id, second.id]]);
    // The file backend's cursor remembers the delivered ids (a file-only detail).
    expect((h.team.bus as FileBus).cursor('alice').delivered_ids_tail).toEqual([first.id, second.id]);
  });
});
