// Runs one shell command to completion for huddle itself (a hook, a verify gate): input on stdin,
// bounded output, a timeout and an abort that end the command's whole process tree. Never throws
// for the command's own failures; a failure to start is reported in the outcome.
import type { ChildProcess } from 'node:child_process';
import { OutputCollector } from './output-cap.js';
import { childEnvironment, killGroup, plainSpawn, type SpawnLike } from './spawn.js';
import { atExit } from './at-exit.js';

/** Between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** How long to keep reading after the shell is gone, when a background process holds its output open. */
const PIPE_GRACE_MS = 500;

export interface RunCommandOptions {
  /** Run with `bash -c`. */
  command: string;
  cwd: string;
  /** The whole environment (default: huddle's, less its secrets). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  spawn?: SpawnLike;
  /** One stream with stdout and stderr in the order written (stderr stays empty). */
  mergeOutput?: boolean;
  /** Characters kept per stream: head and tail, the middle cut with a note. */
  maxChars?: number;
}

export interface CommandOutcome {
  exitCode: number | undefined;
  signal: string | undefined;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Set when the command could not be started at all. */
  startError?: string;
}

export async function runCommand(options: RunCommandOptions): Promise<CommandOutcome> {
  const started = performance.now();
  const spawn = options.spawn ?? plainSpawn;
  const maxChars = options.maxChars ?? 30_000;
  // Merging: a first shell points stderr at stdout, then becomes (exec) the shell running the command.
  const args = options.mergeOutput ? ['-c', 'exec 2>&1; exec bash -c "$1"', 'bash', options.command] : ['-c', options.command];
  const stdout = new OutputCollector(maxChars);
  const stderr = new OutputCollector(maxChars);
  let timedOut = false;
  let aborted = false;

  if (options.signal?.aborted) {
    return { exitCode: undefined, signal: undefined, timedOut, aborted: true, stdout: '', stderr: '', durationMs: 0 };
  }

  let child: ChildProcess;
  try {
    child = await spawn('bash', args, {
      cwd: options.cwd,
      env: options.env ?? childEnvironment(),
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, to end as a whole; and no controlling terminal to prompt on.
      detached: true,
    });
  } catch (error) {
    return { exitCode: undefined, signal: undefined, timedOut, aborted, stdout: '', stderr: '', durationMs: 0, startError: (error as Error).message };
  }
  return new Promise<CommandOutcome>((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    if (child.pid !== undefined) liveGroups.add(child.pid);
    const decoders = [new TextDecoder(), new TextDecoder()];
    child.stdout?.on('data', (chunk: Uint8Array) => stdout.push(decoders[0]!.decode(chunk, { stream: true })));
    child.stderr?.on('data', (chunk: Uint8Array) => stderr.push(decoders[1]!.decode(chunk, { stream: true })));
    // A command that never reads its stdin closes the pipe early: that is not our error.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');

    const end = (why: 'timeout' | 'abort') => {
      if (timedOut || aborted) return;
      if (why === 'timeout') timedOut = true;
      else aborted = true;
      killGroup(child.pid, 'SIGTERM');
      setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    timers.push(setTimeout(() => end('timeout'), options.timeoutMs));
    const onAbort = () => end('abort');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the spawn was being prepared: the event has been and gone.
    if (options.signal?.aborted) onAbort();

    let startError: string | undefined;
    child.once('error', (error) => {
      startError = error.message;
      finish(undefined, undefined);
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // A grandchild may keep the pipes open; read a little longer, then let go.
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, signal);
        }, PIPE_GRACE_MS),
      );
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => finish(exit?.code ?? code, exit?.signal ?? signal));

    let done = false;
    function finish(code: number | null | undefined, signal: NodeJS.Signals | null | undefined) {
      if (done) return;
      done = true;
      if (child.pid !== undefined) liveGroups.delete(child.pid);
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      stdout.push(decoders[0]!.decode());
      stderr.push(decoders[1]!.decode());
      const outcome: CommandOutcome = {
        exitCode: code ?? undefined,
        signal: signal ?? undefined,
        timedOut,
        aborted,
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: Math.round(performance.now() - started),
      };
      if (startError !== undefined) outcome.startError = startError;
      resolve(outcome);
    }
  });
}

// Commands still running when huddle exits must not be left behind as orphans.
const liveGroups = new Set<number>();
atExit(() => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});
