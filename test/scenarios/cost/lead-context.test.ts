// The lead's context: a teammate's report carries the result of the task it completed (files it wrote,
// the verify outcome), added by huddle; reports the lead handled turns ago are sent as one line each.
// Read from the lead's requests to the fake Messages API.
import { afterEach, describe, expect, it } from 'vitest';
import { reply, replyText, toolUse } from '../../helpers/fake-api.ts';
import { allUserTexts, inboxMessages, openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';
import { COLLAPSE_STEP_TURNS, KEEP_REPORT_TURNS } from '../../../src/agents/loop/handled-reports.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("the lead's context", () => {
  it("a teammate's completion carries its files and verify outcome in the report the lead gets", async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '0' } }));
    const task = await h.team.ctx.board.create({ subject: 'Write a.txt', description: '', verify: 'true' }, 'lead');
    h.fake.script(
      'alice',
      reply(toolUse('claim_task', { task_id: task.id })),
      reply(toolUse('write_file', { path: 'out/a.txt', content: 'a\n' })),
      reply(toolUse('task_update', { task_id: task.id, status: 'completed' })),
      reply(toolUse('send_message', { to: 'lead', content: 'Wrote out/a.txt; checked it.' })),
      replyText('Reported.'),
    );
    h.fake.script('lead', replyText('Noted.'));
    h.team.start();
    await h.spawn('alice', 'Do task 1.');
    await h.waitForEvent('the lead read the report', (e) => e.agent === 'lead' && e.type === 'text' && e.text === 'Noted.');

    const [report] = inboxMessages(allUserTexts(h.requestsOf('lead')[0]!));
    expect(report).toMatchObject({ from: 'alice', content: 'Wrote out/a.txt; checked it.' });
    expect(report!['tasks']).toEqual([
      { id: task.id, subject: 'Write a.txt', status: 'completed', files: ['out/a.txt'], verify: expect.stringMatching(/^verify passed: true/) },
    ]);
  });

  it('reports older than the last lead turns reach the model as one line each; the newest stay whole', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '0' } }));
    const turns = KEEP_REPORT_TURNS + COLLAPSE_STEP_TURNS;
    for (let i = 0; i < turns + 1; i++) h.fake.script('lead', replyText(`Noted ${i}.`));
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    const long = `${'All tests pass and the parser handles every case we listed. '.repeat(6)}`;
    for (let i = 0; i <= turns; i++) {
      await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: `Report ${i}. ${long}` });
      await h.waitForEvent(`the lead answered report ${i}`, (e) => e.agent === 'lead' && e.type === 'text' && e.text === `Noted ${i}.`);
    }
    const requests = h.requestsOf('lead');
    expect(requests).toHaveLength(turns + 1);

    // Below KEEP + STEP turns everything is whole; the boundary then moves STEP turns at a time (one cache miss per STEP turns).
    const handledIn = (index: number) => allUserTexts(requests[index]!).filter((t) => t.startsWith('<inbox-handled>'));
    expect(handledIn(turns - 2)).toEqual([]);
    expect(handledIn(turns - 1)).toHaveLength(COLLAPSE_STEP_TURNS);
    expect(handledIn(turns)).toEqual(handledIn(turns - 1));
    // Then the oldest STEP reports are one short line each, the rest whole.
    const texts = allUserTexts(requests[turns]!);
    const handled = texts.filter((t) => t.startsWith('<inbox-handled>'));
    expect(handled).toHaveLength(COLLAPSE_STEP_TURNS);
    const line = handled[0]!.split('\n')[1]!;
    expect(JSON.parse(line)).toEqual({ sender: 'agent', from: 'alice', content: expect.stringMatching(/^Report 0\. All tests pass.*…$/) });
    expect(line.length).toBeLessThan(260);
    expect(inboxMessages(texts).map((m) => m.content.split('.')[0])).toEqual(
      Array.from({ length: turns + 1 - COLLAPSE_STEP_TURNS }, (_, k) => `Report ${COLLAPSE_STEP_TURNS + k}`),
    );
    // The transcript keeps every report whole (resume rebuilds the same context).
    expect(
      h.team.lead.loop.messages
        .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))))
        .filter((t) => t.startsWith('<inbox-handled>')),
    ).toEqual([]);
  });
});
