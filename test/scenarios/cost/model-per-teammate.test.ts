// A model per role and per teammate at spawn: aliases (opus, sonnet, haiku) are resolved to the
// ids huddle prices (src/runtime/model/model-aliases.ts), so the request names a real model and
// the spend is priced by it.
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_ALIASES } from '../../../src/runtime/model/model-aliases.js';
import { costOf, toTokenUsage } from '../../../src/runtime/model/pricing.js';
import { replyText } from '../../helpers/fake-api.ts';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('model per role and per teammate', () => {
  it('a spawn naming an alias and a role whose setting names one each call the model the alias stands for, priced as it', async () => {
    const h = (harness = await openTeamHarness({ settings: { roles: { reviewer: { model: 'opus' } } } }));
    h.fake.script('alice', replyText('Done.'));
    h.fake.script('rita', replyText('Looked.'));
    h.team.start();
    await h.spawn('alice', 'Say done.', { model: 'haiku' });
    await h.spawn('rita', 'Look.', { role: 'reviewer' });
    await h.waitFor('both answered', () => h.requestsOf('alice').length > 0 && h.requestsOf('rita').length > 0);
    expect(h.requestsOf('alice')[0]!.body.model).toBe(MODEL_ALIASES.haiku);
    expect(h.requestsOf('rita')[0]!.body.model).toBe(MODEL_ALIASES.opus);
    expect(h.team.ctx.roster.get('alice')?.model).toBe(MODEL_ALIASES.haiku);

    const usage = await h.waitForEvent('alice usage', (e) => e.agent === 'alice' && e.type === 'usage');
    expect(usage.model).toBe(MODEL_ALIASES.haiku);
    expect(Number(usage.cost_usd)).toBeGreaterThan(0);
    expect(Number(usage.cost_usd)).toBeCloseTo(costOf(MODEL_ALIASES.haiku!, toTokenUsage(usage as never)), 12);
  });
});
