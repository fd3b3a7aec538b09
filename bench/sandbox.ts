// The sandbox's cost per bash call: the bash tool running `true` in a temporary workspace, 100
// times sandboxed (bubblewrap) and 100 times with HUDDLE_SANDBOX=off, interleaved so that load on
// the machine falls on both alike. Goal: at most 15 ms added per call (median against median).
import { agentEmitter, EventHub } from '../src/runtime/events/events.js';
import { sandboxStatus } from '../src/runtime/sandbox/index.js';
import { bashTool } from '../src/runtime/tools/bash.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { type BenchResult, log, median, result, spread, tempDir } from './lib.js';

export async function benchSandbox(runs = 100): Promise<BenchResult[]> {
  const status = sandboxStatus();
  if (!status.available) throw new Error(`no sandbox here (${status.reason}); apt-get install bubblewrap`);
  const ws = tempDir('huddle-bench-sandbox-');
  const context = { workspace: new Workspace(ws.dir), agent: 'bench', signal: new AbortController().signal, events: agentEmitter(new EventHub(), 'bench') };
  const once = async (sandboxed: boolean): Promise<number> => {
    if (sandboxed) delete process.env.HUDDLE_SANDBOX;
    else process.env.HUDDLE_SANDBOX = 'off';
    const started = performance.now();
    const out = await bashTool.run({ command: 'true' }, context);
    const ms = performance.now() - started;
    if (typeof out !== 'object' || out.isError) throw new Error(`bash true failed: ${JSON.stringify(out)}`);
    return ms;
  };
  const saved = process.env.HUDDLE_SANDBOX;
  const on: number[] = [];
  const off: number[] = [];
  try {
    await once(true); // warm-up: the probe, the private dirs
    await once(false);
    for (let i = 0; i < runs; i++) {
      on.push(await once(true));
      off.push(await once(false));
    }
  } finally {
    if (saved === undefined) delete process.env.HUDDLE_SANDBOX;
    else process.env.HUDDLE_SANDBOX = saved;
    ws.cleanup();
  }
  const added = median(on) - median(off);
  log(`sandbox: median ${median(on).toFixed(2)} ms sandboxed, ${median(off).toFixed(2)} ms without (${status.line})`);
  return [
    result({
      name: 'sandbox: bash call, sandboxed',
      value: median(on),
      unit: 'ms',
      samples: runs,
      stat: 'median wall time of the bash tool running `true`',
      detail: spread(on),
    }),
    result({ name: 'sandbox: bash call, unsandboxed', value: median(off), unit: 'ms', samples: runs, stat: 'median, HUDDLE_SANDBOX=off', detail: spread(off) }),
    result({
      name: 'sandbox: added per bash call',
      value: added,
      unit: 'ms',
      target: 15,
      samples: runs,
      stat: 'median sandboxed − median unsandboxed',
      note: status.line,
    }),
  ];
}
