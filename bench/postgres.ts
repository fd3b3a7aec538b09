// A team on PostgreSQL (docs/contract.md#on-disk: a team's state in one database): the wake-up of a waiter in one process by a send in another
// (the NOTIFY path), and claims with dependency chains by 8 claimers in 2 processes. Needs a
// server: HUDDLE_BENCH_PG_URL or HUDDLE_TEST_PG_URL (a throwaway one: scripts/test-postgres.sh);
// without one these benchmarks are skipped with a note.
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { EventHub } from '../src/runtime/events/events.js';
import { postgresBackend } from '../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../src/runtime/store/team-store.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { type BenchResult, BUNDLE_DIR, log, percentile, result, round, spread, tempDir } from './lib.js';

export const PG_URL = process.env.HUDDLE_BENCH_PG_URL?.trim() || process.env.HUDDLE_TEST_PG_URL?.trim() || undefined;
/** A server with fsync on, as in production (HUDDLE_TEST_PG_FSYNC=on scripts/test-postgres.sh start): commits cost a flush there. */
export const PG_FSYNC_URL = process.env.HUDDLE_BENCH_PG_FSYNC_URL?.trim() || undefined;

function skipped(what: string): BenchResult[] {
  log(`${what}: skipped — no PostgreSQL server (set HUDDLE_BENCH_PG_URL or HUDDLE_TEST_PG_URL; a throwaway one: eval "$(scripts/test-postgres.sh start)")`);
  return [];
}

function freshTeam(base: string, prefix: string): string {
  const url = new URL(base);
  url.searchParams.set('team', `bench-${prefix}-${randomUUID().slice(0, 8)}`);
  return url.href;
}

interface Reply {
  ready?: boolean;
  done?: number;
  sent?: number;
  ids?: number[][];
  cpuMs?: number;
  roundTrips?: number;
  error?: string;
}

/** A forked child with its IPC replies in order. */
function child(file: string, args: string[], onProgress?: (message: Reply) => void): { process: ChildProcess; next(): Promise<Reply> } {
  const proc = fork(path.join(BUNDLE_DIR, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: Reply[] = [];
  let notify: (() => void) | undefined;
  proc.on('message', (message: Reply) => {
    if (message.done !== undefined) {
      onProgress?.(message);
      return;
    }
    replies.push(message);
    notify?.();
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    process: proc,
    async next() {
      while (replies.length === 0) {
        await Promise.race([new Promise<void>((resolve) => (notify = resolve)), exited.then(() => Promise.reject(new Error(`${file} exited`)))]);
      }
      const reply = replies.shift()!;
      if (reply.error) throw new Error(`${file}: ${reply.error}`);
      return reply;
    },
  };
}

export async function benchPostgresWake(samples = 200, warmup = 20): Promise<BenchResult[]> {
  if (!PG_URL) return skipped('postgres wake-up');
  const ws = tempDir('huddle-bench-pg-wake-');
  const url = freshTeam(PG_URL, 'wake');
  let store: TeamStore | undefined;
  let sender: ReturnType<typeof child> | undefined;
  const latencies: number[] = [];
  try {
    store = await postgresBackend(url, new Workspace(ws.dir)).open({ hub: new EventHub(), secrets: [] });
    await store.roster.add({ name: 'parent', role: 'bench' });
    await store.roster.add({ name: 'child', role: 'bench' });
    sender = child('pg-bus-sender.mjs', [url, ws.dir]);
    await sender.next(); // ready
    for (let i = 0; i < warmup + samples; i++) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error('no wake-up within 5 s')), 5000);
      let resumedAt = 0n;
      const waiting = store.bus.waitForMessage('parent', abort.signal).then(() => {
        resumedAt = process.hrtime.bigint();
      });
      sender.process.send({ go: i });
      await waiting;
      clearTimeout(timer);
      await sender.next(); // its send() returned
      const got = await store.bus.take('parent');
      if (got.length !== 1) throw new Error(`expected one message, took ${got.length}`);
      if (i >= warmup) latencies.push(Number(resumedAt - BigInt(got[0]!.content)) / 1e6);
    }
  } finally {
    sender?.process.send({ quit: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (sender && sender.process.exitCode === null) sender.process.kill();
    await store?.close();
    ws.cleanup();
  }
  log(`postgres wake across processes: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms`);
  const detail = { ...spread(latencies, 3), goal: 'p95 <= 10 ms' };
  const note = 'send (one transaction) in a child, NOTIFY on commit, the parent re-reads its inbox and resumes';
  return [
    result({
      name: 'postgres: wake across processes, p50',
      value: percentile(latencies, 50),
      unit: 'ms',
      samples,
      stat: 'p50, send() start in child → waiter resumed in parent',
      note,
      detail,
    }),
    result({
      name: 'postgres: wake across processes, p95',
      value: percentile(latencies, 95),
      unit: 'ms',
      target: 50,
      samples,
      stat: 'p95, send() start in child → waiter resumed in parent',
      note,
      detail,
    }),
  ];
}

/**
 * Claims with dependency chains: `tasks` in chains of `chain` (each waits for the one before), 2
 * processes × 4 loops claiming and completing. One unmeasured warm-up round first (a fifth of the
 * tasks, its own team), as every process benchmark does: a fresh server's first rounds are slower.
 */
export async function benchPostgresClaims(tasks = 1000, chain = 5, processes = 2, claimersEach = 4): Promise<BenchResult[]> {
  if (!PG_URL) return skipped('postgres claims');
  await claimRound(PG_URL, Math.max(chain, Math.floor(tasks / 5)), chain, processes, claimersEach);
  return claimRound(PG_URL, tasks, chain, processes, claimersEach);
}

/**
 * The same on a server with fsync on (HUDDLE_BENCH_PG_FSYNC_URL): every commit waits for its flush,
 * and a NOTIFYing commit holds the instance-wide notify lock through it, so what a NOTIFY per write costs shows here.
 */
export async function benchPostgresClaimsFsync(tasks = 2000, chain = 5, processes = 4, claimersEach = 8): Promise<BenchResult[]> {
  if (!PG_FSYNC_URL) {
    log('postgres claims, fsync on: skipped — set HUDDLE_BENCH_PG_FSYNC_URL (a throwaway one: HUDDLE_TEST_PG_FSYNC=on scripts/test-postgres.sh start)');
    return [];
  }
  await claimRound(PG_FSYNC_URL, Math.max(chain, Math.floor(tasks / 5)), chain, processes, claimersEach, 1000, 'fsync on');
  return claimRound(PG_FSYNC_URL, tasks, chain, processes, claimersEach, 1000, 'fsync on');
}

async function claimRound(
  base: string,
  tasks: number,
  chain: number,
  processes: number,
  claimersEach: number,
  minimum = 400,
  server = '',
): Promise<BenchResult[]> {
  const PG_URL = base;
  const ws = tempDir('huddle-bench-pg-claims-');
  const url = freshTeam(PG_URL, 'claims');
  let store: TeamStore | undefined;
  const children: Array<ReturnType<typeof child>> = [];
  try {
    // The bench's own store only fills the board: it joins (a lead would also mirror every event of the claimers).
    store = await postgresBackend(url, new Workspace(ws.dir)).open({ hub: new EventHub(), secrets: [], mode: 'join' });
    const fillStarted = performance.now();
    for (let i = 1; i <= tasks; i++) await store.board.create({ subject: `Bench task ${i}`, ...(i % chain !== 1 ? { blockedBy: [i - 1] } : {}) }, 'lead');
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    let completed = 0;
    let allDone!: () => void;
    const finished = new Promise<void>((resolve) => (allDone = resolve));
    for (let i = 0; i < processes; i++) {
      const c = child('pg-claimer.mjs', [url, ws.dir, String(claimersEach), `p${i}`], (message) => {
        if (message.done && (completed += message.done) >= tasks) allDone();
      });
      children.push(c);
    }
    await Promise.all(children.map((c) => c.next())); // ready
    const walBefore = await walCounters(PG_URL);
    const serverBefore = await serverCpuMs(PG_URL);
    const started = performance.now();
    for (const c of children) c.process.send({ go: true });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    const walAfter = await walCounters(PG_URL);
    const serverAfter = await serverCpuMs(PG_URL);
    // Commits per WAL flush (group commit): write transactions (xids given out) over flushes. A starved client keeps fewer in flight, so load lowers it too.
    const perFlush =
      walBefore && walAfter && walAfter.syncs > walBefore.syncs ? (walAfter.xids - walBefore.xids) / (walAfter.syncs - walBefore.syncs) : undefined;
    // The server's write work, as WAL: unlike CPU time it does not grow with the machine's load.
    const walPerTask = walBefore && walAfter ? (walAfter.bytes - walBefore.bytes) / tasks : undefined;
    for (const c of children) c.process.send({ stop: true });
    const replies = await Promise.all(children.map((c) => c.next()));
    const ids = replies.flatMap((r) => r.ids!.flat());
    const distinct = new Set(ids);
    if (ids.length !== tasks || distinct.size !== tasks)
      throw new Error(`claims are not exactly once: ${ids.length} claims, ${distinct.size} distinct, ${tasks} tasks`);
    const open = (await store.board.list()).filter((task) => task.status !== 'completed');
    if (open.length) throw new Error(`${open.length} tasks were left unfinished`);
    const rate = tasks / seconds;
    const perClaimer = replies.flatMap((r) => r.ids!.map((mine) => mine.length));
    // Per task (claimed and completed): the claimers' CPU, their round trips, and the server's CPU when it runs on this machine.
    const clientCpuMs = replies.reduce((sum, r) => sum + (r.cpuMs ?? 0), 0) / tasks;
    const roundTrips = replies.reduce((sum, r) => sum + (r.roundTrips ?? 0), 0) / tasks;
    const serverCpu = serverBefore !== undefined && serverAfter !== undefined ? (serverAfter - serverBefore) / tasks : undefined;
    log(
      `postgres claims${server ? ` (${server})` : ''}: ${tasks} (chains of ${chain}) in ${seconds.toFixed(2)} s = ${rate.toFixed(0)}/s; per claimer ${perClaimer.join(' ')}; 0 duplicates; board filled in ${fillSeconds.toFixed(2)} s${perFlush === undefined ? '' : `; ${perFlush.toFixed(2)} commits per WAL flush`}; per task ${roundTrips.toFixed(2)} round trips, ${clientCpuMs.toFixed(2)} ms client CPU${serverCpu === undefined ? '' : `, ${serverCpu.toFixed(2)} ms server CPU`}${walPerTask === undefined ? '' : `, ${(walPerTask / 1024).toFixed(1)} KiB WAL`}`,
    );
    return [
      result({
        name: `postgres: claims, ${tasks} tasks in chains of ${chain}, ${processes} processes × ${claimersEach}${server ? `, ${server}` : ''}`,
        value: rate,
        unit: 'claims/s',
        minimum, // the goal for claims on PostgreSQL
        samples: tasks,
        stat: `${tasks} tasks claimed and completed / wall time; 0 duplicates (checked)`,
        note: 'claimNext (SKIP LOCKED, dependency check in the transaction) then task_update completed, per task',
        detail: {
          seconds: round(seconds, 3),
          perClaimer,
          duplicates: 0,
          fillSeconds: round(fillSeconds, 3),
          ...(perFlush === undefined ? {} : { commitsPerWalFlush: round(perFlush, 2) }),
          roundTripsPerTask: round(roundTrips, 2),
          clientCpuMsPerTask: round(clientCpuMs, 3),
          ...(serverCpu === undefined ? {} : { serverCpuMsPerTask: round(serverCpu, 3) }),
          ...(walPerTask === undefined ? {} : { walBytesPerTask: Math.round(walPerTask) }),
          goal: `>= ${minimum} claims/s`,
        },
      }),
    ];
  } finally {
    for (const c of children) if (c.process.exitCode === null) c.process.kill();
    await store?.close();
    ws.cleanup();
  }
}

/** The server's WAL flushes so far and the transaction ids given out (one per write transaction); undefined before PostgreSQL 14 (no pg_stat_wal). */
async function walCounters(url: string): Promise<{ syncs: number; xids: number; bytes: number } | undefined> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ syncs: string; xids: string; bytes: string }>(
      "SELECT (SELECT wal_sync FROM pg_stat_wal) AS syncs, pg_snapshot_xmax(pg_current_snapshot())::text AS xids, pg_current_wal_lsn() - '0/0' AS bytes",
    );
    return { syncs: Number(rows[0]!.syncs), xids: Number(rows[0]!.xids), bytes: Number(rows[0]!.bytes) };
  } catch {
    // A server without pg_stat_wal: the figure is left out.
    return undefined;
  } finally {
    // Closing: a connection that failed has nothing more to tell.
    await client.end().catch(() => undefined);
  }
}

/**
 * CPU time (ms) of the server's processes so far, when it runs on this machine and /proc can be read: its postmaster's
 * (with the backends that have exited) and every live child's. Undefined otherwise (a remote server).
 */
async function serverCpuMs(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const { readFileSync, readdirSync } = await import('node:fs');
    const stat = (pid: number | string) => {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return text.slice(text.lastIndexOf(')') + 2).split(' ');
    };
    // A pid of this machine that is a postgres process: the server is here.
    if (!readFileSync(`/proc/${rows[0]!.pid}/comm`, 'utf8').startsWith('postgres')) return undefined;
    const postmaster = stat(rows[0]!.pid)[1]!; // ppid
    const tick = 1000 / 100; // USER_HZ
    const own = stat(postmaster);
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]); // utime stime cutime cstime
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        const fields = stat(pid);
        if (fields[1] === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // Gone meanwhile (its time is now in the postmaster's cutime).
      }
    }
    return ticks * tick;
  } catch {
    // Not on this machine (or no /proc): the figure is left out.
    return undefined;
  } finally {
    // Closing: a connection that failed has nothing more to tell.
    await client.end().catch(() => undefined);
  }
}
