// The schema's migrations: applied on connect, each once, also when several processes connect to a
// fresh database at the same moment (they take turns under an advisory lock); connecting again
// applies nothing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from '../../../../src/runtime/store/postgres/migrations.js';
import { describePostgres } from '../../../helpers/postgres.js';

describePostgres('migrations', (base) => {
  const database = `huddle_migrations_${randomUUID().slice(0, 8)}`;
  const admin = () => new pg.Client({ connectionString: base });
  afterAll(async () => {
    const client = admin();
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database}`);
    await client.end();
  });

  it('five connections migrating a fresh database at once apply each migration exactly once', async () => {
    const client = admin();
    await client.connect();
    await client.query(`CREATE DATABASE ${database}`);
    await client.end();
    const url = new URL(base);
    url.pathname = `/${database}`;
    const clients = Array.from({ length: 5 }, () => new pg.Client({ connectionString: url.href }));
    await Promise.all(clients.map((c) => c.connect()));
    try {
      const applied = await Promise.all(clients.map((c) => migrate(c)));
      expect(applied.flat().sort()).toEqual(MIGRATIONS.map((m) => m.version));
      const { rows } = await clients[0]!.query<{ version: number }>('SELECT version FROM huddle_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(clients[1]!)).toEqual([]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
