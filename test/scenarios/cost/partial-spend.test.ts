// Spend counted exactly: an attempt that ends without a message (interrupted, cut and retried) is
// billed what the API had reported (message_start and message_delta usage), and that figure
// reaches the spend ledger, the budgets and the run record like any call's.
// (The default model, claude-sonnet-4-6, is priced.)
import { afterEach, describe, expect, it } from 'vitest';
import { replyText, text } from '../../helpers/fake-api.ts';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function billedInput(event: Record<string, unknown>): number {
  return Number(event.input_tokens) + Number(event.cache_creation_input_tokens) + Number(event.cache_read_input_tokens);
}

describe('partial spend', () => {
  it("an interrupted stream's usage appears in spend, budgets and the run record", async () => {
    const h = (harness = await openTeamHarness());
    h.fake.script('alice', { kind: 'hang', content: [text('Thinking about it at length')] });
    h.team.start();
    await h.spawn('alice', 'Do the thing.');
    await h.waitForEvent('alice streaming', (e) => e.agent === 'alice' && e.type === 'text_delta');
    expect(h.session.interrupt('alice')).toBe(true);
    await h.waitForEvent('alice interrupted', (e) => e.agent === 'alice' && e.type === 'error' && e.interrupted === true);

    const usage = h.events.find((e) => e.agent === 'alice' && e.type === 'usage');
    expect(usage?.partial).toBe('interrupted');
    expect(billedInput(usage!)).toBeGreaterThan(0);
    expect(Number(usage!.cost_usd)).toBeGreaterThan(0);

    const { record } = await h.session.runRecord();
    const tally = record.cost.agents.alice;
    expect(tally?.model_calls).toBe(1);
    expect(tally?.input_tokens).toBe(usage!.input_tokens);
    expect(tally?.cost_usd).toBeCloseTo(Number(usage!.cost_usd), 12);

    const spend = h.team.budget.spendOf('alice');
    expect(spend.usd).toBeCloseTo(Number(usage!.cost_usd), 12);
    expect(spend.turns).toBe(1);
  });

  it('a stream cut mid-way and retried is billed twice: the cut attempt and the answer', async () => {
    const h = (harness = await openTeamHarness());
    h.fake.script('alice', { kind: 'cut', content: [text('A long answer that the connection cuts in half.')] }, replyText('Done.'));
    h.team.start();
    await h.spawn('alice', 'Do the thing.');
    await h.waitForEvent('alice answered', (e) => e.agent === 'alice' && e.type === 'text' && e.text === 'Done.');

    const usages = h.events.filter((e) => e.agent === 'alice' && e.type === 'usage');
    expect(usages.map((e) => e.partial ?? 'answer')).toEqual(['retried', 'answer']);
    const total = usages.reduce((sum, e) => sum + Number(e.cost_usd), 0);
    const { record } = await h.session.runRecord();
    expect(record.cost.agents.alice?.model_calls).toBe(2);
    expect(record.cost.agents.alice?.cost_usd).toBeCloseTo(total, 12);
    expect(h.team.budget.spendOf('alice').usd).toBeCloseTo(total, 12);
    // The cut attempt's text is not in the conversation: the retry's answer alone is.
    expect(h.team.teammates.get('alice')!.loop.messages.at(-1)).toMatchObject({ role: 'assistant' });
  });
});
