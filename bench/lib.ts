// Shared pieces of the benchmarks: the result shape, statistics, whole-process timing, CPU time
// of a process tree from /proc, temporary workspaces.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One measured number. A target is an upper bound (`target`) or, for rates, a lower one (`minimum`), in the value's unit. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  /** The number should be at most this. */
  target?: number;
  /** The number should be at least this (rates: claims per second). */
  minimum?: number;
  /** Within its target or minimum (only when there is one). */
  ok?: boolean;
  /** How many measurements the value summarizes (a median of N runs: N). */
  samples?: number;
  /** Which statistic `value` is (median, p95, rate over a window...). */
  stat?: string;
  /** Context: comparisons, caveats. */
  note?: string;
  /** Further numbers of the same measurement (other percentiles, min/max, raw samples). */
  detail?: Record<string, unknown>;
}

/** A benchmark group that crashed: reported instead of its results. */
export interface BenchFailure {
  name: string;
  error: string;
}

export function result(r: Omit<BenchResult, 'ok'>): BenchResult {
  const { name, value, unit, target, minimum, ...rest } = r;
  return {
    name,
    value: round(value),
    unit,
    ...(target !== undefined ? { target, ok: value <= target } : {}),
    ...(minimum !== undefined ? { minimum, ok: value >= minimum } : {}),
    ...rest,
  };
}

// The bundle is built and run by scripts/bench.mjs, which sets HUDDLE_BENCH_ROOT; unbundled
// (e.g. a type check) this file sits in <root>/bench.
export const ROOT = process.env.HUDDLE_BENCH_ROOT ?? path.resolve(import.meta.dirname, '..');
/** The built CLI: scripts/bench.mjs points this at its private copy of dist/ (see there); HUDDLE_TEST_CLI at another build (an A/B). */
export const CLI = process.env.HUDDLE_TEST_CLI ?? process.env.HUDDLE_BENCH_CLI ?? path.join(ROOT, 'dist', 'cli.js');
/** Where the forked child bundles are: next to the runner bundle. */
export const BUNDLE_DIR = typeof __dirname === 'string' ? __dirname : import.meta.dirname;
export const TEST_API_KEY = 'sk-bench-key-0123456789';

// ---- statistics ---------------------------------------------------------------------------------

export function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile on sorted input (p in 0..100); linear between ranks. */
export function percentile(values: number[], p: number): number {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** min / p50 / p95 / max, rounded, for `detail`. */
export function spread(values: number[], digits = 4): Record<string, number> {
  return {
    min: round(Math.min(...values), digits),
    p50: round(median(values), digits),
    p95: round(percentile(values, 95), digits),
    max: round(Math.max(...values), digits),
  };
}

// ---- processes ----------------------------------------------------------------------------------

export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Spawn → exit (the 'close' event), in seconds. */
  seconds: number;
}

/** Runs `process.execPath args` to completion and times it from spawn to exit. */
export function runNode(args: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, seconds });
    });
  });
}

/** No inherited secrets or settings: PATH, HOME, TMPDIR, the benchmarks' own state directory, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? os.homedir(),
    XDG_STATE_HOME: useBenchStateHome(),
  };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return { ...env, ...extra };
}

// ---- workspaces ---------------------------------------------------------------------------------

let benchStateHome: string | undefined;

/**
 * The benchmarks' own XDG_STATE_HOME, made once per process and removed when it exits, and set in
 * process.env for what runs in-process or inherits it: the checkpoint shadows of their temporary
 * workspaces (docs/trust.md#checkpoints-and-rewind) never pile up in the person's ~/.local/state.
 */
export function useBenchStateHome(): string {
  if (!benchStateHome) {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-bench-state-')));
    benchStateHome = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  process.env.XDG_STATE_HOME = benchStateHome;
  return benchStateHome;
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * What replacing a small file through a temp file and a rename costs here now, in µs (the median of
 * 200, in the temporary directory the runs use): how the task board and the checkpoints write. A
 * quiet local disk does it in tens of µs; a busy or throttled one in hundreds, and a run that writes a
 * few files per task is then slower for it. Reported beside wall times so that a reader can tell.
 */
export function fileReplaceMicros(): number {
  const { dir, cleanup } = tempDir('huddle-bench-fs-');
  try {
    const body = `${JSON.stringify({ id: 1, subject: 'a task', status: 'pending', description: 'x'.repeat(200) }, null, 2)}\n`;
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const file = path.join(dir, `task_${i % 20}.json`);
      const started = performance.now();
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
      times.push((performance.now() - started) * 1000);
    }
    return median(times.slice(20));
  } finally {
    cleanup();
  }
}

// ---- CPU time from /proc --------------------------------------------------------------------------

let clockTicks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (sysconf(_SC_CLK_TCK); 100 on Linux). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    clockTicks = 100;
    try {
      // getconf is in every libc install; fall back to the Linux default.
      const out = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim();
      const n = Number(out);
      if (Number.isInteger(n) && n > 0) clockTicks = n;
    } catch {
      // keep 100
    }
  }
  return clockTicks;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime in clock ticks. */
  ticks: number;
}

function readStat(pid: number | string): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ..." — comm may hold spaces or parentheses: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field n is rest[n - 3]; utime = 14, stime = 15, ppid = 4.
  return { pid: Number(pid), ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) };
}

/** utime + stime (seconds) of this process's children that have exited and been waited for (git, bash…). */
export function reapedChildrenCpuSeconds(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // cutime = field 16, cstime = field 17.
  return (Number(rest[13]) + Number(rest[14])) / ticksPerSecond();
}

/** utime + stime (seconds) of `pid` and every live descendant. */
export function treeCpuSeconds(pid: number): number {
  const all: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat) all.push(stat);
  }
  const children = new Map<number, ProcStat[]>();
  for (const stat of all) {
    const list = children.get(stat.ppid) ?? [];
    list.push(stat);
    children.set(stat.ppid, list);
  }
  let ticks = 0;
  const root = all.find((stat) => stat.pid === pid);
  if (!root) throw new Error(`process ${pid} is gone`);
  const stack = [root];
  while (stack.length) {
    const next = stack.pop()!;
    ticks += next.ticks;
    stack.push(...(children.get(next.pid) ?? []));
  }
  return ticks / ticksPerSecond();
}

/** Resident memory (bytes) of `pid` and every live descendant, from /proc/<pid>/status VmRSS. */
export function treeRssBytes(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat) parents.set(stat.pid, stat.ppid);
  }
  let bytes = 0;
  for (const [child] of parents) {
    let at: number | undefined = child;
    while (at !== undefined && at !== pid && at > 1) at = parents.get(at);
    if (at !== pid) continue;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child}/status`, 'utf8'))?.[1];
      bytes += Number(kb ?? 0) * 1024;
    } catch {
      // The process ended while we looked.
    }
  }
  return bytes;
}

/** CPU use of a process tree over `ms` of wall time, as % of one core. */
export async function cpuPercentOver(pid: number, ms: number): Promise<{ percent: number; cpuSeconds: number; wallSeconds: number }> {
  const cpu0 = treeCpuSeconds(pid);
  const t0 = performance.now();
  await sleep(ms);
  const cpu1 = treeCpuSeconds(pid);
  const wallSeconds = (performance.now() - t0) / 1000;
  const cpuSeconds = cpu1 - cpu0;
  return { percent: (cpuSeconds / wallSeconds) * 100, cpuSeconds, wallSeconds };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` every `everyMs` until it returns something truthy. */
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function log(line: string): void {
  process.stderr.write(`  ${line}\n`);
}
