// Claims and completions on PostgreSQL commit concurrently (docs/postgresql-managed.md#commits-and-the-disk), and
// nothing the board or the record promises gives way for it (docs/contract.md#tasks,
// docs/contract.md#events): claimers in several processes on chains of dependent tasks never
// take a task whose dependency is not done, never take one twice; two agents of one process
// complete their tasks in two transactions at once, each with its own events before its task
// event; and the lead's mirror misses no row of a host whose transactions commit out of order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { EventHub, type HuddleEvent } from '../../../../src/runtime/events/events.js';
import type { PgEventStore } from '../../../../src/runtime/store/postgres/pg-events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

describePostgres('concurrent claims and completions on PostgreSQL', (base) => {
  let root: string;
  const stores: TeamStore[] = [];
  const clients: pg.Client[] = [];
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-concurrency-'));
  });
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    for (const client of clients) await client.end().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  const open = async (url: string, hub = new EventHub(), mode: 'run' | 'join' = 'join') => {
    const store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [], mode });
    stores.push(store);
    return store;
  };
  const connect = async () => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    clients.push(client);
    return client;
  };

  it('claimers in three processes on chains of dependent tasks take each task once, never before its dependency is done', { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(base, 'chains');
    const lead = await open(url);
    const CHAIN = 4;
    const TASKS = 48;
    for (let i = 1; i <= TASKS; i++) await lead.board.create({ subject: `step ${i}`, ...(i % CHAIN !== 1 ? { blockedBy: [i - 1] } : {}) }, 'lead');
    const client = await connect();
    const statusOf = async (id: number) =>
      (await client.query<{ status: string }>('SELECT status FROM huddle_tasks WHERE team = $1 AND id = $2', [team, id])).rows[0]?.status;
    const processes = await Promise.all([open(url), open(url), open(url)]);
    const claimed: number[] = [];
    const early: string[] = [];
    await Promise.all(
      processes.flatMap((store, p) =>
        [0, 1, 2, 3].map(async (loop) => {
          const owner = `p${p}c${loop}`;
          for (let idle = 0; claimed.length < TASKS && idle < 2_000;) {
            const task = await store.board.claimNext(owner);
            if (!task) {
              idle += 1;
              await new Promise<void>((resolve) => setImmediate(resolve));
              continue;
            }
            claimed.push(task.id);
            // Its dependency committed completed before this claim did.
            if (task.id % CHAIN !== 1 && (await statusOf(task.id - 1)) !== 'completed') early.push(`#${task.id} before #${task.id - 1}`);
            await store.board.update(task.id, { status: 'completed' }, owner);
          }
        }),
      ),
    );
    expect(early).toEqual([]);
    expect(claimed.length).toBe(TASKS);
    expect(new Set(claimed).size).toBe(TASKS);
    expect((await lead.board.list()).filter((task) => task.status !== 'completed')).toEqual([]);
  });

  it('two agents of one process complete their tasks in two transactions at once, each with its own events first', { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(base, 'together');
    const hub = new EventHub();
    const store = await open(url, hub);
    const a = await store.board.create({ subject: 'alice’s' }, 'lead');
    const b = await store.board.create({ subject: 'bob’s' }, 'lead');
    await store.board.claim(a.id, 'alice');
    await store.board.claim(b.id, 'bob');
    hub.emit('alice', 'text', { text: 'alice finished' });
    hub.emit('bob', 'text', { text: 'bob finished' });
    // Another session holds alice's task: her completion waits for it, in its transaction.
    const holder = await connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM huddle_tasks WHERE team = $1 AND id = $2 FOR UPDATE', [team, a.id]);
    const alice = store.board.update(a.id, { status: 'completed' }, 'alice');
    const watcher = await connect();
    await vi.waitFor(
      async () => {
        const { rows } = await watcher.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid WHERE NOT l.granted AND s.application_name = 'huddle'`,
        );
        expect(Number(rows[0]!.n)).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 20 },
    );
    // Bob's completion does not wait for hers.
    const done = await store.board.update(b.id, { status: 'completed' }, 'bob');
    expect(done.status).toBe('completed');
    await holder.query('COMMIT');
    expect((await alice).status).toBe('completed');
    await (store.events as PgEventStore).settled();
    const { rows } = await watcher.query<{ agent: string; body: { type: string; action?: string; text?: string } }>(
      `SELECT agent, body FROM huddle_events WHERE team = $1 AND agent IN ('alice', 'bob') ORDER BY seq`,
      [team],
    );
    for (const agent of ['alice', 'bob']) {
      const kinds = rows.filter((row) => row.agent === agent).map((row) => (row.body.type === 'task' ? `task:${row.body.action}` : row.body.type));
      expect(kinds).toEqual(['task:claimed', 'text', 'task:completed']);
    }
  });

  it('the mirror reads a row committed after a later one of the same host, and in the order of their transactions', { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(base, 'mirror');
    const leadHub = new EventHub();
    const seen: string[] = [];
    leadHub.subscribe((event: HuddleEvent) => {
      if (event.type === 'text' && (event as { host?: unknown }).host !== undefined) seen.push(String((event as { text?: unknown }).text));
    });
    await open(url, leadHub, 'run');
    const workerHub = new EventHub();
    const worker = await open(url, workerHub);
    const client = await connect();
    workerHub.emit('alice', 'text', { text: 'first' });
    await (worker.events as PgEventStore).settled();
    await vi.waitFor(() => expect(seen).toEqual(['first']), { timeout: 30_000, interval: 20 });
    const host = (await client.query<{ host: string }>(`SELECT host FROM huddle_events WHERE team = $1 AND agent = 'alice'`, [team])).rows[0]!.host;
    // A transaction of the worker's host that wrote a row and has not committed yet (as a completion of another agent can be).
    const slow = await connect();
    await slow.query('BEGIN');
    await slow.query(`INSERT INTO huddle_events (team, host, uid, agent, body) VALUES ($1, $2, $3, 'bob', $4)`, [
      team,
      host,
      `held-${team}`,
      { ts: new Date().toISOString(), agent: 'bob', type: 'text', text: 'held' },
    ]);
    workerHub.emit('carol', 'text', { text: 'after' });
    await (worker.events as PgEventStore).settled();
    const committed = (await client.query<{ at: Date }>('SELECT clock_timestamp() AS at')).rows[0]!.at;
    // The lead has read the host's rows since (and finished): the later row is committed, the earlier one not yet.
    await vi.waitFor(
      async () => {
        const { rows } = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'huddle' AND state = 'idle' AND query LIKE '%huddle_events%host = $2%' AND query_start > $1`,
          [committed],
        );
        expect(Number(rows[0]!.n)).toBeGreaterThan(0);
      },
      { timeout: 30_000, interval: 20 },
    );
    await slow.query('COMMIT');
    await vi.waitFor(() => expect(seen).toEqual(['first', 'held', 'after']), { timeout: 30_000, interval: 20 });
  });
});
