// The connections one process holds on the team's database (docs/postgresql-managed.md#connections):
// at most `postgres.poolSize` in its pool however much it does at once, one that listens, and one
// that renews its lease, held from one renewal to the next (not a new connection every few seconds).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { Database } from '../../../../src/runtime/store/postgres/pg-database.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import { parseTeamUrl } from '../../../../src/runtime/store/team-url.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

describePostgres('the connections of one process', (base) => {
  let root: string;
  let admin: pg.Client;
  const database = `huddle_budget_${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-budget-'));
    admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    rmSync(root, { recursive: true, force: true });
  });

  it('a pool of poolSize, one listening, one renewing the lease on the same connection renewal after renewal', { timeout: 60_000 }, async () => {
    const own = new URL(base);
    own.pathname = `/${database}`;
    const { url, team } = teamUrl(own.href, 'budget');
    const store = await postgresBackend(url, new Workspace(root), { leaseMs: 900, poolSize: 2 }).open({ hub: new EventHub(), secrets: [] });
    try {
      // Much at once: the pool grows to its size and no further.
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.board.create({ subject: `task ${i + 1}` }, 'lead')));
      const connections = async () =>
        (
          await admin.query<{ application_name: string; pid: number }>(
            `SELECT application_name, pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'huddle%'`,
            [database],
          )
        ).rows;
      // (The team's tables are in its own database; pg_stat_activity is the server's.)
      const ownClient = new pg.Client({ connectionString: own.href });
      await ownClient.connect();
      const renewals = async () =>
        (
          await ownClient.query<{ until: Date }>(`SELECT lease_until AS until FROM huddle_hosts WHERE team = $1 AND state = 'live'`, [team])
        ).rows[0]?.until.getTime();
      // Three renewals seen (the lease's end moves on each time).
      const seen = new Set<number>();
      const leasePids = new Set<number>();
      while (seen.size < 4) {
        const until = await renewals();
        if (until !== undefined) seen.add(until);
        for (const row of await connections()) if (row.application_name === 'huddle-lease') leasePids.add(row.pid);
        await sleep(50);
      }
      await ownClient.end();
      const now = await connections();
      const count = (name: string) => now.filter((row) => row.application_name === name).length;
      expect(count('huddle')).toBeLessThanOrEqual(2);
      expect(count('huddle-listen')).toBe(1);
      expect(count('huddle-lease')).toBe(1);
      // The same connection renewed every time.
      expect(leasePids.size).toBe(1);
      // The server keeps TCP keepalives on the pool's connections (a vanished client's backend ends).
      const db = await Database.open(parseTeamUrl(url, 'x').connectionString, {
        retryForMs: 5_000,
        queryTimeoutMs: 5_000,
        idleInTransactionMs: 5_000,
        lockTimeoutMs: 5_000,
      });
      try {
        const { rows } = await db.query<{ tcp_keepalives_idle: string }>('SHOW tcp_keepalives_idle');
        expect(rows[0]!.tcp_keepalives_idle).toBe('30');
      } finally {
        await db.close();
      }
    } finally {
      await store.close();
    }
    // Closed: nothing of it is left on the server.
    const after = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'huddle%'`, [database]);
    let left = after.rows[0].n as number;
    for (let i = 0; left > 0 && i < 100; i++) {
      await sleep(50);
      left = (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'huddle%'`, [database])).rows[0]
        .n as number;
    }
    expect(left).toBe(0);
  });

  it("keeps the team's tables in a schema of its own named by the URL's options (search_path)", { timeout: 60_000 }, async () => {
    const own = new URL(base);
    own.pathname = `/${database}`;
    const ownClient = new pg.Client({ connectionString: own.href });
    await ownClient.connect();
    try {
      await ownClient.query('CREATE SCHEMA IF NOT EXISTS teamwork');
      own.searchParams.set('options', '-c search_path=teamwork');
      const { url } = teamUrl(own.href, 'schema');
      const store = await postgresBackend(url, new Workspace(root)).open({ hub: new EventHub(), secrets: [] });
      try {
        await store.board.create({ subject: 'in its schema' }, 'lead');
      } finally {
        await store.close();
      }
      const { rows } = await ownClient.query<{ n: number }>(`SELECT count(*)::int AS n FROM teamwork.huddle_tasks WHERE data->>'subject' = 'in its schema'`);
      expect(rows[0]!.n).toBe(1);
    } finally {
      await ownClient.end();
    }
  });
});
