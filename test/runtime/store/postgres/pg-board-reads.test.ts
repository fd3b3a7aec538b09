// What a board change reads on PostgreSQL (docs/postgresql-managed.md#commits-and-the-disk): a completion
// reads its task, the tasks that wait for it and their neighbours by key, never the whole team, with
// the generic plan the prepared statement keeps (pg-database.ts sets force_generic_plan). A plan that
// scanned the team made every completion cost as much as the board was large.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { READ_LOCKED } from '../../../../src/runtime/store/postgres/pg-board-sql.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, ownDatabase, teamUrl } from '../../../helpers/postgres.js';

describePostgres('what a board change reads on PostgreSQL', (base) => {
  let root: string;
  let store: TeamStore | undefined;
  let client: pg.Client | undefined;
  // A database of its own: the table holds this one team, as a server with one big team has it.
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let own = '';
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-reads-'));
    database = await ownDatabase(base, 'huddle_reads');
    own = database.url;
  });
  afterAll(async () => {
    await store?.close();
    await client?.end();
    await database?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a completion reads its task and its neighbours by key, not the whole team', { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(own, 'reads');
    store = await postgresBackend(url, new Workspace(root)).open({ hub: new EventHub(), secrets: [], mode: 'join' });
    // Tasks 1, 2, 3 in a chain (1 blocks 2, which blocks 3), then 5,000 completed ones (copies of
    // task 1, written directly: the board's rules play no part in what a read costs).
    for (let i = 1; i <= 3; i++) await store.board.create({ subject: `step ${i}`, ...(i > 1 ? { blockedBy: [i - 1] } : {}) }, 'lead');
    client = new pg.Client({ connectionString: own });
    await client.connect();
    await client.query(
      `INSERT INTO huddle_tasks (team, id, status, blocked_by, data)
       SELECT team, n, 'completed', '{}', data || jsonb_build_object('id', n, 'status', 'completed', 'blocks', '[]'::jsonb)
         FROM huddle_tasks, generate_series(1001, 6000) AS n WHERE team = $1 AND id = 1`,
      [team],
    );
    // Statistics as a running server has them (autovacuum analyses a table this size).
    await client.query('ANALYZE huddle_tasks');
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query({ name: 'read_locked', text: READ_LOCKED, values: [team, [3]] }); // planned once, as on a pooled connection
    await client.query('BEGIN');
    const { rows } = await client.query<{ id: string; locked: boolean }>({ name: 'read_locked', text: READ_LOCKED, values: [team, [2]] });
    const read = await client.query<{ seq: string; idx: string }>(
      `SELECT coalesce(seq_tup_read, 0) AS seq, coalesce(idx_tup_fetch, 0) AS idx FROM pg_stat_xact_user_tables WHERE relname = 'huddle_tasks'`,
    );
    await client.query('ROLLBACK');
    // The task, the one waiting for it (both locked), and its blocker as it is.
    expect(rows.map((row) => [Number(row.id), row.locked]).sort()).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    const { seq, idx } = read.rows[0]!;
    expect(Number(seq) + Number(idx)).toBeLessThan(20);
  });
});
