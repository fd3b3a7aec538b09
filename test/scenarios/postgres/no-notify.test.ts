// NOTIFY is a hint, polling the floor: a team whose processes never LISTEN (as behind a
// transaction-mode pooler, `postgres.pooler: "transaction"`: no LISTEN, no prepared statements,
// no startup parameters) still finishes, each process finding the others' changes by re-reading
// every `postgres.pollSeconds`. A lead and a worker, every task done once, every report delivered once.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { runCli } from '../../helpers/run-cli.js';
import { makeCheckouts, readTeam, scenarioEnv, scriptTeam, startWorker, type WorkerProcess } from './team-scenario.js';

const TASKS = 4;
const TEAMMATES = ['ada', 'bo'];

async function admin(base: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult<{ n: number }>> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await client.query<{ n: number }>(sql, params);
  } finally {
    await client.end();
  }
}

describePostgres('a team on PostgreSQL without LISTEN/NOTIFY', (base) => {
  let fake: FakeApi;
  let root: string;
  let worker: WorkerProcess | undefined;
  let database: string | undefined;
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-nonotify-'));
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    if (database) await admin(base, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('finishes by polling alone: each task done once, each report delivered once, nobody listening', { timeout: 240_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1']);
    for (const dir of Object.values(checkouts)) {
      mkdirSync(path.join(dir, '.team'), { recursive: true });
      writeFileSync(path.join(dir, '.team', 'settings.json'), JSON.stringify({ postgres: { pooler: 'transaction', pollSeconds: 1 } }));
    }
    // A database of its own: every connection to it is this team's.
    database = `huddle_nonotify_${Date.now().toString(36)}`;
    await admin(base, `CREATE DATABASE ${database}`);
    const own = new URL(base);
    own.pathname = `/${database}`;
    const { url, team } = teamUrl(own.href, 'nonotify');
    scriptTeam(fake, { tasks: TASKS, teammates: TEAMMATES });
    const env = scenarioEnv(fake.url);
    worker = startWorker({ cwd: checkouts.w1!, team: url, slots: TEAMMATES.length, env });
    await worker.ready;

    // Nobody listens: the worker holds no listening connection (with LISTEN it holds one from the start).
    const listening = await admin(base, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'huddle-listen'`, [
      database,
    ]);
    expect(listening.rows[0]!.n).toBe(0);
    const sessions = await admin(base, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'huddle%'`, [database]);
    expect(sessions.rows[0]!.n).toBeGreaterThan(0);

    const lead = await runCli(['-p', 'Split the work and get it done.', '--json', '--team', url, '--cwd', checkouts.lead!], { env, timeoutMs: 200_000 });
    expect(lead.code, lead.stderr).toBe(0);
    const record = await readTeam(own.href, team);
    expect(record.tasks).toHaveLength(TASKS);
    for (const task of record.tasks) expect(task.status, `task #${task.id}`).toBe('completed');
    for (const [id, count] of record.completions) expect(count, `completions of #${id}`).toBe(1);
    expect(record.completions.size).toBe(TASKS);
    const reports = record.leadInbox.filter((m) => m.content.startsWith('report #'));
    expect(reports.map((m) => Number(/#(\d+)/.exec(m.content)![1])).sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    for (const report of reports) expect(record.deliveries.get(report.id), report.content).toBe(1);
    for (const name of TEAMMATES) expect(record.members.find((m) => m.name === name)?.host, name).toBeTruthy();

    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.stderr()).toBe(0);
  });
});
