// Three "hosts" on one machine, each its own process in its own checkout: the lead (`huddle -p
// --team URL`) and two workers (`huddle worker --slots 4`). The lead's eight spawns land on the
// workers, four each; the teammates drain two dozen tasks through the shared board and report each
// to the lead. Every task is completed exactly once and every report reaches the lead's model
// exactly once; the roster says which host runs whom; when the lead finishes, the workers' teammates
// are stopped; a worker stopped on purpose leaves cleanly.
import { rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { runCli } from '../../helpers/run-cli.js';
import { makeCheckouts, readTeam, scenarioEnv, scriptTeam, startWorker, type WorkerProcess } from './team-scenario.js';

const TASKS = 24;
const TEAMMATES = ['ada', 'bo', 'cy', 'di', 'ed', 'flo', 'gus', 'hal'];

describePostgres('a team on PostgreSQL across three processes', (base) => {
  let fake: FakeApi;
  let root: string;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-hosts-'));
  });
  afterAll(async () => {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(`8 teammates on two workers drain ${TASKS} tasks: each done once, every report delivered once`, { timeout: 240_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1', 'w2']);
    const { url, team } = teamUrl(base, 'hosts');
    scriptTeam(fake, { tasks: TASKS, teammates: TEAMMATES });
    const env = scenarioEnv(fake.url);
    for (const name of ['w1', 'w2']) workers.push(startWorker({ cwd: checkouts[name]!, team: url, slots: 4, env }));
    const hosts = await Promise.all(workers.map((w) => w.ready));

    const lead = await runCli(['-p', 'Split the work and get it done.', '--json', '--team', url, '--cwd', checkouts.lead!], { env, timeoutMs: 200_000 });
    expect(lead.code, lead.stderr).toBe(0);
    // The lead's process shows the remote agents as they work (the console's panes come from these
    // events): each teammate's turns, tool calls and status, marked with the host that ran them.
    const events = lead.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { agent: string; type: string; host?: string; name?: string });
    for (const name of TEAMMATES) {
      const theirs = events.filter((event) => event.agent === name);
      expect(
        theirs.some((event) => event.type === 'text'),
        name,
      ).toBe(true);
      // (Their first `status` comes from the lead's own roster write when it placed them.)
      const work = theirs.filter((event) => ['prompt', 'text', 'tool_call', 'tool_result', 'usage'].includes(event.type));
      expect(
        work.every((event) => typeof event.host === 'string' && event.host !== ''),
        name,
      ).toBe(true);
    }
    expect(events.filter((event) => event.type === 'tool_call' && event.name === 'task_update' && TEAMMATES.includes(event.agent))).toHaveLength(TASKS);

    const record = await readTeam(base, team);
    // Every task completed, once.
    expect(record.tasks).toHaveLength(TASKS);
    for (const task of record.tasks) expect(task.status, `task #${task.id}`).toBe('completed');
    expect([...record.completions.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    for (const [id, count] of record.completions) expect(count, `completions of #${id}`).toBe(1);
    // Four teammates on each worker, none in the lead's process.
    const byHost = new Map<string, string[]>();
    for (const member of record.members.filter((m) => m.name !== 'lead')) byHost.set(member.host!, [...(byHost.get(member.host!) ?? []), member.name]);
    expect([...byHost.keys()].sort()).toEqual([...hosts].sort());
    for (const name of TEAMMATES)
      expect(
        events.some((event) => event.agent === name && event.host === record.members.find((m) => m.name === name)!.host),
        name,
      ).toBe(true);
    for (const names of byHost.values()) expect(names).toHaveLength(4);
    // Every report reached the lead, and its model saw each exactly once.
    const reports = record.leadInbox.filter((m) => m.content.startsWith('report #'));
    expect(reports.map((m) => Number(/#(\d+)/.exec(m.content)![1])).sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
    for (const report of reports) expect(record.deliveries.get(report.id), report.content).toBe(1);

    // The lead finished the team: the workers stop its teammates at once.
    await Promise.all(workers.map((w) => w.waitFor(/hal shutdown|ada shutdown|bo shutdown|cy shutdown|di shutdown|ed shutdown|flo shutdown|gus shutdown/)));
    // A worker stopped on purpose says so and exits 0.
    for (const worker of workers) worker.child.kill('SIGTERM');
    const codes = await Promise.all(workers.map((w) => w.exited));
    expect(codes, workers.map((w) => w.stderr()).join('\n---\n')).toEqual([0, 0]);
  });
});
