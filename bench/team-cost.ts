// What a team's model input costs per task, billed under the Messages API's caching rules
// (test/helpers/prompt-cache.ts, as bench/caching.ts): an in-process team (Team.open, the real
// ModelClient) against the fake API, N tasks on the board, teammates that each take a task, write
// its file, complete it and report to the lead in four calls; the lead answers each wake in one.
// Measures billed input per task at 24, 96, 200 and 500 tasks (8 teammates), the lead's share at a
// realistic pace (every teammate call answered after 1.5–4.5 s; fewer tasks, so the run ends in a
// minute), a team of 4 against one teammate on the same 24 tasks, the 200-task run's wall time, and
// CPU per task at 96 and 500 tasks and their ratio (the benchmark process: huddle and the fake API
// together, which shares it; plus the git and shell processes they started).
import { Team } from '../src/agents/lifecycle/team.js';
import { resolveConfig } from '../src/runtime/config.js';
import { EventHub } from '../src/runtime/events/events.js';
import { ModelClient, modelClientOptions } from '../src/runtime/model/model-client.js';
import { openFileStore } from '../src/runtime/store/file/file-store.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { reply, replyText, startFakeApi, text, toolUse, type RecordedRequest, type Scripted } from '../test/helpers/fake-api.js';
import { billedInput } from '../test/helpers/prompt-cache.js';
import { type BenchResult, TEST_API_KEY, log, reapedChildrenCpuSeconds, result, tempDir } from './lib.js';

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

type Turn = { role: string; content: string | Array<{ type: string; text?: string; name?: string }> };

/** The scripted teammate: claim → write_file → task_update → send_message → end; anything else: a short answer. */
function respond(request: RecordedRequest, pace: { min: number; max: number } | undefined): Scripted {
  const delay = (s: Scripted): Scripted =>
    pace && s.kind === 'message' ? { ...s, delayMs: Math.round((pace.min + Math.random() * (pace.max - pace.min)) / 12) } : s;
  if (request.agent === 'lead') return replyText('Noted.');
  const messages: Turn[] = request.body?.messages ?? [];
  const last = messages.at(-1);
  const blocks = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
  const claimed = blocks.map((b) => /<auto-claimed>Task #(\d+)/.exec(b.text ?? '')?.[1]).find(Boolean);
  if (claimed) {
    const n = Number(claimed);
    const content = `// task ${n}\n${Array.from({ length: 30 }, (_, k) => `export const v${k} = ${n * 100 + k};`).join('\n')}\n`;
    return delay(reply(text(`Task ${n}: writing its file.`), toolUse('write_file', { path: `out/task-${n}.ts`, content })));
  }
  if (blocks.some((b) => b.type === 'tool_result')) {
    const previous = messages.at(-2);
    const used = typeof previous?.content === 'string' ? undefined : previous?.content.findLast((b) => b.type === 'tool_use')?.name;
    const task = Number(
      /Task (\d+)/.exec(JSON.stringify(messages.findLast((m) => m.role === 'assistant' && JSON.stringify(m).includes('writing its file'))))?.[1],
    );
    if (used === 'write_file') return delay(reply(toolUse('task_update', { task_id: task, status: 'completed' })));
    if (used === 'task_update') return delay(reply(toolUse('send_message', { to: 'lead', content: `Task #${task} done: out/task-${task}.ts written.` })));
    return delay(replyText(`Task ${task} is done and reported.`));
  }
  return delay(replyText('Ready for the board.'));
}

async function runTeam(tasks: number, teammates: number, pace?: { min: number; max: number }): Promise<TeamCost> {
  const fake = await startFakeApi();
  const temp = tempDir('huddle-bench-team-cost-');
  // The checkpoints' shadow repositories go to a temporary state directory, not the person's ~/.local/state.
  const state = tempDir('huddle-bench-team-cost-state-');
  const savedState = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = state.dir;
  fake.respond((request) => (request.path === '/v1/messages' ? respond(request, pace) : undefined));
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
  });
  let leadCounted = 0;
  let leadSeen = 0;
  const leadRequests = () => {
    for (; leadSeen < fake.requests.length; leadSeen++) if (fake.requests[leadSeen]!.agent === 'lead') leadCounted++;
    return leadCounted;
  };
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
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const childCpuMs = (reapedChildrenCpuSeconds() - childCpu) * 1000;
    const messages = fake.requests.filter((r) => r.path === '/v1/messages' && r.cache);
    const lead = messages.filter((r) => r.agent === 'lead');
    const sum = (list: RecordedRequest[]) => list.reduce((total, r) => total + billedInput(r.cache!), 0);
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
  for (const tasks of sizes) {
    const run = await runTeam(tasks, 8);
    runs.set(tasks, run);
    log(
      `team cost: ${tasks} tasks, ${run.calls} calls, ${(run.billed / tasks).toFixed(0)} billed input/task, ${(run.wallMs / 1000).toFixed(1)} s, ` +
        `CPU ${(run.cpuMs / tasks).toFixed(1)} + ${(run.childCpuMs / tasks).toFixed(1)} (children) ms/task`,
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
          name: `team cost: CPU per task, ${tasks} tasks (huddle and the fake API, and their children)`,
          value: cpuPerTask(tasks),
          unit: 'ms',
          stat: `${tasks} tasks, 8 teammates: user + system CPU of the benchmark process and of the processes it started, ÷ tasks`,
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
            value: runs.get(200)!.wallMs / 1000,
            unit: 's',
            target: 3,
            stat: 'one run, in process (the fake API in the same process), from the first task created to the lead idle with every report read',
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
