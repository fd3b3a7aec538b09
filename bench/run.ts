// The benchmark runner (`npm run bench`; scripts/bench.mjs bundles and imports this file). Runs
// every group in turn, prints one table, writes bench/results.json. Benchmarks measure; a number
// over its target is reported, not fatal. Only a group that crashes makes the exit code non-zero.
//
// BENCH_ONLY=<regex> runs only the groups whose name matches (then results.json is not written).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchBusAcrossProcesses, benchBusInProcess } from './bus.js';
import { benchClaimsAcrossProcesses, benchClaimsInProcess } from './claims.js';
import { benchPostgresClaims, benchPostgresClaimsFsync, benchPostgresWake } from './postgres.js';
import { benchConsoleIdle, benchConsoleLaunch, benchConsoleStreaming } from './console.js';
import { benchConsoleWordStream } from './console-words.js';
import { type BenchFailure, type BenchResult, ROOT, useBenchStateHome } from './lib.js';
import { benchHeadlessRoundTrip, benchTeamRun, benchVersion } from './startup.js';
import { benchCompaction } from './compaction.js';
import { benchResume } from './resume.js';
import { benchSandbox } from './sandbox.js';
import { benchCheckpoints } from './checkpoints.js';
import { benchCaching } from './caching.js';
import { benchToolRounds } from './rounds.js';
import { benchTeamCost } from './team-cost.js';

const GROUPS: Array<[string, () => Promise<BenchResult[]>]> = [
  ['startup', () => benchVersion(15)],
  ['headless', () => benchHeadlessRoundTrip(10)],
  ['rounds', () => benchToolRounds(10)],
  ['bus', () => benchBusInProcess(500)],
  ['bus-processes', () => benchBusAcrossProcesses(100)],
  ['claims', () => benchClaimsInProcess(2000, 8)],
  ['claims-processes', () => benchClaimsAcrossProcesses(2000, 2, 4)],
  ['claims-10k', () => benchClaimsAcrossProcesses(10_000, 2, 4, 'files')],
  ['postgres-wake', () => benchPostgresWake(200)],
  ['postgres-claims', () => benchPostgresClaims(1000, 5, 2, 4)],
  ['postgres-claims-fsync', () => benchPostgresClaimsFsync(2000, 5, 4, 8)],
  ['team', () => benchTeamRun(5)],
  ['console-launch', () => benchConsoleLaunch(10)],
  ['console-streaming', () => benchConsoleStreaming()],
  ['console-words', () => benchConsoleWordStream()],
  ['console-idle', () => benchConsoleIdle(5000)],
  ['compaction', () => benchCompaction(5)],
  ['resume', () => benchResume()],
  ['sandbox', () => benchSandbox(100)],
  ['checkpoints', () => benchCheckpoints(100, 50)],
  ['caching', () => benchCaching()],
  ['team-cost', () => benchTeamCost()],
];

export async function main(): Promise<number> {
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
  // Every group, in-process or a child, checkpoints into a throwaway state directory, not the person's.
  useBenchStateHome();
  const results: BenchResult[] = [];
  const failures: BenchFailure[] = [];
  const started = performance.now();
  const loadBefore = os.loadavg()[0]!;
  for (const [name, run] of GROUPS) {
    if (only && !only.test(name)) continue;
    const groupStarted = performance.now();
    process.stderr.write(`▸ ${name}\n`);
    try {
      results.push(...(await run()));
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ name, error: message });
      process.stderr.write(`  ✗ ${name} crashed: ${message}\n`);
    }
    process.stderr.write(`  (${((performance.now() - groupStarted) / 1000).toFixed(1)} s)\n`);
  }
  const totalSeconds = (performance.now() - started) / 1000;

  process.stdout.write(`\n${table(results)}\n`);
  for (const failure of failures) process.stdout.write(`CRASHED ${failure.name}: ${failure.error.split('\n')[0]}\n`);
  const missed = results.filter((r) => r.ok === false).length;
  process.stdout.write(
    `${results.length} results, ${results.filter((r) => r.ok === true).length} within target, ${missed} over target, ` +
      `${failures.length} crashed; ${totalSeconds.toFixed(0)} s on Node ${process.version}, ` +
      `load average ${loadBefore.toFixed(2)} → ${os.loadavg()[0]!.toFixed(2)} (${os.cpus().length} CPUs)\n`,
  );

  if (!only) {
    const cpus = os.cpus();
    const file = path.join(ROOT, 'bench', 'results.json');
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      machine: {
        cpus: cpus.length,
        model: cpus[0]?.model ?? 'unknown',
        platform: `${os.platform()} ${os.release()}`,
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        // The 1-minute load average when the run began and ended: other work on the machine skews timings.
        load: { before: loadBefore, after: os.loadavg()[0]! },
      },
      durationSeconds: Math.round(totalSeconds),
      results,
      ...(failures.length ? { failures } : {}),
    };
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  }
  return failures.length ? 1 : 0;
}

function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

function table(results: BenchResult[]): string {
  const rows = [
    ['benchmark', 'value', 'unit', 'target', 'result', 'samples'],
    ...results.map((r) => [
      r.name,
      format(r.value),
      r.unit,
      r.target !== undefined ? `≤ ${r.target}` : r.minimum !== undefined ? `≥ ${r.minimum}` : '',
      r.ok === undefined ? '—' : r.ok ? 'pass' : 'FAIL',
      r.samples === undefined ? '' : String(r.samples),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const right = new Set([1, 3, 5]);
  const line = (row: string[]) =>
    row
      .map((cell, column) => (right.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(rows[0]!), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
