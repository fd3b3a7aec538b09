// A database password the team URL does not carry is a secret too: PGPASSWORD alone, or the line
// of ~/.pgpass (PGPASSFILE) that matches the team's server. The agent's environment holds neither
// (hidden), but the password may sit in a file of the workspace; the agent cats it, and the lead
// repeats it in its answer. Redacted in the tool result, in huddle_events, in huddle_run_records,
// in the run record file, in stdout and stderr. The test server trusts every password.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describePostgres('database passwords the URL does not carry', (base) => {
  let fake: FakeApi;
  beforeEach(async () => {
    fake = await startFakeApi();
  });
  afterEach(async () => {
    await fake.close();
  });

  const cases: Array<{ name: string; password: string; env: (home: string, url: URL) => Record<string, string> }> = [
    { name: 'PGPASSWORD', password: 'pgpw-Env-7731-hidden', env: () => ({ PGPASSWORD: 'pgpw-Env-7731-hidden' }) },
    {
      name: '~/.pgpass (the line that matches the team)',
      password: 'pgpw-File-4410-hidden',
      env: (home, url) => {
        writeFileSync(
          path.join(home, '.pgpass'),
          `# other servers\nelsewhere:5432:*:*:not-this-one-123\n${url.hostname}:${url.port}:${url.pathname.slice(1)}:${url.username}:pgpw-File-4410-hidden\n`,
          { mode: 0o600 },
        );
        return {};
      },
    },
    {
      name: 'PGPASSFILE',
      password: 'pgpw-Pass\\:file-hidden',
      env: (home, url) => {
        const file = path.join(home, 'team.pgpass');
        writeFileSync(file, `*:${url.port}:*:${url.username}:pgpw-Pass\\:file-hidden\n`, { mode: 0o600 });
        return { PGPASSFILE: file };
      },
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.name}: redacted in the tool result, the stored events and run records, and the output`, { timeout: 120_000 }, async () => {
      const ws: Workspace = makeWorkspace('huddle-pg-reg-');
      const home: Workspace = makeWorkspace('huddle-pg-reg-home-');
      try {
        // What libpq reads: an escaped colon is one character of the password.
        const password = testCase.password.replace(/\\:/g, ':');
        const { url, team } = teamUrl(base, 'regsecret');
        const extra = testCase.env(home.dir, new URL(base));
        writeFileSync(path.join(ws.dir, 'deploy.env'), `DB_PASSWORD=${password}\n`);
        fake.respond((request) => {
          if (request.agent !== 'lead') return undefined;
          if (request.body.messages.length === 1) return reply(toolUse('bash', { command: 'cat deploy.env; echo "pw=[$PGPASSWORD]"' }));
          return replyText(`The password is ${password}.`);
        });
        const result = await runCli(['-p', 'find the database password', '--json', '--cwd', ws.dir], {
          env: { ANTHROPIC_BASE_URL: fake.url, HOME: home.dir, HUDDLE_TEAM_URL: url, ...extra },
          cwd: ws.dir,
          timeoutMs: 90_000,
        });
        expect(result.code, result.stderr).toBe(0);
        const results = fake.requests
          .filter((r) => r.agent === 'lead')
          .flatMap((r) => (r.body.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
          .filter((block: { type: string }) => block.type === 'tool_result')
          .map((block) => JSON.stringify(block));
        // Not vacuous: the command ran, the variable was not there, the file's line was.
        expect(
          results.some((r) => r.includes('DB_PASSWORD=[redacted]') && r.includes('pw=[]')),
          results.join('\n'),
        ).toBe(true);
        for (const r of results) expect(r).not.toContain(password);
        for (const text of [result.stdout, result.stderr]) expect(text).not.toContain(password);
        expect(result.stdout).toContain('The password is [redacted].');
        for (const file of filesUnder(path.join(ws.dir, '.team'))) expect(readFileSync(file, 'utf8'), file).not.toContain(password);
        const db = new pg.Client({ connectionString: base });
        await db.connect();
        try {
          const events = await db.query<{ body: string }>('SELECT body::text AS body FROM huddle_events WHERE team = $1', [team]);
          expect(events.rows.some((row) => row.body.includes('DB_PASSWORD=[redacted]'))).toBe(true);
          // The model's own answer is stored as it was said, redacted.
          for (const row of events.rows) expect(row.body).not.toContain(password);
          const records = await db.query<{ body: string }>('SELECT body::text AS body FROM huddle_run_records WHERE team = $1', [team]);
          expect(records.rows.length).toBe(1);
          expect(records.rows[0]!.body).not.toContain(password);
        } finally {
          await db.end();
        }
      } finally {
        ws.cleanup();
        home.cleanup();
      }
    });
  }
});
