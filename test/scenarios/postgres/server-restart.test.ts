// The team's PostgreSQL server restarts (an administrator's fast shutdown, or a managed server's
// failover) under a team: an idle worker, an idle headless lead whose teammates all run on the
// worker, and then the team at work. Every process carries on (none ends on an empty event loop),
// says on stderr while the server is away, and the team finishes: every task done once, every
// report delivered once, exit 0. A lead also rides out an outage longer than its lease. The server is
// this test's own (it is restarted), never the shared one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { mintPersonKey } from '../../../src/session/person-key.js';
import { type FakeApi, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl, startOwnServer } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH, REPO_ROOT, runCli } from '../../helpers/run-cli.js';
import { makeCheckouts, readTeam, scenarioEnv, scriptTeam, startWorker, type WorkerProcess } from './team-scenario.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'test-postgres.sh');
const TASKS = 6;
const TEAMMATES = ['ada', 'bo'];

/** Resolves once `condition` holds (looked at every 50 ms), or fails saying `what` after `ms`. */
async function until(condition: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describePostgres('a team on PostgreSQL through a restart of its server', () => {
  let server: { url: string; dir: string } | undefined;
  let fake: FakeApi;
  let root: string;
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-restart-'));
    server = startOwnServer();
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await fake.close();
    if (server) execFileSync('bash', [SCRIPT, 'stop', server.dir]);
    rmSync(root, { recursive: true, force: true });
  });

  it('an idle worker, an idle lead and a working team carry on: each task done once, each report delivered once', { timeout: 240_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1']);
    const { url, team } = teamUrl(server!.url, 'restart');
    scriptTeam(fake, { tasks: TASKS, teammates: TEAMMATES, delayMs: 150 });
    const env = scenarioEnv(fake.url);
    worker = startWorker({ cwd: checkouts.w1!, team: url, slots: TEAMMATES.length, env });
    await worker.ready;

    // (b) An idle worker: the server goes away for a while (it says so), then comes back (it says so too).
    execFileSync('bash', [SCRIPT, 'down', server!.dir]);
    await worker.waitFor(/database at \S+ is unreachable/);
    execFileSync('bash', [SCRIPT, 'up', server!.dir]);
    await worker.waitFor(/database at \S+ is reachable again/);
    expect(worker.child.exitCode, worker.stderr()).toBe(null);

    // (a) The lead, idle once it has handed the work out (its teammates all run on the worker).
    const requests = (agent: (name: string | undefined) => boolean) => fake.requests.filter((r) => agent(r.agent)).length;
    const lead = runCli(['-p', 'Split the work and get it done.', '--json', '--team', url, '--cwd', checkouts.lead!], { env, timeoutMs: 200_000 });
    await until(() => requests((a) => a === 'lead') >= 2 && requests((a) => TEAMMATES.includes(a ?? '')) >= 1, 'the lead to hand the work out');
    execFileSync('bash', [SCRIPT, 'restart', server!.dir]);

    // (c) The team at work: restarted once reports come back.
    await until(
      () => fake.requests.some((r) => r.agent === 'lead' && JSON.stringify(r.body?.messages ?? []).includes('report #')),
      'a first report to reach the lead',
      120_000,
    );
    execFileSync('bash', [SCRIPT, 'restart', server!.dir]);

    const done = await lead;
    expect(done.code, done.stderr).toBe(0);
    const record = await readTeam(server!.url, team);
    expect(record.tasks).toHaveLength(TASKS);
    for (const task of record.tasks) expect(task.status, `task #${task.id}`).toBe('completed');
    expect([...record.completions.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    for (const [id, count] of record.completions) expect(count, `completions of #${id}`).toBe(1);
    const reports = record.leadInbox.filter((m) => m.content.startsWith('report #'));
    expect(reports.map((m) => Number(/#(\d+)/.exec(m.content)![1])).sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    for (const report of reports) expect(record.deliveries.get(report.id), report.content).toBe(1);
    // The teammates ran on the worker, not in the lead's process.
    for (const name of TEAMMATES) expect(record.members.find((m) => m.name === name)?.host, name).toBeTruthy();

    expect(worker.child.exitCode, worker.stderr()).toBe(null);
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.stderr()).toBe(0);
  });

  it('a lead rides out an outage longer than its lease: its team finishes, each task done once, each report delivered once', { timeout: 180_000 }, async () => {
    const LEASE_MS = 1_500;
    // Checkouts of their own: the first test's origin is in root.
    const [checkout] = Object.values(makeCheckouts(mkdtempSync(path.join(root, 'long-outage-')), ['lead']));
    const { url, team } = teamUrl(server!.url, 'long-outage');
    scriptTeam(fake, { tasks: TASKS, teammates: TEAMMATES, delayMs: 300 });
    const env = { ...scenarioEnv(fake.url), HUDDLE_LEASE_MS: String(LEASE_MS) };
    const earlier = fake.requests.length; // the first test's requests are not this run's
    const lead = runCli(['-p', 'Split the work and get it done.', '--json', '--team', url, '--cwd', checkout!], { env, timeoutMs: 150_000 });
    await until(
      () => fake.requests.slice(earlier).some((r) => r.agent === 'lead' && JSON.stringify(r.body?.messages ?? []).includes('report #')),
      'a first report to reach the lead',
      120_000,
    );
    execFileSync('bash', [SCRIPT, 'down', server!.dir]);
    // The outage is the thing under test: it must outlast the lead's lease (twice over), whatever the machine's pace.
    const downAt = Date.now();
    await until(() => Date.now() - downAt > 2 * LEASE_MS, "the lead's lease to lapse");
    execFileSync('bash', [SCRIPT, 'up', server!.dir]);

    const done = await lead;
    expect(done.code, done.stderr).toBe(0);
    // The outage happened while the lead held the team (--json puts its warnings on stdout).
    expect(done.stdout).toMatch(/"database":"unreachable"/);
    expect(done.stdout).toMatch(/"database":"reachable"/);
    const record = await readTeam(server!.url, team);
    expect(record.tasks.map((task) => task.status)).toEqual(Array.from({ length: TASKS }, () => 'completed'));
    for (const [id, count] of record.completions) expect(count, `completions of #${id}`).toBe(1);
    expect(record.completions.size).toBe(TASKS);
    const reports = record.leadInbox.filter((m) => m.content.startsWith('report #'));
    expect(reports).toHaveLength(TASKS);
    for (const report of reports) expect(record.deliveries.get(report.id), report.content).toBe(1);
  });

  it('huddle mcp says the database is away, then serves the team again', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(path.join(root, 'mcp-'));
    const { url } = teamUrl(server!.url, 'restart-mcp');
    const lead = await postgresBackend(url, new Workspace(dir)).open({ hub: new EventHub(), secrets: [] });
    try {
      await lead.roster.add({ name: 'alice', role: 'coder', status: 'idle' });
      mintPersonKey(path.join(dir, '.team'));
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI_PATH, 'mcp', '--as', 'alice', '--cwd', dir, '--team', url],
        env: baseEnv(),
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const alice = new Client({ name: 'test', version: '0' });
      await alice.connect(transport);
      try {
        const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Array<{ text: string }>).map((b) => b.text).join('');
        expect(text(await alice.callTool({ name: 'task_create', arguments: { subject: 'before' } }))).toContain('created task #1');
        execFileSync('bash', [SCRIPT, 'down', server!.dir]);
        await until(() => /huddle mcp: the team's database at \S+ is unreachable/.test(stderr), 'huddle mcp to say the database is away');
        execFileSync('bash', [SCRIPT, 'up', server!.dir]);
        expect(text(await alice.callTool({ name: 'task_create', arguments: { subject: 'after' } }))).toContain('created task #2');
        await until(() => /is reachable again/.test(stderr), 'huddle mcp to say the database is back');
      } finally {
        await alice.close();
      }
      expect((await lead.board.list()).map((t) => t.subject)).toEqual(['before', 'after']);
    } finally {
      await lead.close();
    }
  });
});
