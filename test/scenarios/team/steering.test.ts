// Supervision: steering any agent mid-task, the stall watchdog, /restart, and status reasons
// that say why (liveness). In-process teams against the fake Messages API.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/tui/commands/commands.js';
import { StallWatchdog } from '../../../src/agents/lifecycle/watchdog.js';
import { EventHub } from '../../../src/runtime/events/events.js';
import { ConsoleController } from '../../../src/tui/console-controller.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { reply, replyText, text, toolUse } from '../../helpers/fake-api.ts';
import { lastUserTexts, openTeamHarness, turnsOf, type TeamHarness, type TeamHarnessOptions } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
let controller: ConsoleController | undefined;
afterEach(async () => {
  controller?.close();
  controller = undefined;
  await harness?.close();
  harness = undefined;
});

async function open(options: TeamHarnessOptions = {}): Promise<TeamHarness> {
  harness = await openTeamHarness(options);
  return harness;
}

function consoleFor(h: TeamHarness): { controller: ConsoleController; store: ReturnType<typeof createConsoleStore> } {
  const store = createConsoleStore({ model: h.config.model, endpoint: h.fake.url });
  controller = new ConsoleController(h.session, store, () => undefined);
  return { controller, store };
}

/** The text of the first user turn of a request. */
function firstUserText(request: { body: unknown }): string {
  const first = turnsOf(request as never)[0];
  const content = first?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).flatMap((block: { type: string; text?: string }) => (block.type === 'text' ? [block.text ?? ''] : [])).join('\n');
}

describe('steering', () => {
  it('a teammate in a long stream is interrupted, then sent a new instruction, and follows it', async () => {
    const h = await open();
    const { controller } = consoleFor(h);
    h.fake.script(
      'alice',
      // A slow stream: ~125 deltas 40 ms apart; it is interrupted at the first one.
      { kind: 'message', content: [text('I will rewrite the whole module from scratch. '.repeat(20))], delayMs: 40 },
      reply(toolUse('write_file', { path: 'steered.txt', content: 'as the person asked' })),
      replyText('Wrote steered.txt.'),
    );
    const alice = await h.spawn('alice', 'Refactor the module.');
    await h.waitForEvent('alice streaming', (e) => e.agent === 'alice' && e.type === 'text_delta');
    expect(controller.interrupt('alice')).toBe(true);
    await h.waitForEvent('alice interrupted', (e) => e.agent === 'alice' && e.type === 'error' && e.interrupted === true);

    await controller.sendTo('alice', 'Stop that. Only write steered.txt.');
    const next = await h.waitFor('alice to call the model again', () => h.requestsOf('alice')[1]);
    expect(lastUserTexts(next).join('\n')).toContain('Stop that. Only write steered.txt.');
    // What was streamed before the interrupt stays in the transcript (it matches the screen).
    expect(turnsOf(next).some((turn) => turn.role === 'assistant')).toBe(true);

    const call = await h.waitForEvent('alice next tool call', (e) => e.agent === 'alice' && e.type === 'tool_call');
    expect(call.name).toBe('write_file');
    await h.waitForEvent('write done', (e) => e.agent === 'alice' && e.type === 'tool_result' && e.ok === true);
    expect(readFileSync(path.join(h.root, 'steered.txt'), 'utf8')).toBe('as the person asked');
    await h.waitForStatus('alice', 'idle');
    expect(alice.finished).toBe(false);
    expect(h.fake.unscripted).toEqual([]);
  });

  it('an interrupted teammate takes no new task until a message comes; then it goes on, and claims again', async () => {
    const h = await open();
    const { controller } = consoleFor(h);
    h.fake.script(
      'alice',
      { kind: 'message', content: [text('Working through task one, step by step. '.repeat(20))], delayMs: 40 },
      replyText('Understood: I will finish task one later.'),
      replyText('Task two is done.'),
    );
    const first = await h.team.ctx.board.create({ subject: 'Task one' }, 'lead');
    await h.spawn('alice', 'Take tasks from the board.');
    await h.waitForEvent('alice streaming', (e) => e.agent === 'alice' && e.type === 'text_delta');
    expect(controller.interrupt('alice')).toBe(true);
    await h.waitForEvent('alice interrupted', (e) => e.agent === 'alice' && e.type === 'error' && e.interrupted === true);
    const held = await h.waitFor('alice held', () => {
      const member = h.team.ctx.roster.get('alice');
      return member?.status === 'idle' && /^waiting for a message since/.test(String(member.status_reason)) ? member : undefined;
    });
    expect(held.status).toBe('idle');

    // Work lands on the board: she leaves it alone, and the team counts as settled (nobody will take it).
    const second = await h.team.ctx.board.create({ subject: 'Task two' }, 'lead');
    expect(await h.team.isSettled()).toBe(true);
    expect((await h.team.ctx.board.get(second.id))?.owner ?? null).toBe(null);
    expect(h.requestsOf('alice')).toHaveLength(1);

    // A message is what wakes her; after it she takes work from the board again.
    await controller.sendTo('alice', 'Leave task one for now.');
    await h.waitFor('alice to claim task two', async () => (await h.team.ctx.board.get(second.id))?.owner === 'alice');
    const requests = h.requestsOf('alice');
    expect(lastUserTexts(requests[1]!).join('\n')).toContain('Leave task one for now.');
    expect((await h.team.ctx.board.get(first.id))?.owner).toBe('alice');
  });

  it("a lead in a turn gets the person's prompt before its next model call, as a user turn", async () => {
    const h = await open();
    const { controller } = consoleFor(h);
    h.fake.script(
      'lead',
      { kind: 'message', content: [text('Let me look at the board first, then plan.'), toolUse('task_list', {})], delayMs: 30 },
      replyText('Board is empty; noted your request.'),
    );
    h.team.start();
    const turnEnded = new Promise((resolve) => h.team.lead.onTurnEnd(resolve));
    h.team.lead.prompt('Plan the work.');
    await h.waitForEvent('lead streaming', (e) => e.agent === 'lead' && e.type === 'text_delta');
    await controller.sendTo('lead', 'Also: keep it to two tasks.');
    await turnEnded;

    const requests = h.requestsOf('lead');
    expect(requests).toHaveLength(2);
    const texts = lastUserTexts(requests[1]!);
    expect(texts).toContain('Also: keep it to two tasks.');
    // The tool result of the first call is in the same user turn: the prompt came mid-turn.
    expect(JSON.stringify(turnsOf(requests[1]!).at(-1))).toContain('tool_result');
    const prompts = h.events.filter((e) => e.agent === 'lead' && e.type === 'prompt');
    expect(prompts.map((e) => [e.text, e.source])).toEqual([
      ['Plan the work.', 'user'],
      ['Also: keep it to two tasks.', 'user'],
    ]);
    // Nothing left queued: no third turn.
    const idle = await h.waitForStatus('lead', 'idle');
    expect(idle.status_reason).toMatch(/^waiting for messages since \d\d:\d\d$/);
    expect(h.team.lead.isIdle).toBe(true);
    expect(h.requestsOf('lead')).toHaveLength(2);
  });
});

describe('stall watchdog', () => {
  it('a model that goes silent trips the watchdog: interrupted, a warning, a status reason, and the lead is told', async () => {
    const h = await open({ env: { HUDDLE_STALL_MS: '300' } });
    expect(h.config.stallMs).toBe(300);
    h.fake.script('alice', { kind: 'hang', content: [text('Thinking about it')] });
    h.fake.script('lead', replyText('I saw that alice stalled.'));
    h.team.start();
    const started = Date.now();
    await h.spawn('alice', 'Do the thing.');

    const warning = await h.waitForEvent('stall warning', (e) => e.agent === 'alice' && e.type === 'warning' && e.stalled === true, 5_000);
    expect(String(warning.message)).toMatch(/^stalled: no event for \d+ ms while working; interrupted$/);
    expect(Number(warning.silent_ms)).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await h.waitForEvent('alice interrupted', (e) => e.agent === 'alice' && e.type === 'error' && e.interrupted === true);

    const member = await h.waitFor('alice reason to name the stall', () => {
      const m = h.team.ctx.roster.get('alice');
      return m?.status === 'idle' && m.status_reason?.startsWith('interrupted at') ? m : undefined;
    });
    expect(member.status_reason).toMatch(/^interrupted at \d\d:\d\d after \d+ ms without an event; waiting for a message since \d\d:\d\d$/);

    const told = await h.waitFor('lead inbox', () => h.inbox('lead').find((m) => m.from === 'huddle' && m.content.includes('alice stalled')));
    expect(told.content).toContain('was interrupted');
    // The lead, woken by it, reads it as a user turn.
    const leadRequest = await h.waitFor('lead woken', () => h.requestsOf('lead')[0]);
    expect(lastUserTexts(leadRequest).join('\n')).toContain('alice stalled');
    // One stall, reported once.
    expect(h.events.filter((e) => e.type === 'warning' && e.stalled === true)).toHaveLength(1);
  });

  it('a stall or failure goes to the needs-you queue when a console is attached; y restarts the agent', async () => {
    const h = await open({ env: { HUDDLE_STALL_MS: '300' } });
    const { controller } = consoleFor(h);
    h.fake.script('alice', { kind: 'hang', content: [text('Hmm')] });
    h.fake.script('lead', replyText('Noted.'));
    h.team.start();
    const first = await h.spawn('alice', 'Do the thing.');
    const notice = await h.waitFor('a notice', () => h.team.approvals.list().find((r) => r.agent === 'alice'), 5_000);
    expect(notice).toMatchObject({ kind: 'notice', tool: 'stalled' });
    expect(notice.summary).toContain('alice stalled');

    h.fake.script('alice', replyText('Summary: alice had just started.'), replyText('Back at it.'));
    controller.answerApproval(notice.id, 'approve');
    const restarted = await h.waitForEvent('restart', (e) => e.agent === 'alice' && e.type === 'warning' && String(e.message).startsWith('restarted alice'));
    expect(String(restarted.message)).toContain('with a summary of its transcript');
    expect(h.team.teammates.get('alice')).not.toBe(first);
    expect(first.finished).toBe(true);
  });
});

describe('stall watchdog: one timer', () => {
  it('is armed by events only while an agent works, and disarms when none does', async () => {
    const hub = new EventHub();
    const agent = { name: 'alice', loop: { running: true } };
    const stalls: number[] = [];
    const watchdog = new StallWatchdog({ hub, stallMs: 60, agents: () => [agent], isWorking: () => true, onStall: (_a, ms) => stalls.push(ms) });
    try {
      expect(watchdog.armed).toBe(false); // nothing happened yet: no timer
      hub.emit('alice', 'prompt', { text: 'go', source: 'user' });
      expect(watchdog.armed).toBe(true);
      const deadline = Date.now() + 5_000;
      while (stalls.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(stalls).toHaveLength(1);
      expect(stalls[0]).toBeGreaterThanOrEqual(60);
      // The agent stops working: the next check finds nobody to watch and leaves no timer.
      agent.loop.running = false;
      while (watchdog.armed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(watchdog.armed).toBe(false);
      expect(stalls).toHaveLength(1);
    } finally {
      watchdog.stop();
    }
  });

  it('a failed teammate reaches the lead through its inbox and the needs-you queue', async () => {
    const h = await open();
    consoleFor(h);
    h.fake.script('alice', { kind: 'status', status: 400 });
    h.fake.script('lead', replyText('I see alice failed.'));
    h.team.start();
    await h.spawn('alice', 'Do the thing.');
    const failed = await h.waitForStatus('alice', 'failed');
    const told = await h.waitFor('lead inbox', () => h.inbox('lead').find((m) => m.from === 'huddle' && m.content.includes('alice failed')));
    expect(told.content).toContain(String(failed.error));
    const notice = await h.waitFor('a notice', () => h.team.approvals.list().find((r) => r.agent === 'alice'));
    expect(notice).toMatchObject({ kind: 'notice', tool: 'failed' });
    expect(notice.summary).toContain('alice failed');
    // n dismisses: nothing restarts.
    expect(h.team.approvals.resolve(notice.id, 'deny')).toBe(true);
    expect(h.team.approvals.list()).toEqual([]);
    // Its loop has ended (done settles just after the failed status is written); nothing restarted it.
    await h.team.teammates.get('alice')!.done;
    expect(h.team.teammates.get('alice')?.finished).toBe(true);
    expect(h.events.some((e) => e.agent === 'alice' && e.type === 'warning' && String(e.message).startsWith('restarted'))).toBe(false);
  });
});

describe('/restart', () => {
  it('keeps the tasks and starts the new loop with the identity block, owned tasks and a summary', async () => {
    const h = await open();
    const task = await h.team.ctx.board.create({ subject: 'Write the parser', description: 'src/parser.ts' }, 'lead');
    await h.team.ctx.board.claim(task.id, 'alice').catch(() => undefined);
    h.fake.script('alice', reply(toolUse('write_file', { path: 'parser.ts', content: '// half done\n' })), replyText('Parser half done.'));
    const old = await h.spawn('alice', 'Work on your task.');
    await h.waitForStatus('alice', 'idle');
    // A claim made before the spawn may be refused (unknown owner); make sure alice owns it.
    if ((await h.team.ctx.board.get(task.id)).owner !== 'alice') await h.team.ctx.board.claim(task.id, 'alice');

    // The console opens on the team as it is (the roster fills its agent list).
    const { controller, store } = consoleFor(h);
    h.fake.script('alice', replyText('Summary: parser.ts is half written; finish the tokenizer next.'), replyText('Continuing the parser.'));
    const restart = COMMANDS.find((c) => c.name === 'restart')!;
    const result = await restart.run({ controller, state: store.getState(), focus: 'lead' }, 'alice');
    expect(result).toMatchObject({ kind: 'ok' });
    expect((result as { message: string }).message).toContain('restarted alice with a summary of its transcript');

    const fresh = h.team.teammates.get('alice')!;
    expect(fresh).not.toBe(old);
    expect(old.finished).toBe(true);
    const requests = await h.waitFor('new loop request', () => (h.requestsOf('alice').length >= 4 ? h.requestsOf('alice') : undefined));
    // Request 3 wrote the summary (one user turn asking for it); request 4 is the new loop's first.
    expect(firstUserText(requests[2]!)).toContain('parser.ts');
    const first = requests[3]!;
    expect(turnsOf(first)).toHaveLength(1);
    const opening = firstUserText(first);
    expect(opening.startsWith(`<identity>You are 'alice', role: coder, team: ${h.team.ctx.teamName}.`)).toBe(true);
    expect(opening).toContain(`Task #${task.id}: Write the parser`);
    expect(opening).toContain('Summary: parser.ts is half written; finish the tokenizer next.');
    // Same tools and workspace: the file it wrote is still there and the task is still its own.
    expect(existsSync(path.join(h.root, 'parser.ts'))).toBe(true);
    expect((await h.team.ctx.board.get(task.id)).owner).toBe('alice');
    expect(first.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(requests[0]!.body.tools.map((t: { name: string }) => t.name).sort());
    // Logged as a context reset (a resume replays from it); spend carries over.
    expect(
      h.events.some((e) => e.agent === 'alice' && e.type === 'context_reset' && e.reason === 'restart' && String(e.summary).includes('half written')),
    ).toBe(true);
    expect(fresh.loop.totals.modelCalls).toBeGreaterThanOrEqual(3);
    await h.waitForStatus('alice', 'idle');
  });

  it('without a summary from the model it falls back to the last assistant texts; an unknown name is refused', async () => {
    const h = await open();
    h.fake.script('alice', replyText('I looked at the tokenizer.'));
    await h.spawn('alice', 'Look around.');
    await h.waitForStatus('alice', 'idle');
    const { controller, store } = consoleFor(h);
    h.fake.script('alice', { kind: 'status', status: 400 }, replyText('Resuming.'));
    const restart = COMMANDS.find((c) => c.name === 'restart')!;
    const result = await restart.run({ controller, state: store.getState(), focus: 'lead' }, 'alice');
    expect((result as { message: string }).message).toMatch(/restarted alice with its last messages \(the summary failed: /);
    const request = await h.waitFor('new loop', () => h.requestsOf('alice')[2]);
    expect(firstUserText(request)).toContain('I looked at the tokenizer.');

    const bad = await restart.run({ controller, state: store.getState(), focus: 'lead' }, 'zed');
    expect(bad).toMatchObject({ kind: 'error' });
    expect((bad as { message: string }).message).toContain("no agent named 'zed'");
  });
});

describe('/restart the lead', () => {
  it("resets the lead's transcript to its identity block and a summary; its next prompt continues from there", async () => {
    const h = await open();
    h.fake.script('lead', replyText('I planned three tasks for the parser.'));
    h.team.start();
    let ended = new Promise((resolve) => h.team.lead.onTurnEnd(resolve));
    h.team.lead.prompt('Plan the parser.');
    await ended;

    h.fake.script('lead', replyText('Summary: the parser is planned as three tasks.'), replyText('Carrying on.'));
    const result = await h.team.restart('lead');
    expect(result.summary).toBe('model');
    expect(h.team.lead.loop.messages).toHaveLength(1);

    ended = new Promise((resolve) => h.team.lead.onTurnEnd(resolve));
    h.team.lead.prompt('What next?');
    await ended;
    const request = h.requestsOf('lead').at(-1)!;
    expect(turnsOf(request)).toHaveLength(1);
    const opening = firstUserText(request);
    expect(opening.startsWith(`<identity>You are 'lead', role: lead, team: ${h.team.ctx.teamName}.`)).toBe(true);
    expect(opening).toContain('Summary: the parser is planned as three tasks.');
    expect(opening).toContain('What next?');
    expect(opening).not.toContain('I planned three tasks');
  });
});

describe('liveness', () => {
  it('the roster says since when an agent waits for work, and which task it works on', async () => {
    const h = await open();
    h.fake.script('alice', replyText('Nothing for me yet.'), replyText('Task done.'));
    await h.spawn('alice', 'Wait for tasks.');
    const idle = await h.waitForStatus('alice', 'idle');
    expect(idle.status_reason).toMatch(/^waiting for work since \d\d:\d\d$/);

    const task = await h.team.ctx.board.create({ subject: 'Add the tokenizer' }, 'lead');
    const working = await h.waitForEvent(
      'alice working on the task',
      (e) => e.agent === 'alice' && e.type === 'status' && e.status === 'working' && e.task === task.id,
    );
    expect(working.reason).toBe(`task #${task.id}: Add the tokenizer`);
    // In the roster file too, as written at that moment.
    const file = JSON.parse(readFileSync(path.join(h.root, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string; status_reason?: string }> };
    expect(file.members.find((m) => m.name === 'alice')?.status_reason).toMatch(/^(task #\d+: Add the tokenizer|waiting for work since \d\d:\d\d)$/);
    await h.waitFor('alice idle again', () => h.statuses('alice').filter((s) => s === 'idle').length >= 2);
  });
});
