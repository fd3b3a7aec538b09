// Task claims under contention: a board of N pending tasks, claimers looping on claimNext until it
// returns nothing. Throughput = N / (wall time from the start signal until the last claimer is
// done). Every claim also has to be unique: the benchmark checks that no task was won twice.
// The large board (10,000 tasks) is written as task files directly (docs/contract.md#task-files, as a
// person or another tool could), so that filling it does not dominate the run.
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FileBoard } from '../src/runtime/store/file/board/file-board.js';
import { type BenchResult, BUNDLE_DIR, log, result, round, tempDir } from './lib.js';

/** Creates `count` pending tasks through FileBoard.create (as agents do). */
async function fillBoard(dir: string, count: number): Promise<number> {
  const started = performance.now();
  const board = new FileBoard(dir, { agent: 'lead' });
  for (let i = 1; i <= count; i++) await board.create({ subject: `Bench task ${i}`, description: `task number ${i}` });
  return (performance.now() - started) / 1000;
}

/** Writes `count` pending task files in the task file format (docs/contract.md#task-files), ids 1..count. */
function writeBoardFiles(dir: string, count: number): number {
  const started = performance.now();
  mkdirSync(dir, { recursive: true });
  const now = new Date().toISOString();
  for (let id = 1; id <= count; id++) {
    const task = {
      id,
      subject: `Bench task ${id}`,
      description: `task number ${id}`,
      status: 'pending',
      owner: null,
      blockedBy: [],
      blocks: [],
      created_at: now,
      updated_at: now,
    };
    writeFileSync(path.join(dir, `task_${id}.json`), `${JSON.stringify(task, null, 2)}\n`);
  }
  return (performance.now() - started) / 1000;
}

function checkUnique(ids: number[], count: number): void {
  const distinct = new Set(ids);
  if (ids.length !== count || distinct.size !== count) {
    throw new Error(`claims are not exactly once: ${ids.length} claims, ${distinct.size} distinct, ${count} tasks`);
  }
}

export async function benchClaimsInProcess(tasks = 2000, claimers = 8): Promise<BenchResult[]> {
  const ws = tempDir('huddle-bench-claims-');
  try {
    const dir = path.join(ws.dir, '.tasks');
    const fillSeconds = await fillBoard(dir, tasks);
    // One FileBoard per claimer, as each agent of a team has its own.
    const boards = Array.from({ length: claimers }, (_, i) => new FileBoard(dir, { agent: `c${i}` }));
    const won: number[][] = boards.map(() => []);
    const started = performance.now();
    await Promise.all(
      boards.map(async (board, i) => {
        for (;;) {
          const task = await board.claimNext(`c${i}`);
          if (!task) return;
          won[i]!.push(task.id);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    checkUnique(won.flat(), tasks);
    const rate = tasks / seconds;
    log(
      `claims in-process: ${tasks} in ${seconds.toFixed(2)} s = ${rate.toFixed(0)}/s; per claimer ${won.map((w) => w.length).join(' ')}; board filled in ${fillSeconds.toFixed(2)} s`,
    );
    return [
      result({
        name: `claims: ${claimers} claimers, 1 process`,
        value: rate,
        unit: 'claims/s',
        samples: tasks,
        stat: `${tasks} tasks / wall time until all claimed`,
        detail: {
          seconds: round(seconds, 3),
          perClaimer: won.map((w) => w.length),
          createSeconds: round(fillSeconds, 3),
          createPerSecond: round(tasks / fillSeconds, 1),
        },
      }),
    ];
  } finally {
    ws.cleanup();
  }
}

interface ClaimerReply {
  ready?: boolean;
  ids?: number[][];
  error?: string;
}

export async function benchClaimsAcrossProcesses(tasks = 2000, processes = 2, claimersEach = 4, fill: 'create' | 'files' = 'create'): Promise<BenchResult[]> {
  const ws = tempDir('huddle-bench-claims-x-');
  const children: ReturnType<typeof fork>[] = [];
  try {
    const dir = path.join(ws.dir, '.tasks');
    const fillSeconds = fill === 'create' ? await fillBoard(dir, tasks) : writeBoardFiles(dir, tasks);
    const replies = children.map(() => [] as ClaimerReply[]);
    const waiting: Array<() => void> = [];
    const next = (index: number): Promise<ClaimerReply> =>
      new Promise((resolve, reject) => {
        const check = () => {
          const reply = replies[index]!.shift();
          if (!reply) return false;
          if (reply.error) reject(new Error(`claimer child ${index}: ${reply.error}`));
          else resolve(reply);
          return true;
        };
        if (check()) return;
        const child = children[index]!;
        const onExit = () => reject(new Error(`claimer child ${index} exited`));
        child.once('exit', onExit);
        waiting[index] = () => {
          if (check()) child.off('exit', onExit);
        };
      });
    for (let i = 0; i < processes; i++) {
      const child = fork(path.join(BUNDLE_DIR, 'claimer.mjs'), [dir, String(claimersEach), `p${i}`], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(child);
      replies.push([]);
      child.on('message', (message: ClaimerReply) => {
        replies[i]!.push(message);
        waiting[i]?.();
      });
    }
    await Promise.all(children.map((_, i) => next(i))); // ready
    const done = children.map((_, i) => next(i));
    const started = performance.now();
    for (const child of children) child.send({ go: true });
    const results = await Promise.all(done);
    const seconds = (performance.now() - started) / 1000;
    const perClaimer = results.flatMap((r) => r.ids!.map((ids) => ids.length));
    checkUnique(
      results.flatMap((r) => r.ids!.flat()),
      tasks,
    );
    const rate = tasks / seconds;
    log(
      `claims across processes: ${tasks} in ${seconds.toFixed(2)} s = ${rate.toFixed(0)}/s; per claimer ${perClaimer.join(' ')}; board filled (${fill}) in ${fillSeconds.toFixed(2)} s`,
    );
    const large = fill === 'files';
    return [
      result({
        name: large
          ? `claims: ${tasks.toLocaleString('en-US')}-task board, ${processes} processes × ${claimersEach} claimers`
          : `claims: ${processes} processes × ${claimersEach} claimers`,
        value: rate,
        unit: 'claims/s',
        samples: tasks,
        stat: `${tasks} tasks / wall time until all claimed`,
        note: 'one board-wide lock file across processes; a waiter retries with 1–25 ms backoff',
        // The file board's goal (docs/contract.md#tasks: claims atomic across processes): at least 1,000 claims/s on a 10,000-task board.
        ...(large ? { minimum: 1000 } : {}),
        ...(large
          ? { detail: { seconds: round(seconds, 3), perClaimer, fillSeconds: round(fillSeconds, 3), goal: '>= 1000 claims/s' } }
          : { detail: { seconds: round(seconds, 3), perClaimer } }),
      }),
    ];
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    ws.cleanup();
  }
}
