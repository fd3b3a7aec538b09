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
];

/** Any number: all huddle processes on a database agree on it (it says "huddle migrations"). */
const MIGRATION_LOCK = 0x68756464; // 'hudd'

/** Applies the migrations this database lacks, one transaction each, under the advisory lock. */
export async function migrate(client: pg.ClientBase): Promise<number[]> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS huddle_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM huddle_migrations');
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO huddle_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
