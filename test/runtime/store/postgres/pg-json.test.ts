// Text jsonb cannot hold, as agents produce it: U+0000 from a command's output, half of a surrogate
// pair from a long line cut mid-emoji. Stored as U+FFFD instead of failing the write (which would
// stop the run); whole emoji and text that merely looks like an escape come back as they went in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { fromJsonText } from '../../../../src/runtime/store/postgres/pg-json.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

const EMOJI = '\u{1F600}';
const HIGH = EMOJI[0]!;
const LOW = EMOJI[1]!;
const NASTY = `nul[\u0000] high-end[${HIGH}] low-start[${LOW}] whole[${EMOJI}] literal[\\ud83d \\u0000] pair-of-escapes-as-text[\\ud83d\\ude00]`;
const STORED = `nul[\ufffd] high-end[\ufffd] low-start[\ufffd] whole[${EMOJI}] literal[\\ud83d \\u0000] pair-of-escapes-as-text[\\ud83d\\ude00]`;

it('the JSON text for jsonb: lone halves and NUL become U+FFFD, nothing else changes', () => {
  expect(JSON.parse(fromJsonText(JSON.stringify({ text: NASTY })))).toEqual({ text: STORED });
  expect(fromJsonText(JSON.stringify({ text: 'plain \\ text' }))).toBe(JSON.stringify({ text: 'plain \\ text' }));
});

describePostgres('text jsonb cannot hold', (base) => {
  let root: string;
  let store: TeamStore | undefined;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-json-'));
  });
  afterAll(async () => {
    await store?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('is stored as U+FFFD in messages, tasks and events, and the run goes on', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(base, 'json');
    const hub = new EventHub();
    store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [] });
    const failures: string[] = [];
    store.onFailure((error) => failures.push(error.message));
    await store.roster.add({ name: 'alice', role: 'coder', status: 'idle' });

    await store.bus.send({ type: 'message', from: 'lead', to: 'alice', content: NASTY });
    expect((await store.bus.take('alice')).map((m) => m.content)).toEqual([STORED]);

    const task = await store.board.create({ subject: NASTY, description: NASTY }, 'lead');
    expect((await store.board.get(task.id))?.subject).toBe(STORED);

    hub.emit('alice', 'tool_result', { id: 't1', name: 'bash', ok: true, content: NASTY, duration_ms: 1 });
    // read() reads what was recorded so far, this event included (it waits for the batch).
    const events = await store.events.read('alice');
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ content: STORED });
    expect(failures).toEqual([]);
  });
});
