// Ten concurrent senders (four in this process, six in two child processes) put 10,000 messages
// in one inbox while a reader child process delivers them; the reader is SIGKILLed twice — once
// deterministically between recording a batch and acking it, once wherever it happens to be —
// and restarted. Every sent id must be recorded exactly once.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBus } from '../../../../src/runtime/store/file/file-bus.js';
import { bundleFixture, type Exit, runFixture } from './fixtures/bundle.js';

const PER_SENDER = 1000;
const IN_PROCESS_SENDERS = ['s0', 's1', 's2', 's3'];
const CHILD_SENDERS = [
  ['s4', 's5', 's6'],
  ['s7', 's8', 's9'],
];
const TOTAL = PER_SENDER * (IN_PROCESS_SENDERS.length + CHILD_SENDERS.flat().length);
const READER = 'reader';
const KNOWN = [READER, ...IN_PROCESS_SENDERS, ...CHILD_SENDERS.flat()];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-bus-stress-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ReaderEvent {
  event: 'started' | 'recorded' | 'paused' | 'done';
  total: number;
  next?: number;
  recordedOffset?: number;
}

/** Starts the reader; resolves `until` with the first event matching `stop`, or with its exit. */
function startReader(
  file: string,
  args: Record<string, unknown>,
  stop: (event: ReaderEvent) => boolean,
): { until: Promise<ReaderEvent | Exit>; exited: Promise<Exit>; kill: () => void; events: ReaderEvent[] } {
  const events: ReaderEvent[] = [];
  let hit: (event: ReaderEvent) => void = () => undefined;
  const matched = new Promise<ReaderEvent>((resolve) => (hit = resolve));
  const { child, exited } = runFixture(file, args, (line) => {
    const event = JSON.parse(line) as ReaderEvent;
    events.push(event);
    if (stop(event)) hit(event);
  });
  return { until: Promise.race([matched, exited]), exited, kill: () => child.kill('SIGKILL'), events };
}

function recordedIds(record: string): string[] {
  const ids: string[] = [];
  for (const line of readFileSync(record, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      ids.push(...(JSON.parse(line) as { ids: string[] }).ids);
    } catch {
      // torn by a kill mid-write: never counted as delivered
    }
  }
  return ids;
}

describe('message bus under load', () => {
  it(`delivers ${TOTAL} messages from 10 concurrent senders exactly once across reader kills`, async () => {
    const started = Date.now();
    const [senderFile, readerFile] = await Promise.all([bundleFixture('bus-sender'), bundleFixture('bus-reader')]);
    const inboxDir = path.join(dir, 'inbox');
    const record = path.join(dir, 'delivered.ndjson');
    const bus = new FileBus(inboxDir, { knownNames: () => KNOWN });
    const readerArgs = { inboxDir, name: READER, record, expected: TOTAL, batch: 150 };

    // Reader run 1: stops for good between recording and acking a batch, and is killed there.
    const run1 = startReader(readerFile, { ...readerArgs, pauseBeforeAckAt: 2000 }, (e) => e.event === 'paused');

    const children = CHILD_SENDERS.map((senders, index) =>
      runFixture(senderFile, {
        inboxDir,
        to: READER,
        senders,
        count: PER_SENDER,
        knownNames: KNOWN,
        idsFile: path.join(dir, `sent-${index}.json`),
      }),
    );
    const localIds: string[] = [];
    const localSends = Promise.all(
      IN_PROCESS_SENDERS.map(async (from) => {
        for (let i = 0; i < PER_SENDER; i++) localIds.push((await bus.send({ from, to: READER, content: `${from} #${i}` })).id);
      }),
    );

    const paused = await run1.until;
    expect(paused).toMatchObject({ event: 'paused' });
    run1.kill();
    expect((await run1.exited).signal).toBe('SIGKILL');
    // The kill landed in the window: the record is ahead of the cursor.
    const pausedAt = (paused as ReaderEvent).next!;
    expect(bus.cursor(READER).offset).toBeLessThan(pausedAt);

    // Reader run 2: killed wherever it is once it has recorded 6000 (if it gets there before finishing).
    const run2 = startReader(readerFile, readerArgs, (e) => e.event === 'recorded' && e.total >= 6000);
    const second = await run2.until;
    expect(run2.events[0]).toMatchObject({ event: 'started', recordedOffset: pausedAt });
    let kills = 1;
    if ('event' in second) {
      run2.kill();
      const exit = await run2.exited;
      if (exit.signal === 'SIGKILL') kills += 1;
    } else {
      expect(second.code, second.stderr).toBe(0);
    }

    // Reader run 3 (unless run 2 already finished): runs to the end.
    const done = recordedIds(record).length >= TOTAL;
    if (!done) {
      const run3 = startReader(readerFile, readerArgs, () => false);
      const exit = (await run3.until) as Exit;
      expect(exit.code, exit.stderr).toBe(0);
      expect(run3.events.at(-1)).toMatchObject({ event: 'done', total: TOTAL });
    }

    await localSends;
    const childExits = await Promise.all(children.map((child) => child.exited));
    for (const exit of childExits) expect(exit.code, exit.stderr).toBe(0);
    bus.close();

    const sent = [...localIds, ...CHILD_SENDERS.flatMap((_, index) => JSON.parse(readFileSync(path.join(dir, `sent-${index}.json`), 'utf8')) as string[])];
    expect(sent).toHaveLength(TOTAL);
    expect(new Set(sent).size).toBe(TOTAL);

    const delivered = recordedIds(record);
    const counts = new Map<string, number>();
    for (const id of delivered) counts.set(id, (counts.get(id) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const missing = sent.filter((id) => !counts.has(id));
    const unknown = delivered.filter((id) => !sent.includes(id));
    expect({ twice: twice.length, missing: missing.length, unknown: unknown.length }).toEqual({ twice: 0, missing: 0, unknown: 0 });
    expect(delivered).toHaveLength(TOTAL);
    expect(kills).toBeGreaterThanOrEqual(1);

    // The inbox itself is complete, in per-sender order, and was never truncated by reading.
    const lines = readFileSync(bus.inboxFile(READER), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(TOTAL);
    const next = new Map<string, number>();
    for (const line of lines) {
      const { from, content } = JSON.parse(line) as { from: string; content: string };
      const expected = next.get(from) ?? 0;
      expect(content).toBe(`${from} #${expected}`);
      next.set(from, expected + 1);
    }
    console.log(`bus stress: ${TOTAL} messages, ${kills} reader kill(s), ${Date.now() - started} ms`);
  });
});
