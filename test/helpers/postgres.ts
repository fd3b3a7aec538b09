// The PostgreSQL server the tests use: HUDDLE_TEST_PG_URL (CI starts a throwaway one in .ci/run;
// locally `eval "$(scripts/test-postgres.sh start)"` does the same). Without it the PostgreSQL
// tests skip locally, saying how to get one, and FAIL under CI=true.
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';

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
