// The team's governor of model calls (src/runtime/model/call-governor.ts): a cap on calls in
// flight for the whole team, queued calls shown in the status reason, and one shared back-off
// when the API answers 429 with retry-after. In-process team against the fake Messages API, which
// plays a rate limiter: for a second after its third request it answers everything with 429.
import { afterEach, describe, expect, it } from 'vitest';
import { rateLimited, text, type Scripted } from '../../helpers/fake-api.ts';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.ts';

let harness: TeamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const CAP = 3;
const TEAMMATES = ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus', 'hal'];

describe('team governor', () => {
  it('8 teammates under a rate-limiting API stay within the cap, back off together and finish with 0 failed calls', async () => {
    const h = (harness = await openTeamHarness({ env: { HUDDLE_MAX_CONCURRENT_CALLS: String(CAP), HUDDLE_MAX_RETRIES: '2' } }));
    let windowEnd = 0;
    let limited = 0;
    h.fake.respond((request): Scripted => {
      const now = Date.now();
      if (windowEnd === 0 && h.fake.requests.length >= 3) windowEnd = now + 1000;
      if (now < windowEnd) {
        limited += 1;
        return rateLimited(1);
      }
      // Slow enough that calls overlap: about 10 events 30 ms apart.
      return { kind: 'message', content: [text(request.agent === 'lead' ? 'Noted.' : 'Done.')], delayMs: 30 };
    });
    h.team.start();
    for (const name of TEAMMATES) await h.spawn(name, 'Say done.');

    await h.waitFor(
      'every teammate to answer',
      () => TEAMMATES.every((name) => h.events.some((e) => e.agent === name && e.type === 'text' && e.text === 'Done.')),
      60_000,
    );

    expect(h.fake.concurrency.max).toBeGreaterThan(0);
    expect(h.fake.concurrency.max).toBeLessThanOrEqual(CAP);
    // Only the calls already in flight when the first 429 came back can meet the limit: every
    // later call waited out the retry-after, whoever's it was.
    expect(limited).toBeGreaterThan(0);
    expect(limited).toBeLessThanOrEqual(CAP);
    expect(h.events.filter((e) => e.type === 'error' && e.fatal === true)).toEqual([]);
    expect(h.events.filter((e) => e.type === 'status' && e.status === 'failed')).toEqual([]);

    // The person hears of the back-off once; queued and backed-off calls say so in their status.
    const warnings = h.events.filter((e) => e.agent === 'huddle' && e.type === 'warning' && e.backoff_ms !== undefined);
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(String(warnings[0]!.message)).toMatch(/^rate limited \(429\): every agent's model calls wait 1\.0 s \(team back-off\)$/);
    const reasons = h.events.filter((e) => e.type === 'status' && typeof e.reason === 'string').map((e) => String(e.reason));
    expect(reasons.some((reason) => /^queued: 3 of 3 model calls in flight/.test(reason))).toBe(true);
    expect(reasons.some((reason) => /^team back-off: rate limited \(429\), 1 s left$/.test(reason))).toBe(true);
  });
});
