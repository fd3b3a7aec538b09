// A sandbox kept open between one agent's shell commands. Starting bubblewrap costs a fork of
// huddle's whole process and ~10 ms of namespace and mount setup per command; a shell server
// inside a sandbox that stays open runs the next command for the price of its own bash.
//
// It must be the sandbox a command would get on its own (docs/trust.md#secrets-and-files):
// - The options are worked out before every command as for a one-shot sandbox, the files and
//   directories they bind are identified by device and inode, and the sandbox's mount table is
//   read from the host: a shell whose options differ, one of whose binds was replaced on the host
//   since (a bind follows the file it was made on, and goes when that file is renamed over or
//   unlinked), or into which the host's later mounts have propagated, is closed and a new one
//   started. None serves longer than ten minutes.
// - The server is the sandbox's PID 1 (nothing inside can signal it) and runs from a copy of bash
//   it cannot read (not dumpable: nothing inside can read its memory, trace it or open its
//   descriptors). After each command it kills every other process in the sandbox and waits until
//   they are gone, then reports the exit code after a random nonce the command is not given.
// - Anything odd (output between commands, processes still there, the server gone mid-command),
//   a timeout or an interrupt closes the whole sandbox; the next command starts a new one.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { killGroup } from '../process/spawn.js';
import { unreadableCopy } from './private-dirs.js';
import { prepareSandboxed, type PreparedCommand } from './spawn.js';
import type { SandboxRequest } from './options.js';
import { atExit } from '../process/at-exit.js';

/** Where the server's unreadable bash is inside (/dev is the sandbox's own tmpfs: no mount point left on the host). */
const SERVER_INSIDE = '/dev/.huddle-shell';

/**
 * The server: reads `nonce NUL command NUL` pairs, runs each command as `bash -c` (stdin closed,
 * stderr into stdout), kills whatever the command left (kill(-1) from PID 1 reaches every other
 * process of the namespace) and waits, boundedly, until its /proc lists only itself; then says the
 * exit code and how many processes were left after the nonce. First it says it is ready (a sandbox
 * that ends before that never ran the command). Its variables start unset and unexported (`set +a`
 * against SHELLOPTS=allexport), so the command's environment holds none of them. POSIX mode: it
 * reads no BASH_ENV (the command's own bash does); --norc: nor ~/.bashrc, which bash reads when its
 * stdin is a socket (as for sshd) and SHLVL is unset, and a piped stdin from Node is a socket.
 */
const SERVER =
  "set +a; unset HUDDLE_SHELL_SERVER nonce command code n; printf '\\0ready\\n'; " +
  "while IFS= read -r -d '' nonce && IFS= read -r -d '' command; do " +
  'bash -c "$command" </dev/null 2>&1; code=$?; ' +
  'kill -s KILL -- -1 2>/dev/null; ' +
  'n=0; while set -- /proc/[0-9]*; [ $# -gt 1 ] && [ $n -lt 20000 ]; do n=$((n+1)); done; ' +
  'printf \'\\0%s %s %s\\n\' "$nonce" "$code" "$#"; ' +
  'done';

/** How long an idle shell stays open: a few model calls' worth, then its processes go. */
const IDLE_MS = 60_000;
/** The longest a shell serves: what changes on the host unseen (a mount, a file) does not last long. */
const MAX_AGE_MS = 10 * 60_000;
const READY = Buffer.from('\0ready\n');

export type ShellResult = {
  exitCode?: number;
  signal?: string;
  error?: string;
  sandboxEnded?: boolean;
  /** The sandbox ended before its shell was ready: the command never ran (a noexec temp dir, no bash). */
  notStarted?: boolean;
};

export interface ShellRun {
  /** Resolves once the command has ended (its exit code) or its sandbox has. */
  done: Promise<ShellResult>;
  /** Ends the command by ending the whole sandbox (its process group). */
  kill: (signal: NodeJS.Signals) => void;
  /** Stops waiting for a sandbox whose pipes stay open after it was killed (a process stuck in the kernel). */
  abandon: () => void;
  /** What prepareSandboxed said for this command (network notes). */
  note?: string;
}

interface Current {
  marker: Buffer;
  held: Buffer;
  output: (chunk: Uint8Array) => void;
  resolve: (result: ShellResult) => void;
}

class SandboxShell {
  readonly #child: ChildProcess;
  #current: Current | undefined;
  #closed = false;
  #idle: NodeJS.Timeout | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #error: string | undefined;
  #ready = false;
  #readyHeld = Buffer.alloc(0);
  readonly #startedAt = Date.now();
  /** The sandbox's mount table when its shell said it was ready (read on the host: the server is not dumpable, its mountinfo is readable). */
  #mounts: string | undefined;
  #started!: () => void;
  /** Resolves once the shell is ready for a command, or the sandbox has ended. */
  readonly started = new Promise<void>((resolve) => (this.#started = resolve));
  #gone!: () => void;
  /** Resolves once bwrap and everything in the sandbox have exited. */
  readonly gone = new Promise<void>((resolve) => (this.#gone = resolve));

  constructor(
    readonly key: string,
    prepared: PreparedCommand & { fd3: Buffer },
    cwd: string,
    private readonly forget: (shell: SandboxShell) => void,
  ) {
    this.#child = spawn(prepared.file, prepared.args, {
      cwd,
      env: prepared.env,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      // setsid(): the sandbox is a process group of its own, killed as a whole, with no terminal.
      detached: true,
    });
    const options = this.#child.stdio[3] as NodeJS.WritableStream | null;
    options?.on?.('error', () => undefined); // bwrap gone before reading: its exit says why
    options?.end(prepared.fd3);
    this.#child.stdin?.on('error', () => undefined); // the sandbox gone: its exit says why
    this.#child.stdout?.on('data', (chunk: Buffer) => this.#feed(chunk));
    // bwrap's own complaints (a bind that failed) belong to the command that is running.
    this.#child.stderr?.on('data', (chunk: Buffer) => (this.#current ? this.#current.output(chunk) : this.close()));
    this.#child.once('error', (error) => {
      this.#error = error.message;
      if (this.#child.pid === undefined) this.#ended();
    });
    this.#child.once('close', (code, signal) => {
      this.#exit = { code, signal };
      this.#ended();
    });
    if (this.#child.pid !== undefined) live.add(this.#child.pid);
    this.#hold(false);
    // One started ahead of a command that then never came (warmSandboxShell) goes as an idle one does.
    this.#idle = setTimeout(() => this.close(), IDLE_MS).unref();
  }

  get busy(): boolean {
    return this.#current !== undefined;
  }

  get usable(): boolean {
    return !this.#closed && !this.busy && Date.now() - this.#startedAt < MAX_AGE_MS;
  }

  /**
   * Whether the sandbox's mounts are what they were when its shell became ready (a shell started
   * ahead of its command may wait a while for it): a mount the host made since
   * (propagated into the sandbox with the host's flags) or a bind the host dropped (a hidden file
   * unlinked or renamed over) shows there, where the options and the inodes can look the same.
   */
  mountsUnchanged(): boolean {
    if (this.#mounts === undefined) return true; // not ready yet: the command queued now runs once it is
    return readMounts(this.#child.pid) === this.#mounts;
  }

  run(command: string, output: (chunk: Uint8Array) => void): Promise<ShellResult> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#hold(true);
    const nonce = randomBytes(16).toString('hex');
    return new Promise((resolve) => {
      this.#current = { marker: Buffer.from(`\0${nonce} `), held: Buffer.alloc(0), output, resolve };
      this.#child.stdin?.write(`${nonce}\0${command}\0`);
    });
  }

  /** Ends the sandbox and everything in it (`signal` to its process group). */
  kill(signal: NodeJS.Signals): void {
    this.#close();
    if (!this.#exit) killGroup(this.#child.pid, signal);
  }

  close(): void {
    this.kill('SIGKILL');
  }

  abandon(): void {
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#finish({ ...this.#exitResult(), sandboxEnded: true });
  }

  /** An idle shell does not keep huddle running: it is killed when huddle exits (process 'exit' below). */
  #hold(running: boolean): void {
    for (const handle of [this.#child, this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
      const refable = handle as unknown as { ref?: () => void; unref?: () => void; destroyed?: boolean } | null;
      // (ref() on a socket that has ended waits for a 'connect' that never comes: a listener each time.)
      if (!refable || refable.destroyed) continue;
      if (running) refable.ref?.();
      else refable.unref?.();
    }
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.forget(this);
    closing.add(this);
    void this.gone.then(() => closing.delete(this));
  }

  #feed(piece: Buffer): void {
    let chunk = piece;
    if (!this.#ready) {
      const start = Buffer.concat([this.#readyHeld, chunk]);
      if (start.length < READY.length && READY.subarray(0, start.length).equals(start)) {
        this.#readyHeld = start;
        return;
      }
      if (!start.subarray(0, READY.length).equals(READY)) {
        this.close();
        return;
      }
      this.#ready = true;
      this.#mounts = readMounts(this.#child.pid);
      this.#started();
      chunk = start.subarray(READY.length);
      if (!chunk.length) return;
    }
    const current = this.#current;
    if (!current) {
      // Nothing may speak between commands: whatever did is not to be trusted with the next one.
      this.close();
      return;
    }
    const data = current.held.length ? Buffer.concat([current.held, chunk]) : chunk;
    const at = data.indexOf(current.marker);
    if (at < 0) {
      // The tail may be the start of the marker: held back until the next piece says.
      const keep = Math.min(data.length, current.marker.length - 1);
      if (data.length > keep) current.output(data.subarray(0, data.length - keep));
      current.held = Buffer.from(data.subarray(data.length - keep));
      return;
    }
    if (at > 0) current.output(data.subarray(0, at));
    const end = data.indexOf(0x0a, at);
    if (end < 0) {
      current.held = Buffer.from(data.subarray(at));
      return;
    }
    const [code, left] = data
      .subarray(at + current.marker.length, end)
      .toString('latin1')
      .split(' ')
      .map((word) => Number(word));
    // Processes the kill did not end, or bytes written after the end line: closed, not trusted again.
    if (left !== 1 || end + 1 < data.length) this.close();
    else {
      // Unreadable when it became ready (no /proc here): nothing to check the next command against, so there is none.
      if (this.#mounts === undefined) this.close();
      else this.#idle = setTimeout(() => this.close(), IDLE_MS).unref();
    }
    this.#finish(Number.isInteger(code) ? { exitCode: code } : { error: 'the sandbox shell said no exit code' });
  }

  #finish(result: ShellResult): void {
    const current = this.#current;
    if (!current) return;
    this.#current = undefined;
    if (!this.#closed) this.#hold(false);
    current.resolve(result);
  }

  #exitResult(): ShellResult {
    const exit = this.#exit;
    return {
      ...(exit?.code !== null && exit?.code !== undefined ? { exitCode: exit.code } : {}),
      ...(exit?.signal ? { signal: exit.signal } : {}),
      ...(this.#error ? { error: this.#error } : {}),
    };
  }

  #ended(): void {
    this.#close();
    this.#gone();
    this.#started();
    if (this.#idle) clearTimeout(this.#idle);
    if (this.#child.pid !== undefined) live.delete(this.#child.pid);
    const current = this.#current;
    if (current?.held.length) current.output(current.held);
    this.#finish({ ...this.#exitResult(), sandboxEnded: true, ...(this.#ready ? {} : { notStarted: true }) });
  }
}

/** One shell per owner (agent): a second command of the same owner while one runs gets a one-shot sandbox. */
const shells = new Map<string, SandboxShell>();
/** Shells being closed, until they are gone (a rewind waits for them too). */
const closing = new Set<SandboxShell>();
/** Process groups of the open shells, killed if huddle exits with them open. */
const live = new Set<number>();

atExit(() => {
  for (const pid of live) killGroup(pid, 'SIGKILL');
});

/** The sandbox's mount table, read through its first process (bwrap's child: the server, PID 1 inside). */
function readMounts(bwrapPid: number | undefined): string | undefined {
  if (bwrapPid === undefined) return undefined;
  try {
    const server = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, 'utf8').trim().split(/\s+/)[0];
    return server ? readFileSync(`/proc/${server}/mountinfo`, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why kept-open shells are not used in this process, if they are not: the kernel makes unreadable
 * programs dumpable anyway (fs.suid_dumpable), or a shell could not start here (a noexec temp dir).
 */
let unavailable: string | undefined;

function checkAvailable(): boolean {
  if (unavailable === undefined) {
    try {
      if (readFileSync('/proc/sys/fs/suid_dumpable', 'utf8').trim() !== '0') unavailable = 'fs.suid_dumpable is not 0';
    } catch {
      unavailable = 'no /proc/sys/fs/suid_dumpable';
    }
    unavailable ??= '';
  }
  return unavailable === '';
}

/** A shell that ended before it was ready says kept-open shells cannot start here: one-shot sandboxes from then on. */
export function sandboxShellsUnavailable(why: string): void {
  unavailable = why;
}

/** bwrap options that take one path, and those that take a source and a destination. */
const ONE_PATH = new Set(['--chdir', '--tmpfs', '--dev', '--proc', '--dir']);
const TWO_PATHS = new Set(['--bind', '--ro-bind', '--dev-bind', '--bind-try', '--ro-bind-try', '--dev-bind-try']);

/**
 * Device and inode of every path the options bind or mount on, as the host has them now: a bind
 * made on a file that was since renamed over is gone from the sandbox, though the options read
 * the same.
 */
function bindIdentity(options: readonly string[]): string {
  const paths: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const option = options[i]!;
    if (TWO_PATHS.has(option)) paths.push(options[++i]!, options[++i]!);
    else if (ONE_PATH.has(option)) paths.push(options[++i]!);
  }
  return paths
    .map((p) => {
      try {
        const info = statSync(p, { throwIfNoEntry: false });
        return info ? `${info.dev}:${info.ino}` : '-';
      } catch {
        return '-'; // not a directory on the way, not allowed: nothing to tell apart
      }
    })
    .join(',');
}

/**
 * Runs `command` (as `bash -c`, stdin closed, stderr into stdout, its output to `output`) in
 * `owner`'s kept-open sandbox, or returns undefined where that does not apply: no bubblewrap, plan
 * mode (its /tmp is thrown away after each command), a command with a NUL byte, a network bridge
 * (its socat would not outlive the first command), or the owner's shell busy. The caller then runs
 * the command in a sandbox of its own.
 */
export async function runInSandboxShell(
  command: string,
  request: SandboxRequest & { owner: string },
  output: (chunk: Uint8Array) => void,
): Promise<ShellRun | undefined> {
  if (command.includes('\0')) return undefined;
  return withKeptShell(request, (shell, note) => ({
    done: shell.run(command, output),
    kill: (signal) => shell.kill(signal),
    abandon: () => shell.abandon(),
    ...(note ? { note } : {}),
  }));
}

/**
 * Starts `owner`'s kept-open sandbox for a command about to come, where one would be used and none
 * is open (resolves once it is ready): bubblewrap's setup then overlaps what runs before the command (the calls of the same
 * model response before it). Nothing runs in it until a command does, through runInSandboxShell,
 * which checks it against that command's own options as for any shell kept open.
 */
export async function warmSandboxShell(request: SandboxRequest & { owner: string }): Promise<void> {
  // One open already is the command's to check: working its options out here as well would do it twice a command.
  if (shells.has(request.owner)) return;
  await withKeptShell(request, (shell) => shell.started);
}

/**
 * `use` given the owner's open shell if it fits `request`, or a new one; undefined where none
 * applies. `use` runs in the same turn as the check that the shell is free, so that two commands
 * of one owner started together never both get it (the second would wait behind the first).
 */
async function withKeptShell<T>(
  request: SandboxRequest & { owner: string },
  use: (shell: SandboxShell, note: string | undefined) => T,
): Promise<T | undefined> {
  if (request.mode === 'read-only' || !existsSync('/bin/bash') || !checkAvailable()) return undefined;
  const server = unreadableCopy('/bin/bash');
  // The script comes through the environment (and leaves it first thing): `ps` inside shows one short line for it.
  const prepared = await prepareSandboxed([SERVER_INSIDE, '--posix', '--norc', '-c', 'eval "$HUDDLE_SHELL_SERVER"', 'huddle-shell'], {
    ...request,
    env: { ...request.env, HUDDLE_SHELL_SERVER: SERVER },
    mergeStderr: false,
    asInit: true,
    files: [{ host: server, inside: SERVER_INSIDE }],
  });
  const fd3 = prepared.fd3;
  if (!prepared.sandboxed || !fd3 || prepared.bridged) return undefined;
  const options = fd3.toString().split('\0');
  const key = JSON.stringify([prepared.file, prepared.args, prepared.env, request.cwd, options, bindIdentity(options)]);
  let shell = shells.get(request.owner);
  if (shell?.busy) return undefined;
  if (shell && (shell.key !== key || !shell.usable || !shell.mountsUnchanged())) {
    shell.close();
    shell = undefined;
  }
  if (!shell) {
    const owner = request.owner;
    shell = new SandboxShell(key, { ...prepared, fd3 }, request.cwd, (gone) => {
      if (shells.get(owner) === gone) shells.delete(owner);
    });
    shells.set(owner, shell);
  }
  return use(shell, prepared.note);
}

/**
 * Closes every idle kept-open sandbox and waits until it and any other being closed are gone:
 * before a rewind puts files back, so that nothing an earlier command started can touch them
 * after. (A command still running is one the person can see, as with a one-shot sandbox.)
 */
export async function closeIdleSandboxShells(): Promise<void> {
  for (const shell of [...shells.values()]) if (!shell.busy) shell.close();
  // SIGKILL ends them at once, but a process stuck in the kernel (a hung mount) may hold one: a
  // rewind waits a while for it, not forever.
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
  await Promise.race([Promise.all([...closing].map((shell) => shell.gone)), bound]);
  clearTimeout(timer);
}

const CLOSE_WAIT_MS = 5_000;
