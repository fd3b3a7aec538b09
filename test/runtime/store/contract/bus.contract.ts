// The Bus contract (docs/contract.md#messages): refusals, exactly-once delivery through peek/ack, idempotent
// sends by a caller-made id, history, and wake-ups across instances.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusClosedError, newMessageId, UnknownRecipientError } from '../../../../src/runtime/store/bus.js';
import type { ContractTeam, StoreFactory } from './harness.js';

export function busContract(factory: StoreFactory): void {
  describe(`Bus (${factory.name})`, () => {
    let team: ContractTeam;
    beforeEach(async () => {
      team = await factory.fresh();
      await team.store.roster.add({ name: 'alice', role: 'coder' });
    });
    afterEach(() => team.dispose());

    it('refuses an unknown recipient, naming the known ones, and stores nothing', async () => {
      const { bus } = team.store;
      const refused = await bus.send({ from: 'lead', to: 'bob', content: 'hi' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnknownRecipientError);
      expect((refused as UnknownRecipientError).knownNames).toEqual(['lead', 'alice']);
      expect((refused as Error).message).toBe("no teammate named 'bob'; known names: lead, alice");
      expect(await bus.history('alice')).toEqual([]);
    });

    it('assigns ids and timestamps, keeps extra fields, and announces message_sent', async () => {
      const sent = await team.store.bus.send({ type: 'plan_approval_request', from: 'alice', to: 'lead', content: 'my plan', request_id: 'r1', plan: 'do it' });
      expect(sent).toMatchObject({ type: 'plan_approval_request', from: 'alice', to: 'lead', content: 'my plan', request_id: 'r1', plan: 'do it' });
      expect(typeof sent.id).toBe('string');
      expect(Number.isNaN(Date.parse(sent.ts))).toBe(false);
      expect(team.events.filter((e) => e.type === 'message_sent')).toMatchObject([
        { agent: 'alice', id: sent.id, to: 'lead', message_type: 'plan_approval_request', request_id: 'r1' },
      ]);
    });

    it('peek does not consume; ack is monotonic and idempotent', async () => {
      const { bus } = team.store;
      const a = await bus.send({ from: 'lead', to: 'alice', content: 'a' });
      const b = await bus.send({ from: 'lead', to: 'alice', content: 'b' });
      const all = await bus.peek('alice');
      expect(all.messages.map((m) => m.id)).toEqual([a.id, b.id]);
      expect((await bus.peek('alice')).messages).toHaveLength(2);
      const first = await bus.peek('alice', { limit: 1 });
      expect(first.messages.map((m) => m.id)).toEqual([a.id]);
      expect(first.nextOffset).toBeLessThan(all.nextOffset);
      await bus.ack('alice', first.nextOffset);
      expect((await bus.peek('alice')).messages.map((m) => m.id)).toEqual([b.id]);
      await bus.ack('alice', first.nextOffset); // again: no change
      expect(await bus.unreadCount('alice')).toBe(1);
      await bus.ack('alice', all.nextOffset);
      expect(await bus.unreadCount('alice')).toBe(0);
      await bus.ack('alice', first.nextOffset); // an older position: no step back
      await bus.ack('alice', all.nextOffset);
      expect(await bus.unreadCount('alice')).toBe(0);
      const c = await bus.send({ from: 'lead', to: 'alice', content: 'c' });
      const next = await bus.peek('alice');
      expect(next.messages.map((m) => m.id)).toEqual([c.id]);
      expect(next.nextOffset).toBeGreaterThan(all.nextOffset);
    });

    it('exactly once across a crash: the consumer re-acks the position it recorded, in another process', async () => {
      const { bus } = team.store;
      const a = await bus.send({ from: 'lead', to: 'alice', content: 'a' });
      const b = await bus.send({ from: 'lead', to: 'alice', content: 'b' });
      // The consumer hands a and b to its model and records that with the position, then dies before acking.
      const { messages, nextOffset: recorded } = await bus.peek('alice');
      expect(messages.map((m) => m.id)).toEqual([a.id, b.id]);
      const restarted = await team.join();
      expect((await restarted.store.bus.peek('alice')).messages.map((m) => m.id)).toEqual([a.id, b.id]); // not acked: still there
      await restarted.store.bus.ack('alice', recorded); // what a resume does first
      expect(await restarted.store.bus.peek('alice')).toMatchObject({ messages: [] });
      const c = await bus.send({ from: 'lead', to: 'alice', content: 'c' });
      expect((await restarted.store.bus.take('alice')).map((m) => m.id)).toEqual([c.id]);
      // And the crash the other way round: acked, then died before recording? Impossible by order; re-acking twice is harmless.
      await restarted.store.bus.ack('alice', recorded);
      expect(await bus.unreadCount('alice')).toBe(0);
    });

    it('concurrent takes from two instances never hand out a message twice', async () => {
      const other = await team.join();
      const sent: string[] = [];
      for (let i = 0; i < 30; i++) sent.push((await team.store.bus.send({ from: 'lead', to: 'alice', content: `m${i}` })).id);
      const batches = await Promise.all([
        team.store.bus.take('alice'),
        other.store.bus.take('alice'),
        team.store.bus.take('alice'),
        other.store.bus.take('alice'),
      ]);
      const taken = batches.flat().map((m) => m.id);
      expect(taken.sort()).toEqual([...sent].sort());
    });

    it('a send retried with the same caller-made id stores and announces it once', async () => {
      const other = await team.join();
      const id = newMessageId();
      const first = await team.store.bus.send({ id, from: 'lead', to: 'alice', content: 'do the thing' });
      expect(first.id).toBe(id);
      // The retry comes after a cut connection, maybe from another process: the stored message comes back.
      const again = await other.store.bus.send({ id, from: 'lead', to: 'alice', content: 'do the thing' });
      expect(again).toEqual(first);
      const third = await team.store.bus.send({ id, from: 'lead', to: 'alice', content: 'changed on the way?' });
      expect(third).toEqual(first);
      expect((await team.store.bus.history('alice')).map((m) => m.id)).toEqual([id]);
      expect(await team.store.bus.unreadCount('alice')).toBe(1);
      expect([...team.events, ...other.events].filter((e) => e.type === 'message_sent')).toHaveLength(1);
      // Ids made by the bus are all distinct; other ids still go through.
      const fresh = await other.store.bus.send({ from: 'lead', to: 'alice', content: 'next' });
      expect(fresh.id).not.toBe(id);
      expect((await team.store.bus.take('alice')).map((m) => m.content)).toEqual(['do the thing', 'next']);
      await expect(team.store.bus.send({ id: 'bad id with spaces', from: 'lead', to: 'alice', content: 'x' })).rejects.toThrow(/not a message id/);
    });

    it('history holds every message, delivered or not, oldest first, seen from every instance', async () => {
      const other = await team.join();
      const a = await team.store.bus.send({ from: 'lead', to: 'alice', content: 'a' });
      await team.store.bus.take('alice');
      const b = await other.store.bus.send({ from: 'lead', to: 'alice', content: 'b' });
      expect((await team.store.bus.history('alice')).map((m) => m.id)).toEqual([a.id, b.id]);
      expect((await other.store.bus.history('alice')).map((m) => m.id)).toEqual([a.id, b.id]);
      expect(await other.store.bus.history('lead')).toEqual([]);
    });

    it('broadcasts a copy to every known name but the sender and those excluded', async () => {
      await team.store.roster.add({ name: 'bob', role: 'tester' });
      await team.store.roster.add({ name: 'carol', role: 'reviewer' });
      const sent = await team.store.bus.broadcast('lead', 'standup', ['carol']);
      expect(sent.map((m) => [m.to, m.type])).toEqual([
        ['alice', 'broadcast'],
        ['bob', 'broadcast'],
      ]);
      expect(await team.store.bus.unreadCount('carol')).toBe(0);
      expect(await team.store.bus.unreadCount('lead')).toBe(0);
    });

    it('wakes a waiter when another instance sends; at once when a message waits; rejects on abort and close', async () => {
      const other = await team.join();
      let woke = false;
      const waiting = team.store.bus.waitForMessage('alice').then(() => (woke = true));
      await team.store.bus.peek('alice');
      expect(woke).toBe(false);
      const sent = await other.store.bus.send({ from: 'lead', to: 'alice', content: 'wake up' });
      await waiting;
      expect((await team.store.bus.peek('alice')).messages.map((m) => m.id)).toEqual([sent.id]);
      await expect(team.store.bus.waitForMessage('alice')).resolves.toBeUndefined();

      const abort = new AbortController();
      const aborted = team.store.bus.waitForMessage('lead', abort.signal);
      abort.abort();
      await expect(aborted).rejects.toThrow();
      const closing = other.store.bus.waitForMessage('lead');
      other.store.bus.close();
      await expect(closing).rejects.toBeInstanceOf(BusClosedError);
    });
  });
}
