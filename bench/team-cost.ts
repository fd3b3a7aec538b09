// What a team's model input costs per task, billed under the Messages API's caching rules
// (test/helpers/prompt-cache.ts, as bench/caching.ts): an in-process team (Team.open, the real
// ModelClient) against the fake API (bench/team-cost-script.ts, served from a process of its own, as a
// real API is elsewhere), N tasks on the board, teammates that each take a task, write its file,
// complete it and report to the lead in four calls; the lead answers each wake in one.
// Measures billed input per task at 24, 96, 200 and 500 tasks (8 teammates), the lead's share at a
// realistic pace (every teammate call answered after 1.5–4.5 s; fewer tasks, so the run ends in a
// minute), a team of 4 against one teammate on the same 24 tasks, the 200-task run's wall time, and
// CPU per task at 96 and 500 tasks and their ratio (the team's process: huddle alone; plus the git and
// shell processes it started).
import { Team } from '../src/agents/lifecycle/team.js';
import { resolveConfig } from '../src/runtime/config.js';
import { EventHub } from '../src/runtime/events/events.js';
import { ModelClient, modelClientOptions } from '../src/runtime/model/model-client.js';
import { openFileStore } from '../src/runtime/store/file/file-store.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { execFileSync, fork } from 'node:child_process';
import path from 'node:path';
import type { RecordedRequest } from '../test/helpers/fake-api.js';
import { billedInput } from '../test/helpers/prompt-cache.js';
import { type BenchResult, BUNDLE_DIR, TEST_API_KEY, fileReplaceMicros, log, median, reapedChildrenCpuSeconds, result, spread, tempDir } from './lib.js';
import type { Pace } from './team-cost-script.js';

interface TeamCost {
  tasks: number;
  teammates: number;
  billed: number;
  leadBilled: number;
  leadCalls: number;
  reports: number;
  calls: number;
  cpuMs: number;
  /** The git (checkpoints) and shell processes the team started, once they exited. */
  childCpuMs: number;
  wallMs: number;
}

type SeenRequest = Pick<RecordedRequest, 'agent' | 'path' | 'cache'>;

/** The scripted API in a child process (bench/children/team-cost-api.ts), and the requests it saw, as they arrive. */
async function startScriptedApi(
  pace: Pace | undefined,
  onRequest: () => void = () => undefined,
): Promise<{ url: string; requests: SeenRequest[]; close(): Promise<void> }> {
  const child = fork(path.join(BUNDLE_DIR, 'team-cost-api.mjs'), [JSON.stringify(pace ?? null)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const requests: SeenRequest[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.on('message', (message: { url?: string; request?: SeenRequest }) => {
      if (message.request) {
        requests.push(message.request);
        onRequest();
      } else if (message.url) resolve(message.url);
    });
    void exited.then(() => reject(new Error('the scripted API process exited before it listened')));
  });
  return {
    url,
    requests,
    async close() {
      if (child.connected) child.send({ quit: true });
      const timer = setTimeout(() => child.kill(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function runTeam(tasks: number, teammates: number, pace?: Pace): Promise<TeamCost> {
  // The end is looked for when something says it may have come (a task completed, the lead's status
  // changed, a request recorded), not on a timer: a poll every 50 ms added 25 ms on average to the wall time.
  let looked: (() => void) | undefined;
  const fake = await startScriptedApi(pace, () => looked?.());
  const temp = tempDir('huddle-bench-team-cost-');
  // The checkpoints' shadow repositories go to a temporary state directory, not the person's ~/.local/state.
  const state = tempDir('huddle-bench-team-cost-state-');
  const savedState = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = state.dir;
  const config = resolveConfig(
    { cwd: temp.dir },
    {
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: fake.url,
      HUDDLE_IDLE_TIMEOUT_MS: '600000',
      HUDDLE_RETRY_BASE_MS: '10',
      HUDDLE_MAX_CONCURRENT_CALLS: '0',
      // BENCH_TEAM_COST_BASELINE=1: as before this work (one growing context, a lead woken per report), for the before column.
      ...(process.env.BENCH_TEAM_COST_BASELINE === '1' ? { HUDDLE_FRESH_CONTEXT_PER_TASK: '0', HUDDLE_LEAD_COALESCE_MS: '0' } : {}),
    },
  );
  const workspace = new Workspace(temp.dir);
  const hub = new EventHub();
  const store = await openFileStore(workspace, { hub, secrets: [TEST_API_KEY] });
  const team = await Team.open({ config, workspace, hub, store, backend: new ModelClient(modelClientOptions(config)) });
  const completed = new Set<number>();
  const unsubscribe = hub.subscribe((event) => {
    if (event.type === 'task' && event.task.status === 'completed') completed.add(event.task.id);
    if ((event.type === 'task' && event.task.status === 'completed') || (event.type === 'status' && event.agent === 'lead')) looked?.();
  });
  let leadCounted = 0;
  let leadSeen = 0;
  const leadRequests = () => {
    for (; leadSeen < fake.requests.length; leadSeen++) if (fake.requests[leadSeen]!.agent === 'lead') leadCounted++;
    return leadCounted;
  };
  // The file system's debt from what ran before (the last run's thousands of files written and removed)
  // is paid before the clock starts, not by this run: on ext4 it made a file's replacement 2 ms instead of 0.25.
  execFileSync('sync');
  const cpu = process.cpuUsage();
  const childCpu = reapedChildrenCpuSeconds();
  const started = performance.now();
  try {
    for (let n = 1; n <= tasks; n++) await store.board.create({ subject: `Task ${n}`, description: `Write out/task-${n}.ts.` }, 'lead');
    team.start();
    for (let i = 1; i <= teammates; i++)
      await team.spawn({ name: `t${i}`, role: 'coder', prompt: 'Take tasks from the board; report each to the lead.' }, 'lead');
    // Done: every task completed, every report read by the lead, and the lead between turns. The
    // board and the lead's inbox are read only once the completions (counted from the team's events)
    // and the calls say the run may be over: read every 50 ms, they were O(board) work of the
    // benchmark itself, counted in the CPU per task and growing with the run.
    for (;;) {
      if (completed.size >= tasks && team.lead.isIdle && fake.requests.length - leadRequests() >= tasks * 4) {
        const board = await store.board.list();
        if (board.every((t) => t.status === 'completed') && (await store.bus.unreadCount('lead')) === 0 && team.lead.isIdle) break;
      }
      // Or after a second without any of those (none is missed: this is only a backstop).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        looked = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      looked = undefined;
    }
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const childCpuMs = (reapedChildrenCpuSeconds() - childCpu) * 1000;
    const messages = fake.requests.filter((r) => r.path === '/v1/messages' && r.cache);
    const lead = messages.filter((r) => r.agent === 'lead');
    const sum = (list: SeenRequest[]) => list.reduce((total, r) => total + billedInput(r.cache!), 0);
    return {
      tasks,
      teammates,
      billed: sum(messages),
      leadBilled: sum(lead),
      leadCalls: lead.length,
      reports: tasks,
      calls: messages.length,
      cpuMs: (used.user + used.system) / 1000,
      childCpuMs,
      wallMs,
    };
  } finally {
    unsubscribe();
    await team.close('bench over');
    await store.close();
    await fake.close();
    temp.cleanup();
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    state.cleanup();
  }
}

export async function benchTeamCost(): Promise<BenchResult[]> {
  // BENCH_TEAM_COST_SIZES=24,96 for a quicker look (the recorded run uses all four).
  const sizes = (process.env.BENCH_TEAM_COST_SIZES ?? '24,96,200,500').split(',').map(Number);
  const runs = new Map<number, TeamCost>();
  // What a file replaced through a rename costs just before each 200-task run (the runs write a few a task).
  const fileCosts: number[] = [];
  for (const tasks of sizes) {
    if (tasks === 200) fileCosts.push(fileReplaceMicros());
    const run = await runTeam(tasks, 8);
    runs.set(tasks, run);
    log(
      `team cost: ${tasks} tasks, ${run.calls} calls, ${(run.billed / tasks).toFixed(0)} billed input/task, ${(run.wallMs / 1000).toFixed(1)} s, ` +
        `CPU ${(run.cpuMs / tasks).toFixed(1)} + ${(run.childCpuMs / tasks).toFixed(1)} (children) ms/task`,
    );
  }
  // The 200-task wall time is a median of runs (BENCH_TEAM_COST_WALL_RUNS, 3 by default): one run's
  // wall time on a shared machine swings by a second between runs.
  const walls = runs.has(200) ? [runs.get(200)!.wallMs] : [];
  const wallRuns = Math.max(1, Number(process.env.BENCH_TEAM_COST_WALL_RUNS ?? 3));
  while (walls.length > 0 && walls.length < wallRuns) {
    fileCosts.push(fileReplaceMicros());
    const again = await runTeam(200, 8);
    walls.push(again.wallMs);
    log(
      `team cost: 200 tasks again, ${(again.wallMs / 1000).toFixed(1)} s, CPU ${(again.cpuMs / 200).toFixed(1)} ms/task, a file replaced in ${fileCosts.at(-1)!.toFixed(0)} µs`,
    );
  }
  // BENCH_TEAM_COST_SIZES_ONLY=1: only the runs of those sizes (for a profile or an A/B pair of CPU per task).
  const extras = process.env.BENCH_TEAM_COST_SIZES_ONLY === '1' ? undefined : await teamShapes();
  const perTask = (tasks: number) => runs.get(tasks)!.billed / tasks;
  const cpuPerTask = (tasks: number) => (runs.get(tasks)!.cpuMs + runs.get(tasks)!.childCpuMs) / tasks;
  // The 500-task goal is relative to the 24-task figure (absent when BENCH_TEAM_COST_SIZES leaves 24 out).
  const small = runs.has(24) ? perTask(24) : undefined;
  return [
    ...sizes.map((tasks) =>
      result({
        name: `team cost: billed input per task, ${tasks} tasks, 8 teammates`,
        value: perTask(tasks),
        unit: 'tokens',
        ...(tasks === 500 && small !== undefined ? { target: Math.round(1.25 * small) } : {}),
        ...(tasks === 24 ? { note: 'the base of the 500-task goal' } : {}),
        stat: 'uncached + 1.25 × cache writes + 0.1 × cache reads, all agents, per task',
        detail: { calls: runs.get(tasks)!.calls, leadCalls: runs.get(tasks)!.leadCalls, wallSeconds: runs.get(tasks)!.wallMs / 1000 },
        ...(tasks === 500 ? { note: 'goal: ≤ 1.25 × the 24-task figure' } : {}),
      }),
    ),
    ...(extras ? shapeResults(extras) : []),
    ...[96, 500]
      .filter((tasks) => runs.has(tasks))
      .map((tasks) =>
        result({
          name: `team cost: CPU per task, ${tasks} tasks (huddle and its children)`,
          value: cpuPerTask(tasks),
          unit: 'ms',
          stat: `${tasks} tasks, 8 teammates: user + system CPU of the team's process and of the processes it started (not the fake API's), ÷ tasks`,
          detail: { processMs: runs.get(tasks)!.cpuMs / tasks, childrenMs: runs.get(tasks)!.childCpuMs / tasks },
        }),
      ),
    ...(runs.has(96) && runs.has(500)
      ? [
          result({
            name: 'team cost: CPU per task at 500 tasks ÷ at 96',
            value: cpuPerTask(500) / cpuPerTask(96),
            unit: '×',
            target: 1.1,
            stat: 'the two figures above: flat when no hot path does O(board) or O(files) work',
          }),
        ]
      : []),
    ...(runs.has(200)
      ? [
          result({
            name: 'team cost: 200 tasks, 8 teammates, on files: wall time',
            value: median(walls) / 1000,
            unit: 's',
            target: 3,
            samples: walls.length,
            stat: 'median of runs, the team in process (the fake API in a process of its own), from the first task created to the lead idle with every report read',
            detail: { ...spread(walls.map((ms) => ms / 1000)), fileReplaceMicros: Math.round(median(fileCosts)) },
            note: `a small file replaced through a rename in ${median(fileCosts).toFixed(0)} µs (median, before each run): tens on a quiet local disk`,
          }),
        ]
      : []),
  ];
}

/** The lead at a realistic pace, and a team of 4 against one teammate (skipped by BENCH_TEAM_COST_SIZES_ONLY=1). */
async function teamShapes(): Promise<{ paced: TeamCost; four: TeamCost; one: TeamCost }> {
  const paced = await runTeam(24, 8, { min: 1500, max: 4500 });
  log(`team cost at pace: lead ${paced.leadCalls} calls for ${paced.reports} reports, ${((100 * paced.leadBilled) / paced.billed).toFixed(1)} % of input`);
  const four = await runTeam(24, 4);
  const one = await runTeam(24, 1);
  return { paced, four, one };
}

function shapeResults({ paced, four, one }: { paced: TeamCost; four: TeamCost; one: TeamCost }): BenchResult[] {
  return [
    result({
      name: "team cost: the lead's share of billed input at a realistic pace",
      value: (100 * paced.leadBilled) / paced.billed,
      unit: '%',
      target: 15,
      stat: '24 tasks, 8 teammates, every teammate call answered after 1.5–4.5 s',
      detail: { leadCalls: paced.leadCalls, reports: paced.reports, wallSeconds: paced.wallMs / 1000 },
      note: '24 tasks rather than more at this pace, so that the run ends in about a minute',
    }),
    result({
      name: 'team cost: lead calls per report at a realistic pace',
      value: paced.leadCalls / paced.reports,
      unit: 'calls/report',
      target: 0.25,
      stat: 'lead model calls ÷ teammate reports, same run',
    }),
    result({
      name: 'team cost: team of 4 vs one teammate, billed input on 24 tasks',
      value: four.billed / one.billed,
      unit: '×',
      target: 1.5,
      stat: 'lead + 4 teammates ÷ lead + 1 teammate',
      detail: { four: four.billed, one: one.billed },
    }),
  ];
}
