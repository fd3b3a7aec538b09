// The shell tool. The command runs in the OS sandbox (../sandbox): it may write only the agent's
// own workspace and a private TMPDIR (nothing at all in plan mode), and cannot see huddle's own
// process. It runs in its own session and process group so that a timeout or an interrupt can
// end everything it started, and so that nothing it runs can grab the console's terminal.
import type { ChildProcess } from 'node:child_process';
import * as z from 'zod';
import {
  childEnv,
  runInSandboxShell,
  sandboxedSpawn,
  sandboxShellsUnavailable,
  sandboxStatus,
  SANDBOX_OFF_WARNING,
  warmSandboxShell,
  type ShellRun,
} from '../sandbox/index.js';
import { OutputCollector } from '../process/output-cap.js';
import { oneLine } from './registry.js';
import type { SandboxStatus } from '../sandbox/status.js';
import { defineTool, type ToolContext, type ToolResult } from './types.js';
import { atExit } from '../process/at-exit.js';

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
    .describe(`Milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}).`),
});

export const bashTool = defineTool({
  name: 'bash',
  effects: ['shell'],
  description:
    'Runs a shell command with `bash -c` in the workspace root and returns its combined stdout and stderr, ' +
    'then a line with the exit code when it is not 0. Stdin is closed, so interactive programs fail instead of waiting. ' +
    'On timeout or interrupt the command and all processes it started are killed. Long output is cut in the middle. ' +
    'It runs in a sandbox: it can write only inside the workspace and /tmp (a private temp dir), and processes left ' +
    'in the background end when the command returns. ' +
    'Prefer read_file, glob and grep for reading and searching files.',
  input,
  summarize: (args) => oneLine(args.command),
  prepare(_args, context): void {
    const status = context.sandbox ?? sandboxStatus();
    // A head start only: a sandbox that cannot start here fails again for the command, which says why.
    if (status.available) void warmSandboxShell(shellRequest(context, status)).catch(() => undefined);
  },
  async run(args, context): Promise<ToolResult> {
    const timeoutMs = args.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    if (context.signal.aborted) return { content: '[interrupted]', isError: true };
    const outcome = await runShell(args.command, context, timeoutMs);
    // A check after the command must not turn the command's own result into a failure; it reports on its own.
    await context.workspace.afterCommand?.().catch(() => undefined);

    const parts: string[] = [];
    const output = outcome.output.replace(/\n$/, '');
    if (output) parts.push(output);
    if (outcome.pipesAbandoned) {
      parts.push('[a background process kept the output open; stopped reading when the shell exited]');
    }
    let isError = true;
    if (outcome.stop === 'timeout') parts.push(`[killed after ${timeoutMs} ms timeout]`);
    else if (outcome.stop === 'interrupted') parts.push('[interrupted]');
    else if (outcome.sandboxEnded) parts.push('[its sandbox ended before the command did]');
    else if (outcome.exitCode !== undefined) {
      // Success is the result's is_error: false; a line saying 0 is tokens on every call of every agent.
      if (outcome.exitCode !== 0) parts.push(`[exit code ${outcome.exitCode}]`);
      isError = outcome.exitCode !== 0;
    } else parts.push(`[killed by ${outcome.signal ?? 'a signal'}]`);
    if (!output && outcome.stop === undefined && !outcome.pipesAbandoned) parts.unshift('(no output)');
    if (outcome.note) parts.push(`[${outcome.note}]`);
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
  /** The command's kept-open sandbox ended before the command did (../sandbox/sandbox-shell.ts). */
  sandboxEnded?: boolean;
  note?: string;
}

/** The sandbox a command of this call gets: the same for the command and for a shell started ahead of it. */
export function shellRequest(context: ToolContext, status: SandboxStatus) {
  const { workspace } = context;
  const roots = workspace.sandboxRoots();
  return {
    cwd: workspace.root,
    writable: roots.writable,
    readOnly: roots.readOnly,
    readable: roots.readable ?? [],
    mode: context.permissionMode === 'plan' ? ('read-only' as const) : ('write' as const),
    status,
    owner: context.agent,
    env: childEnv(),
  };
}

/** Said once per process, in the event stream (status line, headless stderr), when commands run unsandboxed by necessity. */
let warnedUnsandboxed = false;

async function runShell(command: string, context: ToolContext, timeoutMs: number): Promise<ShellOutcome> {
  const { signal } = context;
  // The session's status, carried by the context (agents/tools/tool-pipeline.ts); the process's for a context made elsewhere.
  const status = context.sandbox ?? sandboxStatus();
  if (!status.available && !status.onPurpose && !warnedUnsandboxed) {
    warnedUnsandboxed = true;
    context.events.emit('warning', { message: `${SANDBOX_OFF_WARNING}: commands run unsandboxed (${status.reason}); HUDDLE_SANDBOX=off silences this` });
  }
  const request = shellRequest(context, status);
  // The agent's sandbox kept open between its commands (../sandbox/sandbox-shell.ts), where it applies.
  if (status.available) {
    const output = outputSink();
    // A shell that cannot be set up (its bash copy, the options) is no failure of the command: it runs one-shot below, which says what is wrong.
    const kept = await runInSandboxShell(command, request, output.collect).catch(() => undefined);
    if (kept) {
      const result = await supervised(kept, signal, timeoutMs);
      const text = output.text();
      if (!result.notStarted || result.stop) return toOutcome(text, result, kept.note);
      // The shell ended by itself before it ran the command: it cannot start here (a noexec temp
      // dir), so this command and the rest run in sandboxes of their own.
      sandboxShellsUnavailable(oneLine(text, 200) || 'a sandbox shell ended before it was ready');
    }
  }

  // stdout carries the command's output; stderr only what the sandbox itself says (a bind that failed).
  const output = outputSink();

  // Two pipes would lose the order between stdout and stderr lines, so the sandbox's first shell
  // points stderr at stdout (mergeStderr) and then becomes (exec, same pid) the shell that runs the command untouched.
  let subprocess: ChildProcess;
  let note: string | undefined;
  try {
    const started = await sandboxedSpawn(['bash', '-c', command], {
      ...request,
      mergeStderr: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // setsid(): a new process group to kill as a whole, and no controlling terminal to prompt on.
      detached: true,
    });
    subprocess = started.child;
    note = started.prepared.note;
  } catch (error) {
    return { output: `cannot start the command: ${(error as Error).message}`, pipesAbandoned: false };
  }
  const pid = subprocess.pid;
  subprocess.stdout?.on('data', output.collect);
  subprocess.stderr?.on('data', output.collect);

  let stop: ShellOutcome['stop'];
  let pipesAbandoned = false;
  const timers: NodeJS.Timeout[] = [];
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(fn, ms);
    timers.push(timer);
    return timer;
  };

  // A grandchild that outlives the shell (or escapes the group) may hold the pipes open forever;
  // once the shell is gone we read for a short while, then let go.
  const abandonPipes = () => {
    if (subprocess.stdout?.destroyed && subprocess.stderr?.destroyed) return;
    pipesAbandoned = stop === undefined;
    subprocess.stdout?.destroy();
    subprocess.stderr?.destroy();
  };
  subprocess.once('exit', () => later(PIPE_GRACE_MS, abandonPipes));

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
    const result = await finished(subprocess);
    return toOutcome(output.text(), { ...result, stop, pipesAbandoned }, note);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    if (pid !== undefined) liveGroups.delete(pid);
  }
}

/** A command's output as it comes, decoded as UTF-8 across pieces and capped; `text()` once, at the end. */
function outputSink(): { collect: (chunk: Uint8Array) => void; text: () => string } {
  const collector = new OutputCollector();
  const decoder = new TextDecoder();
  return {
    collect: (chunk) => collector.push(decoder.decode(chunk, { stream: true })),
    text: () => {
      collector.push(decoder.decode());
      return collector.text();
    },
  };
}

type Ended = {
  exitCode?: number;
  signal?: string;
  error?: string;
  stop?: ShellOutcome['stop'];
  pipesAbandoned?: boolean;
  sandboxEnded?: boolean;
  notStarted?: boolean;
};

function toOutcome(output: string, result: Ended, note: string | undefined): ShellOutcome {
  const outcome: ShellOutcome = { output, pipesAbandoned: result.pipesAbandoned ?? false, ...(note ? { note } : {}) };
  if (result.stop) outcome.stop = result.stop;
  if (result.sandboxEnded) outcome.sandboxEnded = true;
  if (result.exitCode !== undefined) outcome.exitCode = result.exitCode;
  if (result.signal !== undefined) outcome.signal = result.signal;
  // A failure to start (no bash, no bwrap, a bad cwd) has neither.
  if (result.error) outcome.output += `${outcome.output ? '\n' : ''}cannot start the command: ${result.error}`;
  return outcome;
}

/** A command in a kept-open sandbox: a timeout or an interrupt ends the whole sandbox, as it would a one-shot one. */
async function supervised(run: ShellRun, signal: AbortSignal, timeoutMs: number): Promise<Ended> {
  let stop: ShellOutcome['stop'];
  const end = (reason: 'timeout' | 'interrupted') => {
    if (stop !== undefined) return;
    stop = reason;
    run.kill('SIGTERM');
    setTimeout(() => run.kill('SIGKILL'), KILL_GRACE_MS).unref();
    // A process stuck in the kernel can hold the pipes open past SIGKILL: stop waiting for it then.
    setTimeout(() => run.abandon(), KILL_GRACE_MS + PIPE_GRACE_MS).unref();
  };
  const timer = setTimeout(() => end('timeout'), timeoutMs);
  const onAbort = () => end('interrupted');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const { sandboxEnded, ...result } = await run.done;
    // The sandbox ended under a command nobody stopped (killed from outside, out of memory): said as such.
    if (sandboxEnded && stop === undefined) return { ...result, sandboxEnded };
    return { ...result, stop };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** Resolves when the child has exited and its output pipes are closed (or were let go). */
function finished(child: ChildProcess): Promise<{ exitCode?: number; signal?: string; error?: string }> {
  return new Promise((resolve) => {
    let error: string | undefined;
    child.once('error', (e) => {
      error = e.message;
      if (child.exitCode === null && child.pid === undefined) resolve({ error });
    });
    child.once('close', (code, signal) => {
      resolve({ ...(code !== null ? { exitCode: code } : {}), ...(signal ? { signal } : {}), ...(error ? { error } : {}) });
    });
  });
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
atExit(() => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});
