// The schema, as versioned migrations applied when a process connects. Each runs once, in its
// own transaction, recorded in huddle_migrations; an advisory lock makes two processes that
// start at once take turns (the second finds the work done). A migration is never edited once
// released: a change is a new version at the end of the list.
//
// Every table is keyed by `team` first: several teams share one database.
import type pg from 'pg';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'teams, roster, bus, board, spend, allow-list, events, hosts, placements, approvals',
    sql: `
CREATE TABLE huddle_teams (
  team text PRIMARY KEY,
  team_name text NOT NULL,
  lead text NOT NULL,
  lead_host text,
  ran boolean NOT NULL DEFAULT false,
  last_task_id bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE huddle_members (
  team text NOT NULL,
  name text NOT NULL,
  position bigint NOT NULL,
  data jsonb NOT NULL,
  PRIMARY KEY (team, name)
);
CREATE TABLE huddle_inboxes (
  team text NOT NULL,
  name text NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  acked_seq bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team, name)
);
CREATE TABLE huddle_messages (
  team text NOT NULL,
  recipient text NOT NULL,
  seq bigint NOT NULL,
  id text NOT NULL,
  body jsonb NOT NULL,
  PRIMARY KEY (team, recipient, seq),
  UNIQUE (team, recipient, id)
);
CREATE TABLE huddle_tasks (
  team text NOT NULL,
  id bigint NOT NULL,
  status text NOT NULL,
  owner text,
  reviewer text,
  blocked_by bigint[] NOT NULL DEFAULT '{}',
  version bigint NOT NULL DEFAULT 1,
  data jsonb NOT NULL,
  op_token text,
  op_action text,
  PRIMARY KEY (team, id)
);
CREATE INDEX huddle_tasks_open ON huddle_tasks (team, status, id);
-- Pending tasks with nothing left in blockedBy: where a claim looks first.
CREATE INDEX huddle_tasks_ready ON huddle_tasks (team, id) WHERE status = 'pending' AND blocked_by = '{}';
-- Who waits for a task (blocked_by contains it); searched on every completion, so no pending list.
CREATE INDEX huddle_tasks_blocked_by ON huddle_tasks USING gin (blocked_by) WITH (fastupdate = off);
CREATE TABLE huddle_spend (
  team text NOT NULL,
  agent text NOT NULL,
  task text NOT NULL DEFAULT '',
  subject text NOT NULL DEFAULT '',
  cost_usd double precision NOT NULL DEFAULT 0,
  model_calls bigint NOT NULL DEFAULT 0,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team, agent, task)
);
CREATE TABLE huddle_allow (
  team text NOT NULL,
  position bigserial,
  prefix text NOT NULL,
  PRIMARY KEY (team, prefix)
);
CREATE TABLE huddle_events (
  seq bigserial PRIMARY KEY,
  team text NOT NULL,
  host text NOT NULL,
  uid text NOT NULL UNIQUE,
  agent text NOT NULL,
  body jsonb NOT NULL
);
CREATE INDEX huddle_events_agent ON huddle_events (team, agent, seq);
CREATE INDEX huddle_events_host ON huddle_events (team, host, seq);
CREATE TABLE huddle_transcripts (
  id bigserial PRIMARY KEY,
  team text NOT NULL,
  agent text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE huddle_run_records (
  id bigserial PRIMARY KEY,
  team text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE huddle_hosts (
  team text NOT NULL,
  host text NOT NULL,
  kind text NOT NULL,
  label text NOT NULL,
  hostname text NOT NULL,
  pid integer NOT NULL,
  proc_start text,
  cwd text NOT NULL,
  slots integer NOT NULL DEFAULT 0,
  epoch bigint NOT NULL DEFAULT 1,
  state text NOT NULL,
  lease_ms integer NOT NULL,
  lease_until timestamptz NOT NULL,
  answerers integer NOT NULL DEFAULT 0,
  swept_by text,
  swept_at timestamptz,
  started_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, host)
);
CREATE TABLE huddle_placements (
  team text NOT NULL,
  id text NOT NULL,
  host text NOT NULL,
  name text NOT NULL,
  spec jsonb NOT NULL,
  state text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, id)
);
CREATE INDEX huddle_placements_host ON huddle_placements (team, host, state);
CREATE TABLE huddle_approvals (
  team text NOT NULL,
  id text NOT NULL,
  host text NOT NULL,
  request jsonb NOT NULL,
  state text NOT NULL,
  decision text,
  decided_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, id)
);
CREATE TABLE huddle_ops (
  team text NOT NULL,
  token text NOT NULL,
  result jsonb,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, token)
);
`,
  },
  {
    version: 2,
    name: 'when a team was archived (retention of archived teams)',
    sql: `
ALTER TABLE huddle_teams ADD COLUMN archived_at timestamptz;
`,
  },
  {
    version: 3,
    name: 'the transaction that wrote each event (a follower reads a host whose writes commit concurrently)',
    // Rows written before have none (NULL): a follower only reads rows written after it started.
    sql: `
ALTER TABLE huddle_events ADD COLUMN xid xid8;
ALTER TABLE huddle_events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX huddle_events_host_xid ON huddle_events (team, host, xid, seq);
`,
  },
  {
    version: 4,
    name: 'two indexes fewer to keep on every write (an event row, a task update)',
    // Every event row paid for huddle_events_host, which no query uses since version 3 (a host's
    // rows are read through huddle_events_host_xid). Every task update that is not HOT added an
    // entry to the blocked_by index, nearly always for an empty list no search can match: the
    // index now holds only the tasks still waiting for something (searches say so: pg-board-sql.ts).
    sql: `
DROP INDEX IF EXISTS huddle_events_host;
DROP INDEX IF EXISTS huddle_tasks_blocked_by;
CREATE INDEX huddle_tasks_blocked_by ON huddle_tasks USING gin (blocked_by) WITH (fastupdate = off) WHERE blocked_by <> '{}';
`,
  },
];

/** Any number: all huddle processes on a database agree on it (it says "huddle migrations"). */
const MIGRATION_LOCK = 0x68756464; // 'hudd'

/**
 * Applies the migrations this database lacks, each in its own transaction under the advisory
 * lock. A database already current is only read (to_regclass and the versions applied): a role
 * with data grants alone, no CREATE on the schema, connects to a database its owner migrated.
 */
export async function migrate(client: pg.ClientBase): Promise<number[]> {
  const missing = await missingMigrations(client);
  const applied: number[] = [];
  for (const migration of missing) {
    await client.query('BEGIN');
    try {
      // A second process starting at once waits here for the first to finish, however long that
      // takes: the connection's lock and statement timeouts are for the team's work, not this.
      await client.query('SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS huddle_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query('SELECT 1 FROM huddle_migrations WHERE version = $1', [migration.version]);
      if (rows.length === 0) {
        await client.query(migration.sql);
        await client.query('INSERT INTO huddle_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        applied.push(migration.version);
      }
      await client.query('COMMIT');
    } catch (error) {
      // The transaction's own error is what the caller hears; a ROLLBACK that fails dies with its connection.
      await client.query('ROLLBACK').catch(() => undefined);
      throw await explainDenied(error, client, missing.length < MIGRATIONS.length ? 'upgrade' : 'create');
    }
  }
  return applied;
}

/** True when every migration is applied: reads only, so any role with data grants may ask. */
export async function isCurrent(client: pg.ClientBase): Promise<boolean> {
  return (await missingMigrations(client)).length === 0;
}

/** The migrations not recorded as applied (all of them on a database huddle never set up). */
async function missingMigrations(client: pg.ClientBase): Promise<Migration[]> {
  try {
    return await readMissing(client);
  } catch (error) {
    throw await explainDenied(error, client, 'read');
  }
}

async function readMissing(client: pg.ClientBase): Promise<Migration[]> {
  const { rows: present } = await client.query<{ table: string | null }>(`SELECT to_regclass('huddle_migrations')::text AS table`);
  if (!present[0]?.table) return MIGRATIONS;
  const { rows } = await client.query<{ version: number }>('SELECT version FROM huddle_migrations');
  const done = new Set(rows.map((row) => row.version));
  return MIGRATIONS.filter((migration) => !done.has(migration.version));
}

/** The database refused for lack of privileges (42501): what to grant, or who should run huddle first, in one line. */
export class MigrationPermissionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationPermissionError';
  }
}

async function explainDenied(error: unknown, client: pg.ClientBase, doing: 'read' | 'create' | 'upgrade'): Promise<unknown> {
  if ((error as { code?: string } | undefined)?.code !== '42501') return error;
  // Who we are only adds to the message; the refusal itself is what the person hears.
  const who = await client
    .query<{ user: string; schema: string | null }>('SELECT current_user AS user, current_schema() AS schema')
    .then(({ rows }) => rows[0])
    .catch(() => undefined);
  const user = who?.user ?? 'this user';
  const schema = who?.schema ?? 'public';
  if (doing === 'upgrade') {
    // Altering a table (an index dropped, a column added) is its owner's right alone: CREATE on the schema is not enough.
    return new MigrationPermissionError(
      `this version of huddle changes its tables on this database and user ${user} may not (${(error as Error).message}): ` +
        `have the tables' owner run this version of huddle on it once`,
    );
  }
  if (doing === 'create') {
    return new MigrationPermissionError(
      `huddle's tables are not set up on this database and user ${user} may not create them (${(error as Error).message}): ` +
        `have the database's owner run huddle on it once, or GRANT CREATE ON SCHEMA ${schema} TO ${user}`,
    );
  }
  return new MigrationPermissionError(
    `user ${user} may not read huddle's tables (${(error as Error).message}): ` +
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${user}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${user}`,
  );
}
