// The file event log (src/runtime/store/file/event-log.ts, docs/contract.md#event-log): every event on
// its agent's line as it happens, but an agent's streamed deltas joined into one line, written with
// its next other event, when the log is read or closed, or on a short timer.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { EventLog, readAgentEvents } from '../../../../src/runtime/store/file/event-log.js';

let dir: string;
let hub: EventHub;
let log: EventLog;
const SECRET = 'sk-ant-api03-event-log-secret-0123456789';

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-event-log-'));
  hub = new EventHub();
  log = new EventLog(hub, path.join(dir, 'logs'), { secrets: [SECRET], root: dir });
});
afterEach(() => {
  log.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What is on disk now for `agent`, as type and text. */
function onDisk(agent: string): Array<[string, unknown]> {
  return readAgentEvents(path.join(dir, 'logs'), agent).map((event) => [event.type, (event as { text?: unknown }).text]);
}

it("joins an agent's deltas into one line, written before its next event, in order; other agents' stay their own", async () => {
  hub.emit('alice', 'text_delta', { text: 'Hel' });
  hub.emit('bob', 'text_delta', { text: 'Bob ' });
  hub.emit('alice', 'text_delta', { text: 'lo, ' });
  hub.emit('alice', 'text_delta', { text: `key ${SECRET.slice(0, 12)}` });
  hub.emit('alice', 'text_delta', { text: `${SECRET.slice(12)} done` });
  // Nothing of the stream written yet: it waits for the next event or the timer.
  expect(onDisk('alice')).toEqual([]);
  hub.emit('alice', 'text', { text: 'Hello, key … done' });
  // A secret split across two deltas is scrubbed whole in the joined line.
  expect(onDisk('alice')).toEqual([
    ['text_delta', 'Hello, key [redacted] done'],
    ['text', 'Hello, key … done'],
  ]);
  const raw = readFileSync(path.join(dir, 'logs', 'alice', readdirName('alice')), 'utf8');
  expect(raw).not.toContain(SECRET.slice(12));
  // Bob's delta goes on its own timer, without another event of his.
  await vi.waitFor(() => expect(onDisk('bob')).toEqual([['text_delta', 'Bob ']]), { timeout: 5_000, interval: 10 });
});

it("keeps two subagents' streams of one agent apart", () => {
  // As a subagent's emitter marks them (agents/tools/subagent-tool.ts).
  const fromSubagent = (text: string, subagent: string) => hub.emit('lead', 'text_delta', { text, subagent } as { text: string });
  fromSubagent('one ', 'lead/explore-1');
  fromSubagent('two ', 'lead/explore-2');
  fromSubagent('more', 'lead/explore-2');
  hub.emit('lead', 'text_delta', { text: 'mine' });
  log.close();
  expect(
    readAgentEvents(path.join(dir, 'logs'), 'lead').map((event) => [(event as { subagent?: string }).subagent, (event as { text?: string }).text]),
  ).toEqual([
    ['lead/explore-1', 'one '],
    ['lead/explore-2', 'two more'],
    [undefined, 'mine'],
  ]);
});

it('writes held deltas before the log is read back (resume reads what was streamed)', async () => {
  hub.emit('alice', 'text_delta', { text: 'partial answer' });
  // An agent that has only streamed so far is one of the log's agents.
  expect(await log.agents()).toEqual(['alice']);
  const events = await log.read('alice');
  expect(events.map((event) => [event.type, (event as { text?: unknown }).text])).toEqual([['text_delta', 'partial answer']]);
});

function readdirName(agent: string): string {
  return path.basename(log.fileFor(agent));
}
