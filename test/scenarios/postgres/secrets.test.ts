// The team URL's password is a secret like the API key: a run on PostgreSQL whose lead (scripted
// through the fake API) goes looking for it — the environment (HUDDLE_TEAM_URL, PGPASSWORD),
// ~/.pgpass, a command that prints it — finds nothing, and no output, file or stored event holds it.
// The test server trusts every password, so the one in the URL is accepted as any would be.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

const PASSWORD = 'pw-Zq7-team-secret-9081';
const QUERY_PASSWORD = 'pw-Kx4-query-secret-5522';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describePostgres("the team URL's password", (base) => {
  let fake: FakeApi;
  let ws: Workspace;
  let home: Workspace;
  beforeAll(async () => {
    fake = await startFakeApi();
    ws = makeWorkspace('huddle-pg-secret-');
    home = makeWorkspace('huddle-pg-home-');
  });
  afterAll(async () => {
    ws.cleanup();
    home.cleanup();
    await fake.close();
  });

  it("never reaches an agent's commands, the model, the output, the files or the stored events", { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(base, 'secret');
    const withPassword = new URL(url);
    withPassword.password = PASSWORD;
    writeFileSync(path.join(home.dir, '.pgpass'), `*:*:*:*:${PASSWORD}\n`, { mode: 0o600 });
    mkdirSync(path.join(ws.dir, 'src'));
    fake.respond((request) => {
      if (request.agent !== 'lead') return undefined;
      const turns = request.body.messages.length;
      if (turns === 1) {
        return reply(
          toolUse('bash', {
            command: 'echo "url=[$HUDDLE_TEAM_URL] pw=[$PGPASSWORD] file=[$PGPASSFILE]"; env | grep -ci postgres; cat ~/.pgpass 2>&1 | head -1',
          }),
          // As if the model had learnt it somewhere: what the command prints back is redacted.
          toolUse('bash', { command: `echo "it is ${PASSWORD} and ${QUERY_PASSWORD}"` }),
        );
      }
      return replyText('Looked everywhere.');
    });
    const env = {
      ANTHROPIC_BASE_URL: fake.url,
      HOME: home.dir,
      HUDDLE_TEAM_URL: `${withPassword.href}&sslpassword=${QUERY_PASSWORD}`,
      PGPASSWORD: PASSWORD,
      PGPASSFILE: path.join(home.dir, '.pgpass'),
    };
    const result = await runCli(['-p', 'find the database password', '--json', '--cwd', ws.dir], { env, cwd: ws.dir, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(0);

    // Not vacuous: both commands ran and their results went back to the model.
    const results = fake.requests
      .filter((r) => r.agent === 'lead')
      .flatMap((r) => (r.body.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
      .filter((block: { type: string }) => block.type === 'tool_result')
      .map((block) => JSON.stringify(block));
    expect(results.some((r) => r.includes('url=[] pw=[] file=[]'))).toBe(true);
    expect(results.some((r) => r.includes('it is [redacted] and [redacted]'))).toBe(true);

    for (const body of fake.requests.map((r) => JSON.stringify(r.body.messages))) {
      // The model wrote the password into its own command; only huddle's side must not show it.
      const fromHuddle = body.replaceAll(`echo \\"it is ${PASSWORD} and ${QUERY_PASSWORD}\\"`, '');
      expect(fromHuddle).not.toContain(PASSWORD);
      expect(fromHuddle).not.toContain(QUERY_PASSWORD);
    }
    for (const text of [result.stdout, result.stderr]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(QUERY_PASSWORD);
    }
    for (const file of filesUnder(path.join(ws.dir, '.team'))) {
      const content = readFileSync(file, 'utf8');
      expect(content, file).not.toContain(PASSWORD);
      expect(content, file).not.toContain(QUERY_PASSWORD);
    }
    const db = new pg.Client({ connectionString: base });
    await db.connect();
    try {
      const { rows } = await db.query<{ body: string }>('SELECT body::text AS body FROM huddle_events WHERE team = $1', [team]);
      expect(rows.length).toBeGreaterThan(0);
      const commands = rows.filter((row) => !row.body.includes('"type": "tool_call"'));
      for (const row of commands) {
        expect(row.body).not.toContain(PASSWORD);
        expect(row.body).not.toContain(QUERY_PASSWORD);
      }
    } finally {
      await db.end();
    }
  });
});
