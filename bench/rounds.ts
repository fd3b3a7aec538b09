// Wall time of a headless run of ten tool rounds: `huddle -p` against the fake Messages API, where
// each model response writes a file and runs a shell command, and the eleventh ends the turn. A
// fresh process and workspace each run; what it measures beyond `huddle -p hi` is the cost of a
// round: two tools (a bash spawn), the events and logs they write, and the next request.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { reply, replyText, startFakeApi, text, toolUse, type RecordedRequest } from '../test/helpers/fake-api.js';
import { type BenchResult, CLI, TEST_API_KEY, cleanEnv, log, median, result, runNode, spread, tempDir } from './lib.js';

export const TOOL_ROUNDS = 10;

export async function benchToolRounds(runs = 10): Promise<BenchResult[]> {
  const fake = await startFakeApi();
  fake.respond((request: RecordedRequest) => {
    const done = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === 'assistant').length;
    if (done >= TOOL_ROUNDS) return replyText('All rounds done.');
    const file = `out/round-${done + 1}.txt`;
    return reply(
      text(`Round ${done + 1}.`),
      toolUse('write_file', { path: file, content: `round ${done + 1}\n` }),
      toolUse('bash', { command: `cat ${file}` }),
    );
  });
  const times: number[] = [];
  try {
    const once = async () => {
      const ws = tempDir('huddle-bench-rounds-');
      try {
        const run = await runNode([CLI, '-p', 'run the rounds'], {
          cwd: ws.dir,
          env: cleanEnv({
            ANTHROPIC_API_KEY: TEST_API_KEY,
            ANTHROPIC_BASE_URL: fake.url,
            HUDDLE_RETRY_BASE_MS: '5',
            ...(process.env.BENCH_CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF}` } : {}),
          }),
        });
        if (
          run.code !== 0 ||
          !run.stdout.includes('All rounds done.') ||
          readFileSync(path.join(ws.dir, `out/round-${TOOL_ROUNDS}.txt`), 'utf8') !== `round ${TOOL_ROUNDS}\n`
        ) {
          throw new Error(`the ten-round run exited ${run.code}: ${run.stdout.slice(-300)} ${run.stderr.slice(-1000)}`);
        }
        return run.seconds;
      } finally {
        ws.cleanup();
      }
    };
    await once(); // warm-up: fills the compile cache
    for (let i = 0; i < runs; i++) times.push(await once());
  } finally {
    await fake.close();
  }
  log(`ten tool rounds: ${times.map((t) => t.toFixed(3)).join(' ')}`);
  return [
    result({
      name: `headless, ${TOOL_ROUNDS} tool rounds (write_file + bash each)`,
      value: median(times),
      unit: 's',
      target: 0.3,
      samples: runs,
      stat: 'median wall time, spawn → exit, fresh workspace each',
      note: 'each round: one response calling write_file and bash, then the next request; 11 model calls in all',
      detail: spread(times),
    }),
  ];
}
