// A workflow on PostgreSQL with its agents on a `huddle worker` (docs/workflows.md#on-postgresql-workers): the runner
// (`huddle workflow run FILE --team URL`, in the lead's checkout) places every step's agent on the worker, which runs it
// in its own process and checkout; the runner learns of each completion from the shared board. Three phases: a fan-out
// capped at 3, a reduce step fed every result, a gate the person answers with `huddle approve`. The first run is killed
// (SIGKILL) in the middle of the fan-out: the worker's agents of that run go on and finish their steps; the second run
// waits for them rather than starting them again, frees the slots of those already done, and runs the rest.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH } from '../../helpers/run-cli.js';
import { makeCheckouts, scenarioEnv, startWorker, type WorkerProcess } from '../postgres/team-scenario.js';

const STEPS = 8;
const CAP = 3;

const WORKFLOW = `
export default {
  name: 'sweep',
  phases: [
    {
      name: 'read',
      concurrency: ${CAP},
      steps: Array.from({ length: ${STEPS} }, (_, i) => ({ name: \`part-\${i + 1}\`, prompt: \`Read part \${i + 1}.\` })),
    },
    {
      name: 'reduce',
      steps: (previous) => [{ name: 'summary', role: 'writer', prompt: \`Combine:\\n\${previous.map((r) => \`\${r.step}: \${r.result}\`).join('\\n')}\` }],
    },
    { name: 'ship', gate: { person: 'Publish the summary?' } },
  ],
};
`;

interface BoardTask {
  id: number;
  status: string;
  owner: string | null;
  result?: string;
  workflow?: { name: string; phase: string; step: string };
}

let fake: FakeApi;
let root: string;
const children: ChildProcess[] = [];
const workers: WorkerProcess[] = [];

beforeEach(async () => {
  fake = await startFakeApi();
  root = mkdtempSync(path.join(tmpdir(), 'huddle-workflow-worker-'));
});
afterEach(async () => {
  for (const child of [...children.splice(0), ...workers.splice(0).map((w) => w.child)])
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

describePostgres('a workflow with its agents on a PostgreSQL worker', (base) => {
  it('places every step on the worker; killed and run again, no step runs twice', { timeout: 240_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1']);
    const { url, team } = teamUrl(base, 'wfworker');
    writeFileSync(path.join(checkouts.lead!, 'sweep.workflow.mjs'), WORKFLOW);
    // The default lease: a worker on a loaded machine keeps it. The killed run holds nothing (its pid is dead here).
    const env = scenarioEnv(fake.url);
    // Each step's agent completes the task its prompt names with a result saying which step it was, then ends its turn.
    // The second wave of the fan-out (parts 4 to 6) is held until the second run is under way: the first run is killed
    // while the worker still runs them, and the second run must wait for them rather than start them again.
    const HELD = ['read-part-4', 'read-part-5', 'read-part-6'];
    const held = new Set<string>();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const firstAsks = new Map<string, number>();
    fake.respond(async (request) => {
      const agent = request.agent ?? '';
      if (!/^(read|reduce)-/.test(agent)) return undefined;
      const history = JSON.stringify(request.body?.messages ?? []);
      if (history.includes('tool_result')) return replyText('Done.');
      firstAsks.set(agent, (firstAsks.get(agent) ?? 0) + 1);
      // An agent started twice would never be waited for: it is let go at once (and the test fails below).
      if (firstAsks.get(agent)! > 1) release();
      if (HELD.includes(agent)) {
        held.add(agent);
        await released;
      }
      const task = /Task #(\d+) is yours/.exec(history)?.[1];
      return reply(toolUse('task_update', { task_id: Number(task), status: 'completed', result: `${agent} read` }));
    });

    const worker = startWorker({ cwd: checkouts.w1!, team: url, slots: CAP, env });
    workers.push(worker);
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      const workerHost = await worker.ready;
      const board = async () =>
        (await client.query<{ data: BoardTask }>('SELECT data FROM huddle_tasks WHERE team = $1', [team])).rows
          .map((row) => row.data)
          .filter((task) => task.workflow?.name === 'sweep');
      const run = () => {
        const child = spawn(process.execPath, [CLI_PATH, 'workflow', 'run', 'sweep.workflow.mjs', '--team', url], {
          cwd: checkouts.lead!,
          env: { ...baseEnv(), ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        let stdout = '';
        let stderr = '';
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
          child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
        );
        return { child, done };
      };

      // Run 1: killed once 3 of the 8 are done and the next 3 are at work on the worker; never more than 3 under way.
      const first = run();
      let mostAtOnce = 0;
      for (;;) {
        const read = (await board()).filter((task) => task.workflow?.phase === 'read');
        mostAtOnce = Math.max(mostAtOnce, read.filter((task) => task.status === 'in_progress').length);
        if (read.filter((task) => task.status === 'completed').length >= 3 && held.size === HELD.length) {
          first.child.kill('SIGKILL');
          break;
        }
        if (first.child.exitCode !== null) throw new Error(`the first run ended on its own: ${(await first.done).stderr}`);
        await sleep(20);
      }
      expect((await first.done).signal).toBe('SIGKILL');
      const completedAtKill = (await board()).filter((task) => task.workflow?.phase === 'read' && task.status === 'completed');
      expect(completedAtKill.map((task) => task.owner).sort()).toEqual(['read-part-1', 'read-part-2', 'read-part-3']);
      const requestsBefore = fake.requests.length;

      // Run 2: finds the held three still at work on the worker and waits for them (then they are let go); goes on, and
      // stops at the gate until the person approves from a shell in the lead's checkout.
      const second = run();
      let waitingFor = 0;
      second.child.stderr!.on('data', (chunk: string) => {
        waitingFor += chunk.split('\n').filter((line) => line.includes('is still at work on a worker; waiting for it')).length;
        if (waitingFor === HELD.length) release();
      });
      for (;;) {
        const read = (await board()).filter((task) => task.workflow?.phase === 'read');
        mostAtOnce = Math.max(mostAtOnce, read.filter((task) => task.status === 'in_progress').length);
        const approve = spawnSync(process.execPath, [CLI_PATH, 'approve'], { cwd: checkouts.lead!, env: baseEnv(), encoding: 'utf8' });
        if (approve.status === 0) {
          expect(approve.stdout).toContain('approved: Publish the summary?');
          break;
        }
        if (second.child.exitCode !== null) throw new Error(`the second run ended before its gate: ${(await second.done).stderr}`);
        await sleep(100);
      }
      const finished = await second.done;
      expect(finished.code, finished.stderr).toBe(0);
      expect(mostAtOnce).toBeLessThanOrEqual(CAP);
      expect(finished.stderr).toMatch(/runs on worker /);
      for (const agent of HELD)
        expect(finished.stderr).toContain(`${agent.replace('read-', 'read/')}: its agent from an earlier run is still at work on a worker`);

      // Every step completed once, by its own agent, with its result; the reduce step got all of them.
      const tasks = await board();
      const steps = tasks.filter((task) => task.workflow?.phase !== 'ship');
      expect(steps).toHaveLength(STEPS + 1);
      for (const task of steps) {
        expect(task.status).toBe('completed');
        expect(task.owner).toBe(`${task.workflow!.phase}-${task.workflow!.step}`);
        expect(task.result).toBe(`${task.owner} read`);
      }
      const completions = await client.query<{ id: string; n: string }>(
        `SELECT body->'task'->>'id' AS id, count(*) AS n FROM huddle_events WHERE team = $1 AND body->>'type' = 'task' AND body->>'action' = 'completed' GROUP BY 1`,
        [team],
      );
      for (const task of steps) expect(Number(completions.rows.find((row) => Number(row.id) === task.id)?.n), `completions of #${task.id}`).toBe(1);
      const reduce = fake.requests.find((r) => r.agent === 'reduce-summary')!;
      for (let i = 1; i <= STEPS; i++) expect(JSON.stringify(reduce.body.messages)).toContain(`part-${i}: read-part-${i} read`);
      expect(tasks.find((task) => task.workflow?.phase === 'ship')).toMatchObject({ status: 'completed', result: 'approved' });

      // Each step's agent was started once, on the worker: one placement each, one first request each, and what it
      // did (its prompt, model calls, tool calls) was recorded by the worker's process.
      const agents = steps.map((task) => task.owner!);
      const placements = await client.query<{ name: string; host: string }>('SELECT name, host FROM huddle_placements WHERE team = $1', [team]);
      for (const agent of agents) {
        const theirs = placements.rows.filter((row) => row.name === agent);
        expect(theirs, agent).toHaveLength(1);
        expect(theirs[0]!.host, agent).toBe(workerHost);
        const firstRequests = fake.requests.filter((r) => r.agent === agent && !JSON.stringify(r.body?.messages ?? []).includes('tool_result'));
        expect(firstRequests, agent).toHaveLength(1);
      }
      const work = await client.query<{ agent: string; host: string }>(
        `SELECT DISTINCT agent, host FROM huddle_events WHERE team = $1 AND agent = ANY($2) AND body->>'type' IN ('prompt', 'text', 'tool_call', 'usage')`,
        [team, agents],
      );
      expect(new Set(work.rows.map((row) => row.agent))).toEqual(new Set(agents));
      for (const row of work.rows) expect(row.host, row.agent).toBe(workerHost);
      // No step done before the kill was worked on again (its agent's last word, after its completion, may come later).
      const after = fake.requests.slice(requestsBefore).filter((r) => !JSON.stringify(r.body?.messages ?? []).includes('tool_result'));
      for (const task of completedAtKill) expect(after.filter((r) => r.agent === task.owner).length, task.owner!).toBe(0);
      // The finished workflow leaves the worker's slots free: every placement ended.
      const open = await client.query(`SELECT 1 FROM huddle_placements WHERE team = $1 AND state IN ('reserved', 'pending', 'running')`, [team]);
      expect(open.rows).toEqual([]);
      expect(fake.unscripted).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
