// A quiet lead (docs/cost.md#a-quiet-lead): reports arriving close together wake it once (it reads its
// inbox when no new message came for leadCoalesceMs and no report is imminent), so its calls scale
// with decisions, not with reports.
import { afterEach, describe, expect, it } from 'vitest';
import { replyText, type RecordedRequest } from '../../helpers/fake-api.ts';
import { allUserTexts, inboxMessages, openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Resolves when the lead has said `text`. */
const leadSaid = (h: TeamHarness, text: string) => h.waitForEvent(`the lead to say ${text}`, (e) => e.agent === 'lead' && e.type === 'text' && e.text === text);

/** Who sent the inbox messages a request of the lead's carried. */
const sendersIn = (request: RecordedRequest) => inboxMessages(allUserTexts(request)).map((m) => m.from);

/** bob reports and goes idle; then the lead answers once, with alice's report and his in one request. */
async function bobReportsAndOneLookTakesBoth(h: TeamHarness, content: string, answer: string): Promise<void> {
  await h.team.ctx.bus.send({ type: 'message', from: 'bob', to: 'lead', content });
  await h.team.ctx.roster.setStatus('bob', 'idle');
  await leadSaid(h, answer);
  const requests = h.requestsOf('lead');
  expect(requests).toHaveLength(1);
  expect(sendersIn(requests[0]!)).toEqual(['alice', 'bob']);
}

describe('quiet lead', () => {
  it('three reports arriving close together wake the lead once', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '400' } }));
    h.fake.script('lead', replyText('Noted all three.'), replyText('Noted again.'));
    // Working, as a teammate is when it sends (a team at rest is read at once: the test below).
    for (const name of ['alice', 'bob', 'cid']) await h.team.ctx.roster.add({ name, role: 'coder', status: 'working' });
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    const send = (from: string) => h.team.ctx.bus.send({ type: 'message', from, to: 'lead', content: `${from}: task done, tests pass` });
    await send('alice');
    // The first report has woken the lead: it is gathering (busy), not yet asking the model.
    await h.waitFor('the lead to notice the first report', () => !h.team.lead.isIdle);
    expect(h.requestsOf('lead')).toHaveLength(0);
    await send('bob');
    await send('cid');
    await leadSaid(h, 'Noted all three.');
    await h.waitFor('the lead idle again', () => h.team.lead.isIdle);

    const requests = h.requestsOf('lead');
    expect(requests).toHaveLength(1);
    expect(sendersIn(requests[0]!)).toEqual(['alice', 'bob', 'cid']);
  });

  // Two members on the roster, no model calls of theirs: alice finishes task 1 and reports (or only
  // asks), bob stays working on task 2, so a report of his is imminent the whole time.
  async function aliceAndBusyBob(h: TeamHarness): Promise<void> {
    const board = h.team.ctx.board;
    const [one, two] = [await board.create({ subject: 'One' }, 'lead'), await board.create({ subject: 'Two' }, 'lead')];
    await h.team.ctx.roster.add({ name: 'alice', role: 'coder', status: 'working' });
    await h.team.ctx.roster.add({ name: 'bob', role: 'coder', status: 'working' });
    await board.claim(one.id, 'alice');
    await board.claim(two.id, 'bob');
    await h.team.ctx.roster.setStatus('bob', 'working', { task: two.id });
    h.team.start();
    await h.waitForStatus('lead', 'idle');
  }

  it('reports of finished work wait past eight quiet windows while a teammate still works on a task', async () => {
    const quietMs = 300;
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: String(quietMs) } }));
    h.fake.script('lead', replyText('Noted both.'));
    await aliceAndBusyBob(h);
    await h.team.ctx.board.update(1, { status: 'completed' }, 'alice');
    const reported = Date.now();
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Task #1 done.' });
    // Past the eight windows a question would wait at most, the lead still gathers.
    await h.waitFor('eight quiet windows and a bit', () => Date.now() - reported > 8 * quietMs + 200);
    expect(h.requestsOf('lead')).toHaveLength(0);
    expect(h.team.lead.isIdle).toBe(false);
    // bob finishes: nothing more is imminent, and one look takes both reports.
    await h.team.ctx.board.update(2, { status: 'completed' }, 'bob');
    await bobReportsAndOneLookTakesBoth(h, 'Task #2 done.', 'Noted both.');
  });

  it('a message that is not a report of finished work waits eight quiet windows at most', async () => {
    const quietMs = 300;
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: String(quietMs) } }));
    h.fake.script('lead', replyText('Answered.'));
    await aliceAndBusyBob(h);
    // alice asks without having finished anything; bob keeps working and never reports.
    const asked = Date.now();
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Should task #1 use ESM?' });
    await leadSaid(h, 'Answered.');
    // Eight windows (2.4 s) it waited; reports alone would have waited thirty (9 s).
    expect(Date.now() - asked).toBeLessThan(30 * quietMs);
    expect(h.team.ctx.roster.get('bob')!.status).toBe('working');
    expect(sendersIn(h.requestsOf('lead')[0]!)).toEqual(['alice']);
  });

  it('once no teammate works or waits, the lead reads the reports at once, without waiting out the quiet window', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '60000' } }));
    h.fake.script('lead', replyText('All in.'));
    for (const name of ['alice', 'bob']) await h.team.ctx.roster.add({ name, role: 'coder', status: 'working' });
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'alice: done' });
    await h.team.ctx.roster.setStatus('alice', 'idle');
    // bob still works: the lead gathers.
    await h.waitFor('the lead to notice the report', () => !h.team.lead.isIdle);
    expect(h.requestsOf('lead')).toHaveLength(0);
    // Answered within the test's own timeout, far below the minute of quiet the window asks for.
    await bobReportsAndOneLookTakesBoth(h, 'bob: done', 'All in.');
  });

  it("huddle's own notice ends the wait at once", async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '60000' } }));
    h.fake.script('lead', replyText('Seen.'));
    await aliceAndBusyBob(h);
    await h.team.ctx.board.update(1, { status: 'completed' }, 'alice');
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Task #1 done.' });
    await h.waitFor('the lead to notice the report', () => !h.team.lead.isIdle);
    expect(h.requestsOf('lead')).toHaveLength(0);
    await h.team.ctx.bus.send({ type: 'message', from: 'huddle', to: 'lead', content: 'bob failed: connection refused' });
    // Within the test's own timeout, far below the minute of quiet the window asks for; bob still works.
    await leadSaid(h, 'Seen.');
    expect(sendersIn(h.requestsOf('lead')[0]!)).toEqual(['alice', 'huddle']);
  });

  it('a notice the lead has already read does not cut a later wait short', async () => {
    const quietMs = 300;
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: String(quietMs) } }));
    h.fake.script('lead', replyText('Seen.'), replyText('Noted.'));
    await aliceAndBusyBob(h);
    await h.team.ctx.bus.send({ type: 'message', from: 'huddle', to: 'lead', content: 'carl failed: connection refused' });
    await leadSaid(h, 'Seen.');
    await h.waitFor('the lead idle again', () => h.team.lead.isIdle);
    await h.team.ctx.board.update(1, { status: 'completed' }, 'alice');
    const reported = Date.now();
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'Task #1 done.' });
    await h.waitFor('the lead to notice the report', () => !h.team.lead.isIdle);
    // bob still works on task 2: the report waits (eight windows and more), it is not read at once.
    await h.waitFor('two quiet windows', () => Date.now() - reported > 2 * quietMs);
    expect(h.requestsOf('lead')).toHaveLength(1);
  });

  it("the person's prompt does not wait for the reports to settle", async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '60000' } }));
    h.fake.script('lead', replyText('On it.'));
    await h.team.ctx.roster.add({ name: 'alice', role: 'coder', status: 'working' });
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'alice: done' });
    await h.waitFor('the lead to notice the report', () => !h.team.lead.isIdle);
    h.team.lead.prompt('Summarise, please.');
    // Within the test's own timeout, far below the minute the reports alone would wait.
    await leadSaid(h, 'On it.');
    const texts = allUserTexts(h.requestsOf('lead')[0]!).join('\n');
    expect(texts).toContain('Summarise, please.');
  });
});
