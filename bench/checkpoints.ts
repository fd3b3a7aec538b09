// The checkpoint's cost per tool call (runtime/workspace/checkpoints.ts): what the wrapper around a
// write-capable tool does (agents/tools/checkpointed-tools.ts: the repository's health, a checkpoint, the
// health again) in a repository of 2,000 committed files, 100 times with nothing changed and 50
// times with one file changed before each call. Targets: ≤ 25 ms median unchanged (the common case:
// one `git add -A` against the shadow's index, i.e. one git process: ~9 ms on a quiet machine, and
// less than the bash call it comes with, whose own process costs ~17 ms here unsandboxed), ≤ 60 ms with
// one file changed (a new checkpoint: git add, write-tree, two objects written by huddle).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Checkpoints } from '../src/runtime/workspace/checkpoints.js';
import { repairGitIfBroken } from '../src/runtime/workspace/rewind.js';
import { type BenchResult, log, median, result, spread, tempDir } from './lib.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

export async function benchCheckpoints(unchangedRuns = 100, changedRuns = 50): Promise<BenchResult[]> {
  const ws = tempDir('huddle-bench-checkpoints-');
  const state = tempDir('huddle-bench-checkpoint-state-');
  const saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = state.dir;
  try {
    for (let d = 0; d < 40; d++) {
      mkdirSync(path.join(ws.dir, `dir${d}`));
      for (let f = 0; f < 50; f++) writeFileSync(path.join(ws.dir, `dir${d}`, `file${f}.ts`), `export const value${d}_${f} = ${d * 50 + f};\n`.repeat(20));
    }
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: ws.dir, env: GIT_ENV });
    execFileSync('git', ['add', '-A'], { cwd: ws.dir, env: GIT_ENV });
    execFileSync('git', ['commit', '-q', '-m', 'two thousand files'], { cwd: ws.dir, env: GIT_ENV });
    const store = new Checkpoints(ws.dir);
    const call = async (): Promise<number> => {
      const started = performance.now();
      await repairGitIfBroken(store);
      await store.take({ agent: 'bench', tool: 'bash', summary: 'true' });
      await repairGitIfBroken(store);
      return performance.now() - started;
    };
    const first = await call(); // the first checkpoint: every object copied
    await call();
    const unchanged: number[] = [];
    for (let i = 0; i < unchangedRuns; i++) unchanged.push(await call());
    const changed: number[] = [];
    for (let i = 0; i < changedRuns; i++) {
      writeFileSync(path.join(ws.dir, 'dir7', 'file7.ts'), `export const edited = ${i};\n`);
      changed.push(await call());
    }
    log(`checkpoints: first ${first.toFixed(0)} ms, unchanged median ${median(unchanged).toFixed(2)} ms, one file changed ${median(changed).toFixed(2)} ms`);
    return [
      result({
        name: 'checkpoint per tool call, nothing changed (2,000 files)',
        value: median(unchanged),
        unit: 'ms',
        target: 25,
        samples: unchangedRuns,
        stat: 'median: health check, checkpoint, health check',
        detail: spread(unchanged),
      }),
      result({
        name: 'checkpoint per tool call, one file changed (2,000 files)',
        value: median(changed),
        unit: 'ms',
        target: 60,
        samples: changedRuns,
        stat: 'median, one file edited before each call',
        detail: spread(changed),
      }),
      result({
        name: 'checkpoint, the first of a workspace (2,000 files)',
        value: first,
        unit: 'ms',
        samples: 1,
        stat: 'one run: every file and object copied',
      }),
    ];
  } finally {
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
    ws.cleanup();
    state.cleanup();
  }
}
