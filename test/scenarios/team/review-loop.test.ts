// The review loop (issue "Context management, worktree isolation and permission modes"): a task
// created with requires_review goes to `review` when its owner completes it, an idle reviewer
// takes it (atomically) with a <review-requested> turn, and approves it or sends it back to the
// owner with feedback as a message; after the round limit the lead decides. In-process teams
// against the fake Messages API; the file tools run for real in a temp workspace.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderToString } from 'ink';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { type Task } from '../../../src/runtime/store/board.js';
import type { EventRecord as HuddleEvent } from '../../../src/runtime/events/events.js';
import { TaskBoardView } from '../../../src/tui/components/TaskBoardView.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { reply, replyText, toolUse, type Scripted } from '../../helpers/fake-api.ts';
import type { RecordedRequest } from '../../helpers/fake-api.ts';
import {
  allUserTexts,
  inboxMessages,
  lastToolResults,
  lastUserTexts,
  openTeamHarness,
  pastToolUses,
  readEventLogs,
  toolNames,
  turnsOf,
  type TeamHarness,
  type TeamHarnessOptions,
} from '../../helpers/team-harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(options: TeamHarnessOptions = {}): Promise<TeamHarness> {
  const h = await openTeamHarness({ ...options, env: { HUDDLE_IDLE_TIMEOUT_MS: '20000', ...options.env } });
  cleanups.push(() => h.close());
  return h;
}

const SUBJECT = 'Write the greeting';
const FILE = 'out/greeting.txt';
const FEEDBACK = 'Typo in out/greeting.txt line 1: "helo" must be "hello".';
const REVIEW_LINE = /<review-requested>Task #(\d+): ([^<]*)<\/review-requested>/;

/** The coder: an auto-claimed task gets a first draft (with a typo), feedback gets a fix; both complete the task. */
function coderStep(request: RecordedRequest): Scripted {
  const texts = lastUserTexts(request);
  const claim = /<auto-claimed>Task #(\d+): [^<]*<\/auto-claimed>/.exec(texts.join('\n'));
  if (claim) {
    const id = Number(claim[1]);
    return reply(toolUse('write_file', { path: FILE, content: 'helo, world\n' }), toolUse('task_update', { task_id: id, status: 'completed' }));
  }
  const feedback = inboxMessages(texts).find((m) => /^Changes requested on task #\d+/.test(m.content));
  if (feedback) {
    const id = Number(/task #(\d+)/.exec(feedback.content)![1]);
    return reply(toolUse('write_file', { path: FILE, content: 'hello, world\n' }), toolUse('task_update', { task_id: id, status: 'completed' }));
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Ready.');
}

/** The reviewer: reads the file for real, then decides with `verdict` (feedback text, or 'approve'). */
function reviewerStep(request: RecordedRequest, verdict: (content: string) => string): Scripted {
  if (REVIEW_LINE.test(lastUserTexts(request).join('\n'))) return reply(toolUse('read_file', { path: FILE }));
  const results = lastToolResults(request);
  if (pastToolUses(request).at(-1)?.name === 'read_file' && results.length > 0) {
    const asked = allUserTexts(request)
      .filter((t) => REVIEW_LINE.test(t))
      .at(-1)!;
    const id = Number(REVIEW_LINE.exec(asked)![1]);
    const decision = verdict(results[0]!.content);
    return decision === 'approve'
      ? reply(toolUse('review_approve', { task_id: id, comment: 'Reads well.' }))
      : reply(toolUse('review_request_changes', { task_id: id, feedback: decision }));
  }
  if (results.length > 0) return reply(toolUse('idle', {}));
  return replyText('Ready to review.');
}

/** The lead's first turn: one task that requires review, a coder and a reviewer. */
function planTurn(): Scripted {
  return reply(
    toolUse('task_create', { subject: SUBJECT, description: `Write ${FILE} with a greeting.`, requires_review: true }),
    toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Take tasks from the board.' }),
    toolUse('spawn_teammate', { name: 'rita', role: 'reviewer', prompt: 'Review finished work.' }),
  );
}

type Step = [agent: string, action: unknown, status: unknown, owner: unknown, reviewer: unknown];
const step = (e: HuddleEvent): Step => {
  const task = e.task as Task;
  return [e.agent, e.action, task.status, task.owner, task.reviewer ?? null];
};
const taskEvents = (events: HuddleEvent[], id: number) => events.filter((e) => e.type === 'task' && (e.task as Task).id === id);

describe('the review loop', () => {
  it('one round of changes, then approval: owner → review → reviewer → back to the owner → review → completed', async () => {
    const h = await open();
    h.fake.respond((request) => {
      if (request.agent === 'lead') return turnsOf(request).length === 1 ? planTurn() : replyText('Planned; the team is on it.');
      if (request.agent === 'alice') return coderStep(request);
      if (request.agent === 'rita') return reviewerStep(request, (content) => (content.includes('helo,') ? FEEDBACK : 'approve'));
      return undefined;
    });
    const board = h.team.ctx.board;
    let settledEarly = false;
    h.team.start();
    h.team.lead.prompt('Write a greeting, and have it reviewed.');
    await h.waitFor(
      'the task to be approved and the team to settle',
      async () => {
        const settled = h.team.lead.lastText === 'Planned; the team is on it.' && (await h.team.isSettled());
        // Completed is final, so reading after isSettled can only miss an early settle, never invent one.
        const done = (await board.list()).some((t) => t.id === 1 && t.status === 'completed');
        if (settled && !done) settledEarly = true;
        return settled && done;
      },
      15_000,
    );

    expect(settledEarly).toBe(false);
    expect(readFileSync(path.join(h.root, FILE), 'utf8')).toBe('hello, world\n');
    expect(await board.get(1)).toMatchObject({
      status: 'completed',
      owner: 'alice',
      reviewer: 'rita',
      requires_review: true,
      review_rounds: 1,
      review_feedback: FEEDBACK,
      review_comment: 'Reads well.',
      blockedBy: [],
    });

    // The board history, in emission order...
    const expected: Step[] = [
      ['lead', 'created', 'pending', null, null],
      ['alice', 'claimed', 'in_progress', 'alice', null],
      ['alice', 'review_requested', 'review', 'alice', null],
      ['rita', 'review_claimed', 'review', 'alice', 'rita'],
      ['rita', 'changes_requested', 'in_progress', 'alice', null],
      ['alice', 'review_requested', 'review', 'alice', null],
      ['rita', 'review_claimed', 'review', 'alice', 'rita'],
      ['rita', 'review_approved', 'completed', 'alice', 'rita'],
    ];
    expect(taskEvents(h.events, 1).map(step)).toEqual(expected);
    // ...and the same in the ndjson logs on disk (each agent's file in its own order).
    const logged = taskEvents(readEventLogs(h.root), 1);
    expect(logged).toHaveLength(expected.length);
    for (const agent of ['lead', 'alice', 'rita']) {
      expect(logged.filter((e) => e.agent === agent).map(step)).toEqual(expected.filter(([who]) => who === agent));
    }

    // Completing sent it to review, and the owner was told so.
    const aliceRequests = h.requestsOf('alice');
    const firstUpdate = aliceRequests.flatMap((r) => lastToolResults(r)).find((r) => r.content.startsWith('task #1'));
    expect(firstUpdate).toMatchObject({ is_error: false });
    expect(firstUpdate!.content).toContain('status in_progress → review');

    // The reviewer was handed the task with the exact turn, the description and who did it.
    const reviewTurns = h
      .requestsOf('rita')
      .flatMap((r) => lastUserTexts(r))
      .filter((t) => REVIEW_LINE.test(t));
    expect(reviewTurns).toHaveLength(2);
    expect(reviewTurns[0]!.split('\n').slice(0, 3)).toEqual([
      `<review-requested>Task #1: ${SUBJECT}</review-requested>`,
      `Write ${FILE} with a greeting.`,
      'Done by alice. First review.',
    ]);
    expect(reviewTurns[1]).toContain('changes were requested 1 time (at most 3 before the lead decides)');
    expect(reviewTurns[1]).toContain(`Last feedback: ${FEEDBACK}`);

    // The feedback reached the owner as a message from the reviewer, in an <inbox> turn.
    const feedback = h.inbox('alice').filter((m) => m.from === 'rita');
    expect(feedback).toHaveLength(1);
    expect(feedback[0]).toMatchObject({ type: 'message', to: 'alice' });
    expect(feedback[0]!.content).toContain(FEEDBACK);
    const delivered = aliceRequests.flatMap((r) => inboxMessages(lastUserTexts(r)));
    expect(delivered.map((m) => m.content)).toEqual([feedback[0]!.content]);
    expect(h.fake.unscripted).toEqual([]);
  });

  it('a coder is offered no review tools, the lead decides without findings, a reviewer cannot review its own task', async () => {
    const h = await open();
    const board = h.team.ctx.board;
    await board.create({ subject: SUBJECT, requires_review: true }, 'lead');
    await board.create({ subject: 'Reviewed by its own reviewer', requires_review: true }, 'lead');
    await board.claim(1, 'alice');
    await board.claim(2, 'rex');
    await board.update(2, { status: 'review' }, 'rex');
    h.fake.script(
      'alice',
      reply(toolUse('task_update', { task_id: 1, status: 'completed' }), toolUse('review_approve', { task_id: 1 })),
      reply(toolUse('idle', {})),
    );
    await h.spawn('alice', 'Finish task #1.');
    await h.waitForStatus('alice', 'idle');

    // Only who may decide is offered the tools: their schemas do not ride along in a coder's requests.
    expect(toolNames(h.requestsOf('alice')[0]!).filter((name) => name.startsWith('review_'))).toEqual([]);
    const [updated, notOffered] = lastToolResults(h.requestsOf('alice')[1]!);
    expect(updated).toMatchObject({ is_error: false });
    expect(notOffered).toMatchObject({ is_error: true, content: expect.stringMatching(/^unknown tool 'review_approve'; the tools you have are: /) });
    // The refusal changed nothing, and nobody was messaged.
    expect(await board.get(1)).toMatchObject({ status: 'review', owner: 'alice', reviewer: null });
    expect(h.inbox('alice')).toEqual([]);

    // The lead may decide without a reviewer; it files no findings by domain.
    h.fake.script('lead', reply(toolUse('review_approve', { task_id: 1, comment: 'Fine by me.' })), replyText('Approved.'));
    h.team.start();
    h.team.lead.prompt('Approve task #1.');
    await h.waitFor('the lead to approve', () => h.team.lead.lastText === 'Approved.');
    expect(toolNames(h.requestsOf('lead')[0]!).filter((name) => name.startsWith('review_'))).toEqual(['review_approve', 'review_request_changes']);
    expect(lastToolResults(h.requestsOf('lead')[1]!)).toMatchObject([{ is_error: false, content: `approved task #1 (${SUBJECT}) by alice: completed` }]);
    expect(await board.get(1)).toMatchObject({ status: 'completed', reviewer: 'lead', review_comment: 'Fine by me.' });
    expect(taskEvents(h.events, 1).map((e) => e.action)).toEqual(['created', 'claimed', 'review_requested', 'review_approved']);

    // A reviewer has the tools, but not for its own task.
    h.fake.script('rex', reply(toolUse('review_approve', { task_id: 2 })), reply(toolUse('idle', {})));
    await h.spawn('rex', 'Look at task #2.', { role: 'reviewer' });
    await h.waitForStatus('rex', 'idle');
    const [own] = lastToolResults(h.requestsOf('rex')[1]!);
    expect(own).toEqual({
      tool_use_id: expect.any(String),
      is_error: true,
      content: 'review_approve failed: you cannot review your own task #2; a teammate with role reviewer (or the lead) decides it',
    });
    expect(await board.get(2)).toMatchObject({ status: 'review', owner: 'rex', reviewer: null });
  });

  it('at the round limit the reviewer escalates to the lead: the task stays in review until the lead decides', async () => {
    const h = await open({ env: { HUDDLE_REVIEW_MAX_ROUNDS: '1' } });
    h.fake.respond((request) => {
      if (request.agent === 'lead') {
        if (turnsOf(request).length === 1) return planTurn();
        const escalation = inboxMessages(lastUserTexts(request)).find((m) => m.from === 'rita' && m.content.includes('still needs changes'));
        if (escalation) return reply(toolUse('review_approve', { task_id: 1, comment: 'Good enough; ship it.' }));
        if (pastToolUses(request).at(-1)?.name === 'review_approve' && lastToolResults(request).length > 0) return replyText('Accepted after escalation.');
        return replyText('Waiting for the team.');
      }
      if (request.agent === 'alice') return coderStep(request);
      // A reviewer that is never satisfied.
      if (request.agent === 'rita') return reviewerStep(request, () => FEEDBACK);
      return undefined;
    });
    const board = h.team.ctx.board;
    h.team.start();
    h.team.lead.prompt('Write a greeting, and have it reviewed.');
    await h.waitFor(
      'the lead to accept the escalated task',
      async () => h.team.lead.lastText === 'Accepted after escalation.' && (await h.team.isSettled()),
      15_000,
    );

    expect(taskEvents(h.events, 1).map(step)).toEqual([
      ['lead', 'created', 'pending', null, null],
      ['alice', 'claimed', 'in_progress', 'alice', null],
      ['alice', 'review_requested', 'review', 'alice', null],
      ['rita', 'review_claimed', 'review', 'alice', 'rita'],
      ['rita', 'changes_requested', 'in_progress', 'alice', null],
      ['alice', 'review_requested', 'review', 'alice', null],
      ['rita', 'review_claimed', 'review', 'alice', 'rita'],
      // The limit: it stays in review, held for the lead.
      ['rita', 'updated', 'review', 'alice', 'rita'],
      ['lead', 'review_approved', 'completed', 'alice', 'lead'],
    ]);
    const held = taskEvents(h.events, 1).at(-2)!.task as Task;
    expect(held).toMatchObject({ review_escalated: true, review_rounds: 1, review_feedback: FEEDBACK });
    expect(await board.get(1)).toMatchObject({ status: 'completed', review_rounds: 1, review_comment: 'Good enough; ship it.' });
    expect((await board.get(1)).review_escalated).toBeUndefined();

    // The owner got one round of feedback; the second verdict went to the lead, and rita was told.
    expect(h.inbox('alice').filter((m) => m.from === 'rita')).toHaveLength(1);
    const escalations = h.inbox('lead').filter((m) => m.from === 'rita');
    expect(escalations).toHaveLength(1);
    expect(escalations[0]!.content).toContain(
      `Task #1 (${SUBJECT}) by alice still needs changes after 1 review round of changes (the limit is 1): ${FEEDBACK}`,
    );
    const ritaResults = h
      .requestsOf('rita')
      .flatMap((r) => lastToolResults(r))
      .map((r) => r.content);
    expect(ritaResults.filter((c) => c.startsWith('task #1 reached the review limit (1 rounds of changes)'))).toHaveLength(1);
    expect(h.fake.unscripted).toEqual([]);
  });

  it('two idle reviewers never both take the same review', async () => {
    const h = await open();
    const board = h.team.ctx.board;
    const approveOnTurn = (request: RecordedRequest): Scripted => {
      const asked = REVIEW_LINE.exec(lastUserTexts(request).join('\n'));
      if (asked) return reply(toolUse('review_approve', { task_id: Number(asked[1]) }));
      if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
      return replyText('Ready to review.');
    };
    h.fake.respond((request) => (request.agent === 'rita' || request.agent === 'rex' ? approveOnTurn(request) : undefined));
    // A read-only reviewer role: its allow-list still leaves it the review tools.
    mkdirSync(path.join(h.workspace.teamDir, 'roles'), { recursive: true });
    writeFileSync(path.join(h.workspace.teamDir, 'roles', 'reviewer.md'), '---\ntools: [read_file, grep]\n---\nReview carefully.\n');
    await Promise.all([h.spawn('rita', 'Review.', { role: 'reviewer' }), h.spawn('rex', 'Review.', { role: 'reviewer' })]);
    await Promise.all([h.waitForStatus('rita', 'idle'), h.waitForStatus('rex', 'idle')]);

    // A pending task is no work for a reviewer: both stay idle while alice works on it.
    await board.create({ subject: SUBJECT, requires_review: true }, 'lead');
    await board.claim(1, 'alice');
    expect(await board.reviewable()).toEqual([]);
    expect(await h.team.isSettled()).toBe(true);
    // Entering review wakes both at once; one takes it. Until then the team is not settled: an
    // idle reviewer with a review in reach is about to work (as an idle teammate with a claimable task).
    await board.update(1, { status: 'review' }, 'alice');
    expect(await h.team.isSettled()).toBe(false);
    await h.waitFor('the review to be approved', async () => (await board.get(1)).status === 'completed');
    await Promise.all([h.waitForStatus('rita', 'idle'), h.waitForStatus('rex', 'idle')]);

    const turns = ['rita', 'rex'].map((name) => h.requestsOf(name).filter((r) => REVIEW_LINE.test(lastUserTexts(r).join('\n'))).length);
    expect(turns.sort()).toEqual([0, 1]);
    const claims = taskEvents(h.events, 1).filter((e) => e.action === 'review_claimed');
    expect(claims).toHaveLength(1);
    expect((await board.get(1)).reviewer).toBe(claims[0]!.agent);
    expect(toolNames(h.requestsOf('rita')[0]!).sort()).toEqual([
      'grep',
      'idle',
      'read_file',
      'read_inbox',
      'review_approve',
      'review_finding',
      'review_request_changes',
      'send_message',
      'shutdown_response',
    ]);
  });
});

describe('FileBoard review operations', () => {
  let dir: string;
  const boards = (n: number) => Array.from({ length: n }, () => new FileBoard(dir, { agent: 'lead' }));
  const fresh = () => {
    dir = mkdtempSync(path.join(tmpdir(), 'huddle-review-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  };

  it('racing claimReview over many boards: every review taken exactly once, never by its owner', async () => {
    fresh();
    const [setup] = boards(1);
    const TASKS = 40;
    for (let i = 1; i <= TASKS; i++) {
      await setup!.create({ subject: `task ${i}`, requires_review: true }, 'lead');
      await setup!.claim(i, 'alice');
      await setup!.update(i, { status: 'review' }, 'alice');
    }
    const reviewers = ['rita', 'rex', 'ruth', 'alice'];
    const taken = await Promise.all(
      boards(reviewers.length).map(async (board, i) => {
        const mine: Task[] = [];
        for (let task = await board.claimReview(reviewers[i]!); task; task = await board.claimReview(reviewers[i]!)) mine.push(task);
        return mine;
      }),
    );
    const ids = taken.flat().map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    expect(taken[3]).toEqual([]); // alice owns them all
    const onDisk = new Map((await setup!.list()).map((t): [number, Task] => [t.id, t]));
    taken.forEach((mine, i) => mine.forEach((t) => expect(onDisk.get(t.id)).toMatchObject({ status: 'review', reviewer: reviewers[i] })));
    expect(await setup!.reviewable()).toEqual([]);
  });

  it('decideReview: who may decide, the round limit, the lead override, unblocking, release', async () => {
    fresh();
    const [board] = boards(1);
    const b = board!;
    await b.create({ subject: 'reviewed', requires_review: true }, 'lead');
    await b.create({ subject: 'after it', blockedBy: [1] }, 'lead');
    await expect(b.decideReview(1, 'rita', { approve: true })).rejects.toThrow(
      'task #1 is pending, not in review; only a task in review can be approved or sent back',
    );
    await b.claim(1, 'alice');
    await expect(b.decideReview(1, 'rita', { approve: true })).rejects.toThrow(
      'task #1 is in_progress, not in review; it comes to review when alice completes it',
    );
    await b.update(1, { status: 'review' }, 'alice');
    await expect(b.decideReview(1, 'alice', { approve: true })).rejects.toThrow('you cannot review your own task #1');
    expect(await b.claimReview('rita')).toMatchObject({ id: 1, reviewer: 'rita' });
    await expect(b.decideReview(1, 'rex', { approve: true })).rejects.toThrow('task #1 is being reviewed by rita');
    await expect(b.decideReview(1, 'rita', { approve: false, feedback: '  ' })).rejects.toThrow(/feedback is required/);

    // Round 1: back to alice.
    expect(await b.decideReview(1, 'rita', { approve: false, feedback: 'fix it', maxRounds: 1 })).toMatchObject({
      outcome: 'changes_requested',
      task: { status: 'in_progress', owner: 'alice', reviewer: null, review_rounds: 1 },
    });
    await b.update(1, { status: 'review' }, 'alice');
    // The reviewer that took it went away: the review is open again.
    await b.claimReview('rita');
    expect(await b.release('rita')).toMatchObject([{ id: 1, reviewer: null, status: 'review' }]);
    await b.claimReview('rex');
    // Round 2 is over the limit: escalated, held, nobody else takes it.
    expect(await b.decideReview(1, 'rex', { approve: false, feedback: 'still wrong', maxRounds: 1 })).toMatchObject({
      outcome: 'escalated',
      task: { status: 'review', reviewer: 'rex', review_escalated: true, review_rounds: 1 },
    });
    expect(await b.reviewable()).toEqual([]);
    expect(await b.claimReview('ruth')).toBeUndefined();
    await expect(b.decideReview(1, 'rex', { approve: true })).rejects.toThrow('task #1 was escalated to the lead after 1 rounds of changes');
    // The lead is not bound by the limit, and approval unblocks #2.
    await b.decideReview(1, 'lead', { approve: true, override: true });
    expect(await b.get(1)).toMatchObject({ status: 'completed', reviewer: 'lead' });
    expect((await b.claimable()).map((t) => t.id)).toEqual([2]);
  });
});

describe('the console board view', () => {
  it('shows the reviewer next to the owner while a task is in review', () => {
    const store = createConsoleStore({ model: 'm', endpoint: 'e' });
    const at = '2026-01-01T00:00:00.000Z';
    const task = (id: number, status: Task['status'], extra: Partial<Task> = {}): Task => ({
      id,
      subject: `task ${id}`,
      description: '',
      status,
      owner: 'alice',
      blockedBy: [],
      blocks: [],
      created_at: at,
      updated_at: at,
      ...extra,
    });
    store.setState({
      tasks: [
        task(1, 'review', { requires_review: true, reviewer: 'rita' }),
        task(2, 'review', { requires_review: true, reviewer: null }),
        task(3, 'completed', { requires_review: true, reviewer: 'rita' }),
      ],
    });
    const lines = renderToString(createElement(TaskBoardView, { store, width: 80, height: 10 }), { columns: 80 }).split('\n');
    const row = (id: number) => lines.find((line) => line.startsWith(`${id} `))!;
    expect(row(1)).toMatch(/review\s+task 1\s+alice→rita\s+-$/);
    expect(row(2)).toMatch(/review\s+task 2\s+alice\s+-$/);
    expect(row(3)).toMatch(/completed\s+task 3\s+alice\s+-$/);
    expect(lines[0]).toContain('2 review, 1 completed');
  });
});
