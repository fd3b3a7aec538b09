// The PostgreSQL server the tests use: HUDDLE_TEST_PG_URL (CI starts a throwaway one in .ci/run;
// locally `eval "$(scripts/test-postgres.sh start)"` does the same). Without it the PostgreSQL
// tests skip locally, saying how to get one, and FAIL under CI=true.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { describe, it } from 'vitest';
import { REPO_ROOT } from './run-cli.js';

export const PG_URL = process.env.HUDDLE_TEST_PG_URL?.trim() || undefined;

export const HOW_TO_GET_ONE =
  'set HUDDLE_TEST_PG_URL to a PostgreSQL server the tests may write to; a throwaway one: eval "$(scripts/test-postgres.sh start)" ' +
  "(needs PostgreSQL's server binaries: apt-get install postgresql)";

/**
 * `describe` when a server is there; otherwise one test that fails under CI=true and a skipped
 * suite that says how to get a server.
 */
export function describePostgres(name: string, body: (url: string) => void): void {
  if (PG_URL) {
    describe(name, () => body(PG_URL));
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs a PostgreSQL server (HUDDLE_TEST_PG_URL)', () => {
        throw new Error(`no PostgreSQL server for the tests under CI=true: ${HOW_TO_GET_ONE}`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: ${HOW_TO_GET_ONE})`, () => body(''));
}

/** The team URL of a fresh team on `base` (a new name each time: teams share the database). */
export function teamUrl(base: string, prefix = 'test'): { url: string; team: string } {
  const team = `${prefix}-${randomUUID().slice(0, 8)}`;
  const url = new URL(base);
  url.searchParams.set('team', team);
  return { url: url.href, team };
}

/**
 * A database of the test's own on `base`'s server, for a test that locks a whole table (other test
 * files' teams share the server's database and would wait on it) or needs a table holding one team.
 */
export async function ownDatabase(base: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = `${prefix}_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  const url = new URL(base);
  url.pathname = `/${database}`;
  return {
    url: url.href,
    drop: async () => {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A throwaway server of the test's own (scripts/test-postgres.sh start), for tests that crash, restart or reconfigure it. */
export function startOwnServer(): { url: string; dir: string } {
  const exports = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'test-postgres.sh'), 'start'], { encoding: 'utf8' });
  const url = /HUDDLE_TEST_PG_URL=(\S+)/.exec(exports)?.[1];
  const dir = /HUDDLE_TEST_PG_DIR=(\S+)/.exec(exports)?.[1];
  if (!url || !dir) throw new Error(`scripts/test-postgres.sh start said: ${exports}`);
  return { url, dir };
}
