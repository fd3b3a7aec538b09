// The team's governor of model calls (src/runtime/model/call-governor.ts): the cap, first come
// first served, a slot handed to the queue before a newcomer, an abort leaving the queue, and the
// shared back-off told once.
import { describe, expect, it } from 'vitest';
import { CallGovernor, WaitAbortedError, type CallWait } from '../../../src/runtime/model/call-governor.js';

describe('CallGovernor', () => {
  it('keeps the cap and hands a freed slot to the first queued call, not to a newcomer', async () => {
    const governor = new CallGovernor({ limit: 1 });
    const order: string[] = [];
    const releaseA = await governor.acquire(undefined);
    const waits: Array<CallWait | undefined> = [];
    const b = governor.acquire(undefined, (wait) => waits.push(wait)).then((release) => (order.push('b'), release));
    expect(governor.queued).toBe(1);
    releaseA();
    // A newcomer right after the release: the slot is b's already.
    const c = governor.acquire(undefined).then((release) => (order.push('c'), release));
    expect(governor.inFlight).toBe(1);
    const releaseB = await b;
    expect(order).toEqual(['b']);
    expect(waits[0]).toMatchObject({ kind: 'queued', inFlight: 1, limit: 1, ahead: 0 });
    expect(waits.at(-1)).toBeUndefined();
    releaseB();
    (await c)();
    expect(order).toEqual(['b', 'c']);
    expect(governor.inFlight).toBe(0);
  });

  it('a queued call whose signal aborts leaves the queue', async () => {
    const governor = new CallGovernor({ limit: 1 });
    const release = await governor.acquire(undefined);
    const abort = new AbortController();
    const queued = governor.acquire(abort.signal);
    abort.abort();
    await expect(queued).rejects.toBeInstanceOf(WaitAbortedError);
    expect(governor.queued).toBe(0);
    release();
    expect(governor.inFlight).toBe(0);
  });

  it('a back-off is told once while it lasts, and makes the next call wait for it', async () => {
    let now = 1_000;
    const governor = new CallGovernor({ limit: 0, now: () => now });
    const told: number[] = [];
    governor.onBackoff((notice) => told.push(notice.delayMs));
    governor.backOff(2_000, 'rate limited (429)');
    governor.backOff(1_000, 'rate limited (429)'); // within the first: nothing new
    governor.backOff(3_000, 'rate limited (429)'); // longer: the pause grows, not told again
    expect(told).toEqual([2_000]);
    expect(governor.pausedUntil).toBe(4_000);
    now = 5_000; // past it
    governor.backOff(500, 'overloaded (529)');
    expect(told).toEqual([2_000, 500]);
  });
});
