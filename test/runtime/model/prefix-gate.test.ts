// Staggered first calls (src/runtime/model/prefix-gate.ts): a call whose prefix another call is writing to the
// prompt cache waits until that call's response began, then goes; a cached prefix never waits.
import { describe, expect, it } from 'vitest';
import { CACHE_LIFETIME_MS, PrefixGate, PrefixWaitAbortedError, prefixKey } from '../../../src/runtime/model/prefix-gate.ts';

/** Whether the promise has settled after the microtasks queued so far. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('PrefixGate', () => {
  it('holds a sibling until the first call landed, and none once the prefix is cached', async () => {
    const gate = new PrefixGate({ maxWaitMs: 60_000 });
    const first = await gate.enter('k', undefined);
    const waits: boolean[] = [];
    const second = gate.enter('k', undefined, (waiting) => waits.push(waiting));
    expect(await settled(second)).toBe(false);
    // Another prefix never waits for this one.
    expect(await settled(gate.enter('other', undefined))).toBe(true);
    first.landed();
    expect(await settled(second)).toBe(true);
    expect(waits).toEqual([true, false]);
    expect(await settled(gate.enter('k', undefined))).toBe(true);
  });

  it('a first call that ended without a response lets the next one write the prefix', async () => {
    const gate = new PrefixGate({ maxWaitMs: 60_000 });
    const first = await gate.enter('k', undefined);
    const second = gate.enter('k', undefined);
    const third = gate.enter('k', undefined);
    first.done();
    const writer = await second;
    // The second is the writer now: the third waits for it.
    expect(await settled(third)).toBe(false);
    writer.landed();
    expect(await settled(third)).toBe(true);
  });

  it('waits at most maxWaitMs, gives up on abort, and forgets a prefix past the cache lifetime', async () => {
    let now = 0;
    const gate = new PrefixGate({ maxWaitMs: 20, now: () => now });
    const first = await gate.enter('k', undefined);
    const bounded = gate.enter('k', undefined);
    now = 25;
    await bounded; // the timer of 20 ms ends the wait
    const controller = new AbortController();
    const aborted = gate.enter('k', controller.signal);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(PrefixWaitAbortedError);
    first.landed();
    now += CACHE_LIFETIME_MS;
    const writer = await gate.enter('k', undefined);
    expect(await settled(gate.enter('k', undefined))).toBe(false);
    writer.done();
  });

  it('keys the prefix by model, tools and the first system block', () => {
    const tools = [{ name: 'a', input_schema: {} }];
    expect(prefixKey('m', tools, { text: 's' })).toBe(prefixKey('m', structuredClone(tools), { text: 's' }));
    expect(prefixKey('m', tools, { text: 's' })).not.toBe(prefixKey('m2', tools, { text: 's' }));
    expect(prefixKey('m', tools, { text: 's' })).not.toBe(prefixKey('m', tools, { text: 't' }));
    // Each definition's JSON is kept once made: other tools, or more of them, still key apart.
    const other = [{ name: 'b', input_schema: {} }];
    expect(prefixKey('m', other, { text: 's' })).not.toBe(prefixKey('m', tools, { text: 's' }));
    expect(prefixKey('m', [...tools, ...other], { text: 's' })).not.toBe(prefixKey('m', tools, { text: 's' }));
    expect(prefixKey('m', [...tools, ...other], { text: 's' })).not.toBe(prefixKey('m', [...other, ...tools], { text: 's' }));
    expect(prefixKey('m', [], { text: 's' })).not.toBe(prefixKey('m', tools, { text: 's' }));
  });

  it('knows a list of definitions it hashed before by their identity, and still keys by content', () => {
    const a = { name: 'a', input_schema: {} };
    const b = { name: 'b', input_schema: {} };
    const key = prefixKey('m', [a, b], { text: 's' });
    // Another array of the same definitions (each call makes one), and equal definitions held apart.
    expect(prefixKey('m', [a, b], { text: 's' })).toBe(key);
    expect(prefixKey('m', [structuredClone(a), structuredClone(b)], { text: 's' })).toBe(key);
    expect(prefixKey('m', [b, a], { text: 's' })).not.toBe(key);
    expect(prefixKey('m', [a], { text: 's' })).not.toBe(key);
    // One definition whose JSON holds another's pair: never mistaken for the pair.
    expect(prefixKey('m', [{ ...a, b }], { text: 's' })).not.toBe(key);
    // Past the cache's bound (ever new tool sets), keys stay the same.
    for (let i = 0; i < 300; i++) prefixKey('m', [{ name: `t${i}`, input_schema: {} }], { text: 's' });
    expect(prefixKey('m', [a, b], { text: 's' })).toBe(key);
    // Something that is not a definition keys by its JSON, as before.
    expect(prefixKey('m', ['x'], { text: 's' })).toBe(prefixKey('m', ['x'], { text: 's' }));
    expect(prefixKey('m', ['x'], { text: 's' })).not.toBe(prefixKey('m', ['y'], { text: 's' }));
  });
});
