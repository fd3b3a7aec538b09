// A quiet lead: reports arriving close together wake it once (it reads its inbox when no new
// message came for leadCoalesceMs), so its calls scale with decisions, not with reports.
import { afterEach, describe, expect, it } from 'vitest';
import { replyText } from '../../helpers/fake-api.ts';
import { allUserTexts, inboxMessages, openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('quiet lead', () => {
  it('three reports arriving close together wake the lead once', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '400' } }));
    h.fake.script('lead', replyText('Noted all three.'), replyText('Noted again.'));
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    const send = (from: string) => h.team.ctx.bus.send({ type: 'message', from, to: 'lead', content: `${from}: task done, tests pass` });
    await send('alice');
    // The first report has woken the lead: it is gathering (busy), not yet asking the model.
    await h.waitFor('the lead to notice the first report', () => !h.team.lead.isIdle);
    expect(h.requestsOf('lead')).toHaveLength(0);
    await send('bob');
    await send('cid');
    await h.waitForEvent('the lead answered', (e) => e.agent === 'lead' && e.type === 'text' && e.text === 'Noted all three.');
    await h.waitFor('the lead idle again', () => h.team.lead.isIdle);

    const requests = h.requestsOf('lead');
    expect(requests).toHaveLength(1);
    expect(inboxMessages(allUserTexts(requests[0]!)).map((m) => m.from)).toEqual(['alice', 'bob', 'cid']);
  });

  it("the person's prompt does not wait for the reports to settle", async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_LEAD_COALESCE_MS: '60000' } }));
    h.fake.script('lead', replyText('On it.'));
    h.team.start();
    await h.waitForStatus('lead', 'idle');
    await h.team.ctx.bus.send({ type: 'message', from: 'alice', to: 'lead', content: 'alice: done' });
    await h.waitFor('the lead to notice the report', () => !h.team.lead.isIdle);
    h.team.lead.prompt('Summarise, please.');
    // Within the test's own timeout, far below the minute the reports alone would wait.
    await h.waitForEvent('the lead answered', (e) => e.agent === 'lead' && e.type === 'text' && e.text === 'On it.');
    const texts = allUserTexts(h.requestsOf('lead')[0]!).join('\n');
    expect(texts).toContain('Summarise, please.');
  });
});
