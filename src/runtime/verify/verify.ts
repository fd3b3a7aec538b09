// Verify gates (docs/contract.md#tasks): a task becomes completed only when its verify command exits 0 in
// the completing agent's workspace. This runs the command and says what happened in words the
// agent can act on: the command, how it ended, and the head and tail of its output.
import type { SpawnLike } from '../process/spawn.js';
import { runCommand } from '../process/run-command.js';

export const DEFAULT_VERIFY_TIMEOUT_MS = 600_000;
/** Enough to show a failing test and the summary at the end, small enough for the model's context. */
export const VERIFY_OUTPUT_CHARS = 8_000;

export interface VerifyOptions {
  command: string;
  /** The completing agent's workspace (its worktree, for a worktree teammate). */
  cwd: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  spawn?: SpawnLike;
  env?: Record<string, string>;
  maxChars?: number;
}

export interface VerifyResult {
  ok: boolean;
  command: string;
  exitCode: number | undefined;
  timedOut: boolean;
  interrupted: boolean;
  durationMs: number;
  /** stdout and stderr in the order written, head and tail kept. */
  output: string;
  /** One line: `verify passed: npm test (exit 0, 3.2 s)`. */
  summary: string;
}

export async function runVerify(options: VerifyOptions): Promise<VerifyResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS;
  const outcome = await runCommand({
    command: options.command,
    cwd: options.cwd,
    timeoutMs,
    mergeOutput: true,
    maxChars: options.maxChars ?? VERIFY_OUTPUT_CHARS,
    ...(options.env ? { env: options.env } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.spawn ? { spawn: options.spawn } : {}),
  });
  const ok = outcome.exitCode === 0 && !outcome.timedOut && !outcome.aborted && outcome.startError === undefined;
  const how = outcome.startError
    ? `could not start: ${outcome.startError}`
    : outcome.timedOut
      ? `killed after the ${formatDuration(timeoutMs)} timeout`
      : outcome.aborted
        ? 'interrupted'
        : outcome.exitCode !== undefined
          ? `exit ${outcome.exitCode}, ${formatDuration(outcome.durationMs)}`
          : `killed by ${outcome.signal ?? 'a signal'}`;
  return {
    ok,
    command: options.command,
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    interrupted: outcome.aborted,
    durationMs: outcome.durationMs,
    output: outcome.stdout,
    summary: `verify ${ok ? 'passed' : 'failed'}: ${options.command} (${how})`,
  };
}

/** The tool error a refused completion returns, so the agent can fix the cause and try again. */
export function verifyFailureMessage(taskId: number, result: VerifyResult): string {
  const output = result.output.trim() ? `\nIts output (head and tail):\n${result.output.replace(/\n$/, '')}` : '\n(It printed nothing.)';
  return `Task #${taskId} was not completed: ${result.summary}. Fix what fails and update the task again.${output}`;
}

/** Which verify command gates a task: its own, else its completer's role's, else the settings' default. */
export function verifyCommandFor(
  task: { verify?: string | undefined },
  role: string | undefined,
  settings: { command?: string | undefined; roles?: Record<string, string> | undefined } | undefined,
): string | undefined {
  const pick = (value: string | undefined) => (value?.trim() ? value : undefined);
  return pick(task.verify) ?? (role ? pick(settings?.roles?.[role]) : undefined) ?? pick(settings?.command);
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
}
