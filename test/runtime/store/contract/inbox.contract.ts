// One agent's inbox (src/runtime/inbox.ts) on every backend: its four steps (peek, record, advance,
// format) in that order, exactly once across a crash between record and advance, one scan of the inbox
// per delivered message, and the wait race (a message from another instance, a wake source, a
// deadline, a stop). The bus is seen through a counting wrapper of the Bus interface.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentEmitter } from '../../../../src/runtime/events/events.js';
import { formatInbox, Inbox } from '../../../../src/runtime/inbox.js';
import type { Bus } from '../../../../src/runtime/store/bus.js';
import type { ContractTeam, StoreFactory } from './harness.js';

/** The Bus, with every call of its methods written to `calls` (name, then the inbox). */
function counted(bus: Bus, calls: string[]): Bus {
  return new Proxy(bus, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${String(key)} ${String(args[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The calls that read the inbox's messages: what "one scan per delivered message" counts. */
const SCANS = /^(peek|unreadCount|take) alice$/;

export function inboxContract(factory: StoreFactory): void {
  describe(`Inbox (${factory.name})`, () => {
    let team: ContractTeam;
    let calls: string[];
    let inbox: Inbox;
    beforeEach(async () => {
      team = await factory.fresh();
      await team.store.roster.add({ name: 'alice', role: 'coder' });
      calls = [];
      const events = agentEmitter(team.hub, 'alice');
      inbox = new Inbox('alice', counted(team.store.bus, calls), {
        agent: 'alice',
        emit: (type, fields) => {
          calls.push(`emit ${type}`);
          return events.emit(type, fields);
        },
      });
    });
    afterEach(() => team.dispose());

    it('delivers in four steps: peek, beforeTaking, record, advance; the <inbox> turn; nothing twice', async () => {
      const a = await team.store.bus.send({ from: 'lead', to: 'alice', content: 'a' });
      const b = await team.store.bus.send({ from: 'user', to: 'alice', content: 'b' });
      const delivery = await inbox.deliver(() => void calls.push('beforeTaking'));

      expect(calls).toEqual(['peek alice', 'beforeTaking', 'emit message_delivered', 'ack alice']);
      expect(delivery?.messages.map((m) => m.id)).toEqual([a.id, b.id]);
      expect(delivery?.text).toBe(formatInbox(delivery!.messages));
      // (A backend may give the fields back in its own order: PostgreSQL's jsonb does.)
      const lines = delivery!.text.split('\n');
      expect([lines[0], lines.at(-1)]).toEqual(['<inbox>', '</inbox>']);
      // Each message without its id (no tool takes it: docs/contract.md#injected-turns).
      const { id: _a, ...aShown } = a;
      const { id: _b, ...bShown } = b;
      expect(lines.slice(1, -1).map((line) => JSON.parse(line) as unknown)).toEqual([
        { sender: 'agent', ...aShown },
        { sender: 'person', ...bShown },
      ]);
      expect(lines.slice(1, -1).every((line) => line.startsWith('{"sender":'))).toBe(true);
      const recorded = team.events.filter((e) => e.type === 'message_delivered');
      expect(recorded).toMatchObject([{ agent: 'alice', ids: [a.id, b.id], messages: [a, b], next_offset: delivery?.nextOffset }]);

      calls.length = 0;
      expect(await inbox.deliver(() => void calls.push('beforeTaking'))).toBeUndefined();
      // Nothing unread: no beforeTaking, no record, and the cursor (already there) is not written again.
      expect(calls).toEqual(['peek alice']);
      expect(await team.store.bus.unreadCount('alice')).toBe(0);
    });

    it('a crash between record and advance: the recorded position, re-acked, delivers nothing twice', async () => {
      const a = await team.store.bus.send({ from: 'lead', to: 'alice', content: 'a' });
      const peeked = await inbox.peek();
      inbox.record(peeked); // … and the process dies before advance
      const restarted = await team.join();
      const recorded = team.events.find((e) => e.type === 'message_delivered');
      await restarted.store.bus.ack('alice', recorded!.next_offset as number);
      const b = await restarted.store.bus.send({ from: 'lead', to: 'alice', content: 'b' });
      const again = new Inbox('alice', restarted.store.bus, agentEmitter(restarted.hub, 'alice'));
      const delivery = await again.deliver();
      expect(delivery?.messages.map((m) => m.id)).toEqual([b.id]);
      expect(delivery?.messages.map((m) => m.id)).not.toContain(a.id);
    });

    it('one scan of the inbox per delivered message, woken by another instance', async () => {
      const other = await team.join();
      expect(await inbox.deliver()).toBeUndefined(); // the look before resting
      let delivered = 0;
      for (const content of ['one', 'two', 'three']) {
        const waiting = inbox.wait();
        await other.store.bus.send({ from: 'lead', to: 'alice', content });
        await waiting;
        calls.length = 0;
        const delivery = await inbox.deliver();
        delivered += delivery?.messages.length ?? 0;
        expect(calls.filter((call) => SCANS.test(call))).toEqual(['peek alice']);
      }
      expect(delivered).toBe(3);
    });

    it('the wait ends on a wake source, a deadline, or a stop (also one asked for before it began)', async () => {
      let wake!: () => void;
      let listening = 0;
      const source = (w: () => void) => {
        wake = w;
        listening += 1;
        return () => (listening -= 1);
      };
      const woken = inbox.wait({ wakeOn: [source] });
      expect(listening).toBe(1);
      wake();
      await woken;
      expect(listening).toBe(0);

      await inbox.wait({ timeoutMs: 5 });

      const stop = new AbortController();
      const stopped = inbox.wait({ signal: stop.signal, wakeOn: [source] });
      stop.abort();
      await stopped;
      expect(listening).toBe(0);

      // Aborted before the wait: it ends at once, and listens to nothing.
      await inbox.wait({ signal: stop.signal, wakeOn: [source] });
      expect(listening).toBe(0);
      // A source that wakes while it is being listened to ends the wait and is let go.
      await inbox.wait({ wakeOn: [(w) => (w(), () => (listening -= 1))] });
      expect(listening).toBe(-1);
    });

    it('a message that is waiting already ends the wait at once', async () => {
      await team.store.bus.send({ from: 'lead', to: 'alice', content: 'early' });
      await inbox.wait();
      expect((await inbox.deliver())?.messages.map((m) => m.content)).toEqual(['early']);
    });
  });
}
