// Closing the team while the lead is between its turn and its wait for messages (looking at its
// inbox, a round trip on PostgreSQL): the close must still end the lead. Its abort fires before the
// lead starts waiting, so a wait that only listened for the abort never ended (a headless run on
// PostgreSQL hung after printing nothing, most of the time).
import { afterEach, expect, it } from 'vitest';
import { replyText } from '../../helpers/fake-api.js';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';

let h: TeamHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('a close that comes while the lead looks at its inbox ends the lead', async () => {
  h = await openTeamHarness();
  const harness = h;
  harness.fake.script('lead', replyText('Hello.'));
  const bus = harness.team.ctx.bus;
  const peek = bus.peek.bind(bus);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const atInbox = new Promise<void>((resolve) => (reached = resolve));
  let armed = false;
  // After its turn the lead looks at its inbox: that answer is held back until the close.
  bus.peek = async (name: string, options?: { limit?: number }) => {
    if (armed && name === 'lead') {
      armed = false;
      reached();
      await gate;
    }
    return peek(name, options);
  };
  harness.team.start();
  const turnOver = new Promise<void>((resolve) => {
    const off = harness.team.lead.onTurnEnd(() => {
      off();
      armed = true;
      resolve();
    });
  });
  harness.team.lead.prompt('Say hello.');
  await turnOver;
  await atInbox;

  let ended = false;
  void harness.team.lead.close().then(() => (ended = true));
  release();
  await harness.waitFor('the lead to end', () => ended);
  expect(harness.team.lead.lastText).toBe('Hello.');
});
