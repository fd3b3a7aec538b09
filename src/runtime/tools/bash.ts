// The shell tool. The command runs in its own session and process group so that a timeout or an
// interrupt can end everything it started, not just the shell, and so that nothing it runs can
// grab the console's terminal.
import { z } from 'zod';
import { childEnvironment, plainSpawn } from '../process/spawn.js';
import { OutputCollector } from './output-cap.js';
import { oneLine } from './registry.js';
import { defineTool, type ToolResult } from './types.js';

export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
/** Between SIGTERM and SIGKILL: long enough for a clean shutdown, short enough not to stall the agent. */
const KILL_GRACE_MS = 2_000;
/** How long to keep reading after the shell is gone, when a background process holds its output open. */
const PIPE_GRACE_MS = 500;

const input = z.object({
  command: z.string().min(1).describe('The shell command to run with `bash -c`, in the workspace root.'),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `Milliseconds after which the command and everything it started are killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}).`,
    ),
});

export const bashTool = defineTool({
  name: 'bash',
  description:
    'Runs a shell command with `bash -c` in the workspace root and returns its combined stdout and stderr, ' +
    'then a line with the exit code. Stdin is closed, so interactive programs fail instead of waiting. ' +
    'On timeout or interrupt the command and all processes it started are killed. Long output is cut in the middle. ' +
    'Prefer read_file, glob and grep for reading and searching files.',
  input,
  summarize: (args) => oneLine(args.command),
  async run(args, context): Promise<ToolResult> {
    const timeoutMs = args.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    if (context.signal.aborted) return { content: '[interrupted]', isError: true };
    const outcome = await runShell(args.command, context.workspace.root, timeoutMs, context.signal);

    const parts: string[] = [];
    const output = outcome.output.replace(/\n$/, '');
    if (output) parts.push(output);
    if (outcome.pipesAbandoned) {
      parts.push('[a background process kept the output open; stopped reading when the shell exited]');
    }
    let isError = true;
    if (outcome.stop === 'timeout') parts.push(`[killed after ${timeoutMs} ms timeout]`);
    else if (outcome.stop === 'interrupted') parts.push('[interrupted]');
    else if (outcome.exitCode !== undefined) {
      parts.push(`[exit code ${outcome.exitCode}]`);
      isError = outcome.exitCode !== 0;
    } else parts.push(`[killed by ${outcome.signal ?? 'a signal'}]`);
    if (!output && outcome.stop === undefined && !outcome.pipesAbandoned) parts.unshift('(no output)');
    return { content: parts.join('\n'), isError };
  },
});

interface ShellOutcome {
  output: string;
  exitCode?: number;
  signal?: string;
  /** Set when we ended the command rather than it ending by itself. */
  stop?: 'timeout' | 'interrupted';
  pipesAbandoned: boolean;
}

async function runShell(command: string, cwd: string, timeoutMs: number, signal: AbortSignal): Promise<ShellOutcome> {
  // Two pipes would lose the order between stdout and stderr lines, so a first shell points
  // stderr at stdout and then becomes (exec, same pid) the shell that runs the command untouched.
  // Plain spawn rather than execa: execa's stream machinery cost ~4 ms a command (bench/rounds.ts).
  const collector = new OutputCollector();
  const decoder = new TextDecoder();
  let stop: ShellOutcome['stop'];
  let pipesAbandoned = false;
  const timers: NodeJS.Timeout[] = [];
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(fn, ms);
    timers.push(timer);
    return timer;
  };

  let subprocess: ReturnType<typeof plainSpawn>;
  try {
    subprocess = plainSpawn('bash', ['-c', 'exec 2>&1; exec bash -c "$1"', 'bash', command], {
      cwd,
      env: childEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
      // setsid(): a new process group to kill as a whole, and no controlling terminal to prompt on.
      detached: true,
    });
  } catch (error) {
    return { output: `cannot start bash: ${(error as Error).message}`, pipesAbandoned };
  }
  const pid = subprocess.pid;
  // stderr carries only what the first shell says before its redirection, should there ever be any.
  subprocess.stdout?.on('data', (chunk: Uint8Array) => collector.push(decoder.decode(chunk, { stream: true })));
  subprocess.stderr?.on('data', (chunk: Uint8Array) => collector.push(decoder.decode(chunk, { stream: true })));

  // A grandchild that outlives the shell (or escapes the group) may hold the pipes open forever;
  // once the shell is gone we read for a short while, then let go.
  const abandonPipes = () => {
    if (subprocess.stdout?.destroyed && subprocess.stderr?.destroyed) return;
    pipesAbandoned = stop === undefined;
    subprocess.stdout?.destroy();
    subprocess.stderr?.destroy();
  };

  const end = (reason: 'timeout' | 'interrupted') => {
    if (stop !== undefined || pid === undefined) return;
    stop = reason;
    killGroup(pid, 'SIGTERM');
    // Not tied to this call's lifetime: the shell may be gone while the group still lingers.
    setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    later(KILL_GRACE_MS + PIPE_GRACE_MS, abandonPipes);
  };
  later(timeoutMs, () => end('timeout'));
  const onAbort = () => end('interrupted');
  signal.addEventListener('abort', onAbort, { once: true });

  if (pid !== undefined) liveGroups.add(pid);
  try {
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      subprocess.once('error', (error) => resolve({ code: null, signal: null, error }));
      subprocess.once('exit', (code, exitSignal) => {
        exit = { code, signal: exitSignal };
        later(PIPE_GRACE_MS, abandonPipes);
      });
      subprocess.once('close', (code, closeSignal) => resolve(exit ?? { code, signal: closeSignal }));
    });
    collector.push(decoder.decode());
    const outcome: ShellOutcome = { output: collector.text(), stop, pipesAbandoned };
    if (result.code !== null) outcome.exitCode = result.code;
    if (result.signal !== null) outcome.signal = result.signal;
    // A failure to start (no bash, a bad cwd) has neither exit code nor signal.
    if (result.error) outcome.output += `${outcome.output ? '\n' : ''}cannot run bash: ${result.error.message}`;
    return outcome;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    if (pid !== undefined) liveGroups.delete(pid);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

// Commands still running when the console exits must not be left behind as orphans.
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});
