// A message to a resting agent, through its inbox (src/runtime/inbox.ts): one scan of the inbox from
// the send to the model request that carries it, for a teammate and for the lead alike (both use
// the inbox's delivery and its wait). The bus is watched through its own interface: each call that
// reads an inbox's messages (peek, unreadCount, take) is a scan. In-process, against the fake API.
import { describe, expect, it } from 'vitest';
import type { Bus } from '../../../src/runtime/store/bus.js';
import { replyText } from '../../helpers/fake-api.ts';
import { inboxLine, lastUserTexts, type TeamHarness } from '../../helpers/team-harness.ts';
import { harnessPerTest } from '../../helpers/harness-per-test.js';

const open = harnessPerTest();

/**
 * What happens to `agent`'s inbox, in order: `scan` for each look at its messages, `wait` when it
 * starts waiting for one, and its delivery, turn and reply events.
 */
function trace(h: TeamHarness, agent: string): string[] {
  const log: string[] = [];
  const bus = h.team.ctx.bus;
  const watch = (method: 'peek' | 'unreadCount' | 'take' | 'waitForMessage', entry: string) => {
    const original = (bus[method] as (...args: unknown[]) => unknown).bind(bus);
    (bus as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      if (args[0] === agent) log.push(entry);
      return original(...args);
    };
  };
  watch('peek', 'scan');
  watch('unreadCount', 'scan');
  watch('take', 'scan');
  watch('waitForMessage', 'wait');
  h.hub.subscribe((event) => {
    if (event.agent !== agent) return;
    if (event.type === 'message_delivered') log.push('delivered');
    else if (event.type === 'prompt') log.push(`prompt ${String(event.source)}`);
    else if (event.type === 'text') log.push('reply');
  });
  return log;
}

/** The log from `from` on, up to and including the first reply. */
function untilReply(log: string[], from: number): string[] {
  const rest = log.slice(from);
  return rest.slice(0, rest.indexOf('reply') + 1);
}

async function sendWhenWaiting(h: TeamHarness, log: string[], to: string, bus: Bus): Promise<number> {
  await h.waitFor(`${to} to wait for a message`, () => log.at(-1) === 'wait');
  const at = log.length;
  await bus.send({ from: 'huddle', to, content: 'Say hello.' });
  return at;
}

describe('a message to a resting agent', () => {
  it('an idle teammate: one scan takes it, and its next request carries it as one <inbox> turn', async () => {
    const h = await open({ env: { HUDDLE_IDLE_TIMEOUT_MS: '10000' } });
    const log = trace(h, 'alice');
    h.fake.script('alice', replyText('Ready.'), replyText('Hello.'));
    await h.spawn('alice', 'Wait for instructions.');
    await h.waitForStatus('alice', 'idle');

    const from = await sendWhenWaiting(h, log, 'alice', h.team.ctx.bus);
    await h.waitFor('alice to reply', () => untilReply(log, from).length > 0);

    expect(untilReply(log, from)).toEqual(['scan', 'delivered', 'prompt inbox', 'reply']);
    const [message] = h.inbox('alice');
    expect(h.requestsOf('alice')).toHaveLength(2);
    expect(lastUserTexts(h.requestsOf('alice')[1]!)).toEqual([`<inbox>\n${inboxLine('huddle', message!)}\n</inbox>`]);
  });

  it('the lead between turns: one scan takes it, and its next request carries it', async () => {
    const h = await open();
    const log = trace(h, 'lead');
    h.fake.script('lead', replyText('Ready.'), replyText('Hello.'));
    h.team.start();
    h.team.lead.prompt('Wait for messages.');
    await h.waitForEvent('the first turn to end', (e) => e.agent === 'lead' && e.type === 'text');

    const from = await sendWhenWaiting(h, log, 'lead', h.team.ctx.bus);
    await h.waitFor('the lead to reply', () => untilReply(log, from).length > 0);

    expect(untilReply(log, from)).toEqual(['scan', 'delivered', 'prompt inbox', 'reply']);
    expect(h.requestsOf('lead')).toHaveLength(2);
  });
});
