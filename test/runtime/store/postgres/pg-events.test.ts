// What the event record keeps, and for how long (docs/contract.md#events): the text_delta events of a
// streamed response are stored as one row per agent per flush (a 150-task streamed run writes a
// tenth of the rows it did when each token was a row), read back as the same text; and `huddle
// prune` removes an archived team, row by row of every table, and keeps the team that runs. A
// completion's task event, and what its agent did before it, commit with the completion: a host
// cut off right after leaves a record that says the task was done.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import type { PgEventStore } from '../../../../src/runtime/store/postgres/pg-events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, ownDatabase, teamUrl } from '../../../helpers/postgres.js';
import { runCli } from '../../../helpers/run-cli.js';

const TASKS = 150;
/** A response's deltas (8 characters each: the fake API's default), three responses per task. */
const DELTAS = 160;
/** Deltas between two flushes: a flush every 50 ms holds at least this many from a fast stream. */
const PER_FLUSH = 50;

describePostgres('the event record on PostgreSQL', (base) => {
  let root: string;
  const stores: TeamStore[] = [];
  let client: pg.Client;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-retention-'));
    client = new pg.Client({ connectionString: base });
    await client.connect();
  });
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    await client?.end();
    rmSync(root, { recursive: true, force: true });
  });

  const rowsOf = async (team: string, table = 'huddle_events') =>
    Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE team = $1`, [team])).rows[0]!.n);

  it(
    'a 150-task streamed run: one row per agent per flush for its deltas, at most a tenth of one per event, the same text read back',
    { timeout: 180_000 },
    async () => {
      const { url, team } = teamUrl(base, 'stream');
      const hub = new EventHub();
      const store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [] });
      stores.push(store);
      const record = store.events as PgEventStore;
      const agents = ['alice', 'bob', 'carol', 'dave'];
      const streamed = new Map<string, string>(agents.map((a) => [a, '']));
      let emitted = 0;
      const emit = (agent: string, type: string, fields: Record<string, unknown>) => {
        hub.emit(agent, type as never, fields as never);
        emitted += 1;
      };
      for (let task = 1; task <= TASKS; task++) {
        const agent = agents[task % agents.length]!;
        emit(agent, 'status', { status: 'working' });
        for (let round = 0; round < 3; round++) {
          let text = '';
          for (let d = 0; d < DELTAS; d++) {
            const piece = `t${task}r${round}d${d}`.padEnd(8, '.').slice(0, 8);
            text += piece;
            emit(agent, 'text_delta', { text: piece });
            if ((d + 1) % PER_FLUSH === 0) await record.settled();
          }
          streamed.set(agent, streamed.get(agent)! + text);
          emit(agent, 'text', { text });
          emit(agent, 'tool_call', { id: `c${task}-${round}`, name: 'bash', input: { command: 'true' }, summary: 'true' });
          emit(agent, 'tool_result', { id: `c${task}-${round}`, name: 'bash', ok: true, content: '', duration_ms: 1 });
        }
        emit(agent, 'status', { status: 'idle' });
      }
      await record.settled();
      const rows = await rowsOf(team);
      // Before coalescing, every event was a row: `emitted` rows.
      expect(rows).toBeLessThanOrEqual(emitted / 10);
      for (const agent of agents) {
        const events = await store.events.read(agent);
        const text = events
          .filter((e) => e.type === 'text_delta')
          .map((e) => e.text as string)
          .join('');
        expect(text).toBe(streamed.get(agent));
        // The order around the deltas is kept: each response's deltas come before its text.
        const kinds = events.map((e) => e.type).filter((t) => t !== 'status');
        expect(kinds[0]).toBe('text_delta');
        expect(kinds.at(-1)).toBe('tool_result');
      }
    },
  );

  it('a secret streamed in two deltas is scrubbed from the row they are joined in', { timeout: 60_000 }, async () => {
    const secret = 'sk-test-Zq81kd92mZ0';
    const { url, team } = teamUrl(base, 'split');
    const hub = new EventHub();
    const store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [secret] });
    stores.push(store);
    hub.emit('alice', 'text_delta', { text: `key: ${secret.slice(0, 9)}` });
    hub.emit('alice', 'text_delta', { text: `${secret.slice(9)} end` });
    await (store.events as PgEventStore).settled();
    const { rows } = await client.query<{ body: string }>(`SELECT body::text AS body FROM huddle_events WHERE team = $1 AND agent = 'alice'`, [team]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.body).not.toContain(secret.slice(0, 9));
    expect(rows[0]!.body).toContain('end');
  });

  it('a completion commits with its task event and the events before it: a host gone right after still left them', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'record');
    const hub = new EventHub();
    const store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [] });
    await store.roster.add({ name: 'alice', role: 'coder' });
    const task = await store.board.create({ subject: 'the notes' }, 'lead');
    await store.board.claim(task.id, 'alice');
    hub.emit('alice', 'text_delta', { text: 'done: ' });
    hub.emit('alice', 'text_delta', { text: 'the notes' });
    hub.emit('alice', 'tool_result', { id: 't1', name: 'write', ok: true, content: 'wrote notes.md', duration_ms: 1 });
    await store.board.update(task.id, { status: 'completed' }, 'alice');
    // The host is cut off now: what is still buffered is never written (closing without a flush drops it).
    store.events.close();
    const { rows } = await client.query<{ body: { type: string; action?: string; text?: string } }>(
      `SELECT body FROM huddle_events WHERE team = $1 AND agent = 'alice' ORDER BY seq`,
      [team],
    );
    const kinds = rows.map((row) => (row.body.type === 'task' ? `task:${row.body.action}` : row.body.type));
    expect(kinds.slice(-3)).toEqual(['text_delta', 'tool_result', 'task:completed']);
    expect(rows.find((row) => row.body.type === 'text_delta')?.body.text).toBe('done: the notes');
    // Written once: the task event emitted after the commit is not stored again.
    expect(kinds.filter((kind) => kind === 'task:completed')).toHaveLength(1);
    await store.close();
    const again = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM huddle_events WHERE team = $1 AND body->>'type' = 'task' AND body->>'action' = 'completed'`,
      [team],
    );
    expect(Number(again.rows[0]!.n)).toBe(1);
  });

  it("a completion retried after a lock timeout writes the retried attempt's task event, once, with the events before it", { timeout: 120_000 }, async () => {
    // A database of its own: the test locks the whole event table, which other test files' teams on the server share.
    const database = await ownDatabase(base, 'huddle_events_retry');
    const reader = new pg.Client({ connectionString: database.url });
    const { url, team } = teamUrl(database.url, 'retry');
    const hub = new EventHub();
    // The lease sets the lock timeout (2 s): a write waiting longer on a lock runs again.
    const store = await postgresBackend(url, new Workspace(root), { leaseMs: 2_000 }).open({ hub, secrets: [] });
    try {
      await reader.connect();
      await retriedCompletion(store, hub, database.url, reader, team);
    } finally {
      // Each let go whatever the one before did: the database is dropped in any case.
      await store.close().catch(() => undefined);
      await reader.end().catch(() => undefined);
      await database.drop();
    }
  });

  async function retriedCompletion(store: TeamStore, hub: EventHub, base: string, client: pg.Client, team: string): Promise<void> {
    await store.roster.add({ name: 'alice', role: 'coder' });
    const task = await store.board.create({ subject: 'the notes' }, 'lead');
    await store.board.claim(task.id, 'alice');
    await (store.events as PgEventStore).settled();

    // Another session holds the event table: the completion's first attempt waits on its INSERT (after
    // its work, at COMMIT), times out, and runs again; the table is let go once the second attempt waits.
    const holder = new pg.Client({ connectionString: base });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE huddle_events IN EXCLUSIVE MODE');
    const waiting = async () =>
      (
        await client.query<{ started: Date }>(
          `SELECT a.xact_start AS started FROM pg_locks l JOIN pg_stat_activity a USING (pid)
            WHERE l.relation = 'huddle_events'::regclass AND NOT l.granted AND a.datname = current_database()`,
        )
      ).rows.map((row) => row.started.getTime());
    hub.emit('alice', 'text_delta', { text: 'done: the notes' });
    hub.emit('alice', 'tool_result', { id: 't1', name: 'write', ok: true, content: 'wrote notes.md', duration_ms: 1 });
    const completing = store.board.update(task.id, { status: 'completed' }, 'alice');
    let first: number | undefined;
    for (;;) {
      const now = await waiting();
      first ??= now[0];
      if (first !== undefined && now.some((started) => started !== first)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await holder.query('COMMIT');
    await holder.end();
    await completing;
    await (store.events as PgEventStore).settled();
    const completed = (await store.board.get(task.id))!;

    const { rows } = await client.query<{ body: { type: string; action?: string; text?: string; task?: { updated_at?: string } } }>(
      `SELECT body FROM huddle_events WHERE team = $1 AND agent = 'alice' ORDER BY seq`,
      [team],
    );
    const kinds = rows.map((row) => (row.body.type === 'task' ? `task:${row.body.action}` : row.body.type));
    expect(kinds.slice(-3)).toEqual(['text_delta', 'tool_result', 'task:completed']);
    // Once, and as the attempt that committed made it (not the first attempt's, rolled back).
    expect(kinds.filter((kind) => kind === 'task:completed')).toHaveLength(1);
    expect(rows.at(-1)!.body.task?.updated_at).toBe(completed.updated_at);
  }

  it('huddle prune removes an archived team (--dry-run first removes nothing) and keeps the live one', { timeout: 120_000 }, async () => {
    const { url: oldUrl, team: old } = teamUrl(base, 'prune');
    const ws = new Workspace(root);
    const first = await postgresBackend(oldUrl, ws).open({ hub: new EventHub(), secrets: [] });
    await first.board.create({ subject: 'old work' }, 'lead');
    await first.bus.send({ type: 'message', from: 'lead', to: 'lead', content: 'note' });
    await first.close();
    const archived = await postgresBackend(oldUrl, ws).archive();
    const archivedTeam = /team '([^']+)'/.exec(archived ?? '')![1]!;
    expect(archivedTeam.startsWith(`${old}@archive-`)).toBe(true);

    const { url: liveUrl, team: live } = teamUrl(base, 'prune-live');
    const running = await postgresBackend(liveUrl, ws).open({ hub: new EventHub(), secrets: [] });
    stores.push(running);
    await running.board.create({ subject: 'live work' }, 'lead');

    const dry = await runCli(['prune', '--team', liveUrl, '--dry-run', '--older-than', '0'], { cwd: root, timeoutMs: 60_000 });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would remove team '${archivedTeam}'`);
    expect(await rowsOf(archivedTeam, 'huddle_tasks')).toBe(1);

    const pruned = await runCli(['prune', '--team', liveUrl, '--older-than', '0'], { cwd: root, timeoutMs: 60_000 });
    expect(pruned.code, pruned.stderr).toBe(0);
    // One line per team removed (other tests' archived teams share the database): ours, not the live one.
    const lines = pruned.stdout.split('\n').filter(Boolean);
    expect(lines.filter((line) => line.includes(`'${archivedTeam}'`))).toEqual([expect.stringMatching(/^removed team '[^']+' \(2 events, archived /)]);
    expect(lines.every((line) => line.startsWith('removed team '))).toBe(true);
    expect(lines.some((line) => line.includes(`'${live}'`))).toBe(false);
    for (const table of ['huddle_teams', 'huddle_tasks', 'huddle_messages', 'huddle_members', 'huddle_hosts'])
      expect(await rowsOf(archivedTeam, table)).toBe(0);

    // Named, the live team is refused: one line, exit 1, nothing removed.
    const refused = await runCli(['prune', '--team', liveUrl, live], { cwd: root, timeoutMs: 60_000 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(new RegExp(`^kept team '${live}' .*its lead is running it`));
    expect(await rowsOf(live, 'huddle_tasks')).toBe(1);
    expect((await running.board.list()).map((t) => t.subject)).toEqual(['live work']);
  });
});
