// Whole-process wall times of the built CLI: `huddle --version`, `huddle -p hi` against the fake
// Messages API, and the three-task team run headless. Each run is a fresh process (and, for -p, a
// fresh temporary workspace); one unmeasured warm-up run first fills Node's compile cache, which
// every later start of huddle reuses.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { replyText, startFakeApi } from '../test/helpers/fake-api.js';
import { SCENARIO_FINAL, SCENARIO_PROMPT, installScenario } from '../test/helpers/team-harness.js';
import { type BenchResult, CLI, ROOT, TEST_API_KEY, cleanEnv, log, median, result, runNode, spread, tempDir } from './lib.js';

export async function benchVersion(runs = 15): Promise<BenchResult[]> {
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const once = async () => {
    const run = await runNode([CLI, '--version']);
    if (run.code !== 0 || run.stdout.split('\n')[0]!.trim() !== version) {
      // the second line is the sandbox's state
      throw new Error(`huddle --version exited ${run.code} printing ${JSON.stringify(run.stdout)} ${run.stderr}`);
    }
    return run.seconds;
  };
  await once(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  log(`--version: ${times.map((t) => t.toFixed(3)).join(' ')}`);
  return [
    result({
      name: 'startup: huddle --version',
      value: median(times),
      unit: 's',
      target: 0.15,
      samples: runs,
      stat: 'median wall time, spawn → exit',
      detail: spread(times),
    }),
  ];
}

export async function benchHeadlessRoundTrip(runs = 10): Promise<BenchResult[]> {
  const fake = await startFakeApi();
  fake.respond(() => replyText('hello from the fake model'));
  const times: number[] = [];
  try {
    const once = async () => {
      const ws = tempDir('huddle-bench-p-');
      try {
        const run = await runNode([CLI, '-p', 'hi'], {
          cwd: ws.dir,
          env: cleanEnv({ ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5' }),
        });
        if (run.code !== 0 || !run.stdout.includes('hello from the fake model')) {
          throw new Error(`huddle -p hi exited ${run.code}: ${run.stdout} ${run.stderr}`);
        }
        return run.seconds;
      } finally {
        ws.cleanup();
      }
    };
    await once(); // warm-up
    for (let i = 0; i < runs; i++) times.push(await once());
  } finally {
    await fake.close();
  }
  log(`-p hi: ${times.map((t) => t.toFixed(3)).join(' ')}`);
  return [
    result({
      name: 'headless round trip: huddle -p hi',
      value: median(times),
      unit: 's',
      target: 0.4,
      samples: runs,
      stat: 'median wall time, spawn → exit, fresh workspace each',
      note: 'for scale: Claude Code 2.1 takes ~1.1 s for the same round trip on this machine',
      detail: spread(times),
    }),
  ];
}

export async function benchTeamRun(runs = 5): Promise<BenchResult[]> {
  const times: number[] = [];
  const requests: number[] = [];
  for (let i = 0; i < runs; i++) {
    const fake = await startFakeApi();
    installScenario(fake);
    const ws = tempDir('huddle-bench-team-');
    try {
      const run = await runNode([CLI, '-p', SCENARIO_PROMPT], {
        cwd: ws.dir,
        env: cleanEnv({ ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5' }),
        timeoutMs: 90_000,
      });
      if (run.code !== 0 || !run.stdout.includes(SCENARIO_FINAL)) {
        throw new Error(`the three-task team run exited ${run.code}: ${run.stdout.slice(-500)} ${run.stderr.slice(-2000)}`);
      }
      times.push(run.seconds);
      requests.push(fake.requests.length);
    } finally {
      await fake.close();
      ws.cleanup();
    }
  }
  log(`team run: ${times.map((t) => t.toFixed(3)).join(' ')} (model requests: ${requests.join(' ')})`);
  return [
    result({
      name: 'three-task team run: huddle -p (headless)',
      value: median(times),
      unit: 's',
      samples: runs,
      stat: 'median wall time, spawn → exit, fresh workspace each',
      note: 'lead plans 3 tasks (one blocked), spawns alice and bob, they claim, write, report, shut down; fake model answers at once',
      detail: { ...spread(times), modelRequests: median(requests) },
    }),
  ];
}
