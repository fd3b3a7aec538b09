// How calls are gathered into batches (docs/postgresql-managed.md#commits-and-the-disk): those made in one
// turn of the event loop go together, never two with one key, and calls made while as many batches
// as may run are in flight wait for the next; each call hears its own outcome.
import { expect, it } from 'vitest';
import { type BatchOutcome, Batcher } from '../../../../src/runtime/store/postgres/pg-batcher.js';

/** A batcher whose batches end when the test says, recording what each held. */
function harness(inFlight?: number) {
  const batches: string[][] = [];
  const ends: Array<() => void> = [];
  const batcher = new Batcher<string, string>({
    key: (input) => input.split(':')[0]!,
    ...(inFlight ? { inFlight } : {}),
    run: async (inputs) => {
      batches.push(inputs);
      await new Promise<void>((resolve) => ends.push(resolve));
      return inputs.map((input): BatchOutcome<string> => (input.endsWith('!') ? { error: new Error(`refused ${input}`) } : { value: `done ${input}` }));
    },
  });
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { batcher, batches, ends, turn };
}

it('calls made in one turn go in one batch; a key already in it waits for the next; each hears its own outcome', async () => {
  const { batcher, batches, ends, turn } = harness();
  const calls = ['a', 'b!', 'c', 'a:again'].map((input) => batcher.submit(input).then(String, (error: Error) => error.message));
  await turn();
  expect(batches).toEqual([['a', 'b!', 'c']]);
  ends.shift()!();
  await turn();
  await turn();
  expect(batches).toEqual([['a', 'b!', 'c'], ['a:again']]);
  ends.shift()!();
  expect(await Promise.all(calls)).toEqual(['done a', 'refused b!', 'done c', 'done a:again']);
});

it('calls made while as many batches as may run are in flight go together in the next, when one ends', async () => {
  const { batcher, batches, ends, turn } = harness(1);
  const first = batcher.submit('a');
  await turn();
  const later = [batcher.submit('b')];
  await turn();
  later.push(batcher.submit('c'));
  await turn();
  expect(batches).toEqual([['a']]);
  ends.shift()!();
  await first;
  await turn();
  expect(batches).toEqual([['a'], ['b', 'c']]);
  ends.shift()!();
  expect(await Promise.all(later)).toEqual(['done b', 'done c']);
});

it('a batch that throws is every call’s error; one that says `again` puts the call first in the next', async () => {
  let round = 0;
  const seen: string[][] = [];
  const batcher = new Batcher<string, string>({
    key: (input) => input,
    run: async (inputs) => {
      seen.push(inputs);
      round += 1;
      if (round === 1) return inputs.map((input): BatchOutcome<string> => (input === 'x' ? 'again' : { value: input }));
      if (round === 2) throw new Error('the link dropped');
      return inputs.map((input) => ({ value: input }));
    },
  });
  const x = batcher.submit('x').catch((error: Error) => error.message);
  const y = batcher.submit('y');
  expect(await y).toBe('y');
  expect(await x).toBe('the link dropped');
  expect(seen).toEqual([['x', 'y'], ['x']]);
});
