// Who may connect, and how a process waits for another one's migration:
// - a role with data grants alone (no CREATE on the schema: an admin migrated once, apps get DML)
//   connects to a migrated database and runs a team;
// - a role without rights on a database huddle never set up gets one actionable line, exit 2;
// - a second process's wait for the migration lock is not cut by the pool's lock or query timeouts;
// - two callers in one process share one migration: neither gets the pool before the schema is
//   there, and both hear of a migration that failed.
// Each test has its own database (and role), dropped afterwards.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Database, type DatabaseOptions } from '../../../src/runtime/store/postgres/pg-database.js';
import { MIGRATIONS } from '../../../src/runtime/store/postgres/migrations.js';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres } from '../../helpers/postgres.js';
import { runCli } from '../../helpers/run-cli.js';

/** The advisory lock key of huddle's migrations (migrations.ts). */
const MIGRATION_LOCK = 0x68756464;

const OPTIONS: DatabaseOptions = { retryForMs: 2_000, queryTimeoutMs: 1_000, idleInTransactionMs: 2_000, lockTimeoutMs: 100 };

describePostgres('migrations and the rights of the role that connects', (base) => {
  let fake: FakeApi;
  let root: string;
  const drops: string[] = [];
  const admin = async <T>(work: (client: pg.Client) => Promise<T>, database?: string): Promise<T> => {
    const client = new pg.Client({ connectionString: database ? on(database) : base });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  /** The server's URL with another database (and user). */
  const on = (database: string, user?: string): string => {
    const url = new URL(base);
    url.pathname = `/${database}`;
    if (user) {
      url.username = user;
      url.password = '';
    }
    return url.href;
  };
  const freshDatabase = async (): Promise<string> => {
    const name = `huddle_rights_${randomUUID().slice(0, 8)}`;
    await admin((c) => c.query(`CREATE DATABASE ${name}`));
    drops.push(`DATABASE ${name}`);
    // Nobody but the owner creates in its schema (PostgreSQL 15's default; older servers let PUBLIC).
    await admin((c) => c.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC'), name);
    return name;
  };
  const freshRole = async (): Promise<string> => {
    const name = `huddle_role_${randomUUID().slice(0, 8)}`;
    await admin((c) => c.query(`CREATE ROLE ${name} LOGIN`));
    drops.push(`ROLE ${name}`);
    return name;
  };

  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-rights-'));
  });
  afterEach(async () => {
    // Databases first (a role that owns grants in one cannot be dropped before it).
    for (const what of drops.splice(0).sort((a, b) => (a.startsWith('DATABASE') ? -1 : b.startsWith('DATABASE') ? 1 : 0))) {
      await admin((c) => c.query(`DROP ${what.startsWith('DATABASE') ? `${what} WITH (FORCE)` : what}`)).catch(() => undefined);
    }
  });
  afterAll(async () => {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a role with only data grants runs a team on a database its owner migrated', { timeout: 120_000 }, async () => {
    const database = await freshDatabase();
    const owner = await Database.open(on(database), OPTIONS);
    await owner.close();
    const role = await freshRole();
    await admin(async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await c.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    }, database);

    const cwd = mkdtempSync(path.join(root, 'dml-'));
    const team = new URL(on(database, role));
    team.searchParams.set('team', 'dml');
    fake.respond((request) => (request.agent === 'lead' ? replyText('Done with data grants alone.') : undefined));
    const result = await runCli(['-p', 'say hello', '--team', team.href, '--cwd', cwd], {
      env: { ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off' },
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Done with data grants alone.\n');
    const { rows } = await admin((c) => c.query<{ n: string }>(`SELECT count(*) AS n FROM huddle_events WHERE team = 'dml'`), database);
    expect(Number(rows[0]!.n)).toBeGreaterThan(0);
  });

  it('a role that may not create the tables on a fresh database: one line saying what to do, exit 2', { timeout: 60_000 }, async () => {
    const database = await freshDatabase();
    const role = await freshRole();
    const cwd = mkdtempSync(path.join(root, 'norights-'));
    const team = new URL(on(database, role));
    team.searchParams.set('team', 'shop');
    const result = await runCli(['-p', 'hi', '--team', team.href, '--cwd', cwd], { env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^huddle: cannot open the team on postgres://${role}@[^ ]+/${database}\\?team=shop: huddle's tables are not set up on this database and user ${role} may not create them \\(permission denied for schema public\\): ` +
          `have the database's owner run huddle on it once, or GRANT CREATE ON SCHEMA public TO ${role}\\n$`,
      ),
    );
    // Nothing was left half made.
    const { rows } = await admin((c) => c.query<{ t: string | null }>(`SELECT to_regclass('huddle_migrations')::text AS t`), database);
    expect(rows[0]!.t).toBeNull();
  });

  it(
    'a role with only data grants on a database an older huddle migrated: one line saying the owner must run this version once',
    { timeout: 60_000 },
    async () => {
      const database = await freshDatabase();
      await (await Database.open(on(database), OPTIONS)).close();
      // As an older huddle left it: the last migration not applied.
      const last = MIGRATIONS.at(-1)!;
      await admin((c) => c.query('DELETE FROM huddle_migrations WHERE version = $1', [last.version]), database);
      const role = await freshRole();
      await admin(async (c) => {
        await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
        await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
        await c.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      }, database);
      await expect(Database.open(on(database, role), OPTIONS)).rejects.toThrow(
        new RegExp(
          `^this version of huddle changes its tables on this database and user ${role} may not \\(must be owner of [^)]+\\): have the tables' owner run this version of huddle on it once$`,
        ),
      );
      const { rows } = await admin((c) => c.query<{ version: number }>('SELECT version FROM huddle_migrations WHERE version = $1', [last.version]), database);
      expect(rows).toEqual([]);
    },
  );

  it('a role that may not even read the tables of a migrated database: what to grant, in one line', { timeout: 60_000 }, async () => {
    const database = await freshDatabase();
    await (await Database.open(on(database), OPTIONS)).close();
    const role = await freshRole();
    await expect(Database.open(on(database, role), OPTIONS)).rejects.toThrow(
      new RegExp(
        `^user ${role} may not read huddle's tables \\(permission denied for table huddle_migrations\\): ` +
          `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}$`,
      ),
    );
  });

  it("a second process's wait for the migration lock outlasts the pool's lock and query timeouts", { timeout: 60_000 }, async () => {
    const database = await freshDatabase();
    const holder = new pg.Client({ connectionString: on(database) });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      let settled: string | undefined;
      const opening = Database.open(on(database), OPTIONS).then(
        (db) => ((settled = 'opened'), db),
        (error: unknown) => {
          settled = `failed: ${(error as Error).message}`;
          throw error;
        },
      );
      opening.catch(() => undefined);
      // It waits for the lock (seen in pg_locks)…
      for (;;) {
        const { rows } = await holder.query(
          `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = $2)`,
          [MIGRATION_LOCK, database],
        );
        if (rows.length) break;
        expect(settled).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // …for longer than both timeouts (the hold is the test's input, not a wait for something).
      await new Promise((resolve) => setTimeout(resolve, OPTIONS.lockTimeoutMs + OPTIONS.queryTimeoutMs + 500));
      expect(settled).toBeUndefined();
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      const db = await opening;
      const { rows } = await db.query<{ version: number }>('SELECT version FROM huddle_migrations ORDER BY version');
      expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
      await db.close();
    } finally {
      await holder.end();
    }
  });

  it('a second caller in the process waits for the same migration, and hears of its failure', { timeout: 60_000 }, async () => {
    const afterMicrotasks = () => new Promise((resolve) => setImmediate(resolve));
    // 1. It succeeds: the second caller gets the pool only once the schema is there.
    const database = await freshDatabase();
    const holder = new pg.Client({ connectionString: on(database) });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const first = Database.open(on(database), OPTIONS);
      first.catch(() => undefined);
      let given = false;
      let second: string | undefined;
      const later = Database.open(on(database), OPTIONS).then(async (db) => {
        given = true;
        second = (await db.query<{ t: string | null }>(`SELECT to_regclass('huddle_teams')::text AS t`)).rows[0]!.t ?? 'no schema yet';
        return db;
      });
      later.catch(() => undefined);
      await afterMicrotasks();
      expect(given).toBe(false);
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      const [a, b] = await Promise.all([first, later]);
      expect(second).toBe('huddle_teams');
      expect(a).toBe(b);
      await a.close();
      await b.close();
    } finally {
      await holder.end();
    }

    // 2. It fails (the role may not create the tables): both callers hear why; the next one tries afresh.
    const bare = await freshDatabase();
    const role = await freshRole();
    const url = on(bare, role);
    const lock = new pg.Client({ connectionString: on(bare) });
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const outcomes: string[] = [];
      const record = (p: Promise<Database>) =>
        p.then(
          () => outcomes.push('opened'),
          (error: unknown) => outcomes.push((error as Error).message),
        );
      const first = record(Database.open(url, OPTIONS));
      for (;;) {
        const { rows } = await lock.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1`, [MIGRATION_LOCK]);
        if (rows.length) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const second = record(Database.open(url, OPTIONS));
      await afterMicrotasks();
      expect(outcomes).toEqual([]);
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      await Promise.all([first, second]);
      expect(outcomes).toHaveLength(2);
      for (const outcome of outcomes) expect(outcome).toMatch(new RegExp(`user ${role} may not create them`));
      await expect(Database.open(url, OPTIONS)).rejects.toThrow(/may not create them/);
    } finally {
      await lock.end();
    }
  });
});
