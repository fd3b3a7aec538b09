// Running a command in the sandbox: the API every part of huddle that starts a program on an
// agent's behalf uses (bash; verify commands, hooks and stdio MCP servers alike).
//
//   const child = await sandboxedSpawn(['npm', 'test'], { cwd, writable: [root], mode: 'write', owner: 'alice', env });
//
// returns a node ChildProcess (stdio as asked); a long-lived server is the same call kept open.
// Where there is no sandbox the program runs as it is: the caller says so (sandboxStatus()).
// bubblewrap gets its options through a pipe (--args 3), so that the sandbox's PID 1 shows no
// paths on its command line.
import { spawn, type ChildProcess } from 'node:child_process';

type StdioKind = 'ignore' | 'pipe' | 'inherit';
import { existsSync, realpathSync } from 'node:fs';
import { bwrapOptions, PRIVATE_TMP_COVERS } from './bwrap-args.js';
import { hiddenPaths } from './hidden-paths.js';
import { bridgeScript, filteringProxy, PROXY_PORT, PROXY_SOCKET_INSIDE, proxyEnv, type LoopbackBridge } from './network-filter.js';
import { expandPath, sandboxSettings, type NetworkSettings, type SandboxRequest } from './options.js';
import { agentStateRoot, argsFile, cacheEnv, emptyDir, hostCacheDirs, privateTmp, sandboxCacheDir } from './private-dirs.js';
import { macosProfile } from './seatbelt.js';
import { hasSocat, sandboxStatus } from './status.js';

export interface PreparedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Written to the child's fd 3 (bubblewrap's options). */
  fd3?: Buffer;
  sandboxed: boolean;
  /** A network bridge (socat) starts inside before the program: it lives only as long as the program's sandbox. */
  bridged?: boolean;
  /** Something the caller should pass on (network lists that could not be applied). */
  note?: string;
}

/** Where an external agent's own socket appears inside its sandbox (its /tmp is private). */
export const AGENT_SOCKET_INSIDE = '/tmp/.huddle-agent.sock';

/** The path a sandboxed program reaches huddle's socket `host` at (SandboxRequest.socket). */
export function agentSocketPath(host: string): string {
  const status = sandboxStatus();
  return status.available && status.engine === 'bwrap' ? AGENT_SOCKET_INSIDE : host;
}

/** How `argv` runs under `request`: through bwrap or sandbox-exec, or as it is when there is no sandbox. */
export async function prepareSandboxed(argv: readonly string[], request: SandboxRequest): Promise<PreparedCommand> {
  const status = request.status ?? sandboxStatus();
  if (!status.available) {
    const merged = request.mergeStderr ? withStderrMerged(argv) : argv;
    return { file: merged[0]!, args: merged.slice(1), env: request.env, sandboxed: false };
  }

  const settings = sandboxSettings();
  const readOnly = request.mode === 'read-only';
  const writable = readOnly ? [] : existingReal([...request.writable, ...(settings.writable ?? []).map((p) => expandPath(p))]);
  const env: Record<string, string> = { ...request.env, HUDDLE_SANDBOX: 'on' };
  const tmp = readOnly ? undefined : privateTmp(request.owner);
  Object.assign(env, { TMPDIR: '/tmp', TMP: '/tmp', TEMP: '/tmp' });
  if (settings.hostCaches) {
    if (!readOnly) writable.push(...existingReal(hostCacheDirs()));
  } else {
    const caches = sandboxCacheDir();
    Object.assign(env, cacheEnv(caches));
    if (!readOnly) writable.push(realpathSync(caches));
  }
  // An external agent's own config directory: writable in every mode, the other agents' hidden.
  const state = existingReal(request.state ?? []);
  const stateRoot = state.length && existsSync(agentStateRoot()) ? realpathSync(agentStateRoot()) : undefined;
  const hidden = hiddenPaths(settings.hidden ?? [], writable).filter((h) => h.path !== stateRoot);

  if (status.engine === 'sandbox-exec') {
    const profile = macosProfile({
      writable: [...writable, ...(tmp ? [tmp] : [])],
      hidden: hidden.map((h) => h.path),
      network: request.network ?? settings.network,
      ...(state.length ? { state: { root: stateRoot, own: state } } : {}),
      ...(request.socket ? { socket: request.socket } : {}),
    });
    if (tmp) Object.assign(env, { TMPDIR: tmp, TMP: tmp, TEMP: tmp });
    return { file: status.program, args: ['-p', profile, ...(request.mergeStderr ? withStderrMerged(argv) : argv)], env, sandboxed: true };
  }

  const network = request.network ?? settings.network ?? {};
  let plan: 'on' | 'off' | { socket: string; inside: string } = network.enabled === false ? 'off' : 'on';
  const notes: string[] = [];
  const bridges: LoopbackBridge[] = [];
  const sockets: Array<{ host: string; inside: string }> = request.socket ? [{ host: request.socket, inside: AGENT_SOCKET_INSIDE }] : [];
  // Looked up only where a bridge is needed (most commands need none).
  const needsBridge = plan === 'on' ? hasLists(network) : request.loopback !== undefined;
  const socat = needsBridge ? hasSocat() : undefined;
  if (plan === 'on' && hasLists(network)) {
    if (socat) {
      plan = { socket: await filteringProxy(network), inside: PROXY_SOCKET_INSIDE };
      Object.assign(env, proxyEnv());
      bridges.push({ port: PROXY_PORT, inside: PROXY_SOCKET_INSIDE });
    } else {
      plan = 'off';
      notes.push('sandbox: the network allow/deny lists need socat (apt-get install socat); this command ran without network');
    }
  }
  // With a network of its own, the sandbox's loopback is not the host's: a port of huddle's is bridged in.
  if (plan !== 'on' && request.loopback) {
    const inside = `/tmp/.huddle-loopback-${request.loopback.port}.sock`;
    if (socat) {
      sockets.push({ host: request.loopback.socket, inside });
      bridges.push({ port: request.loopback.port, inside });
    } else {
      notes.push(
        `sandbox: with a network of its own, this program reaches 127.0.0.1:${request.loopback.port} (huddle's) only through socat (apt-get install socat)`,
      );
    }
  }
  const bridged = bridges.length ? ['/bin/sh', '-c', bridgeScript(socat!, bridges), 'huddle-network', ...argv] : [...argv];
  const command = withoutStrayDescriptors(bridged, request.mergeStderr ?? false);
  const note = notes.length ? notes.join('; ') : undefined;
  // What the private /tmp must not hide: the workspace (read-only in plan mode), what it reads from.
  const readable = existingReal([request.cwd, ...request.writable, ...(request.readable ?? [])]).sort((a, b) => a.length - b.length);
  const options = bwrapOptions({
    cwd: request.cwd,
    writable,
    readable,
    readOnly: readOnly ? [] : existingReal(request.readOnly ?? []).filter((p) => writable.some((w) => p.startsWith(`${w}/`))),
    hidden,
    emptyDir: emptyDir(),
    tmp,
    hostTmp: PRIVATE_TMP_COVERS,
    network: plan,
    userns: status.userns,
    ...(state.length ? { agentState: { root: stateRoot, own: state } } : {}),
    sockets,
    ...(request.asInit ? { asInit: true } : {}),
    ...(request.files?.length ? { files: request.files } : {}),
  });
  return {
    file: status.program,
    args: ['--args', '3', '--', ...command],
    env,
    fd3: Buffer.from(`${options.join('\0')}\0`),
    sandboxed: true,
    ...(bridges.length ? { bridged: true } : {}),
    ...(note ? { note } : {}),
  };
}

export interface SpawnRequest extends SandboxRequest {
  /** stdin, stdout, stderr (fd 3 is the sandbox's own). Default: all piped. */
  stdio?: readonly [StdioKind, StdioKind, StdioKind];
  /** setsid(): a process group of its own, to kill as a whole, and no controlling terminal. */
  detached?: boolean;
}

/** Starts `argv` (or `bash -c command`) in the sandbox and returns the child; `prepared` says how. */
export async function sandboxedSpawn(
  argvOrCommand: readonly string[] | string,
  request: SpawnRequest,
): Promise<{ child: ChildProcess; prepared: PreparedCommand }> {
  const argv = typeof argvOrCommand === 'string' ? ['bash', '-c', argvOrCommand] : argvOrCommand;
  const prepared = await prepareSandboxed(argv, request);
  const [stdin, stdout, stderr] = request.stdio ?? ['pipe', 'pipe', 'pipe'];
  const child = spawn(prepared.file, prepared.args, {
    cwd: request.cwd,
    env: prepared.env,
    stdio: prepared.fd3 ? [stdin, stdout, stderr, 'pipe'] : [stdin, stdout, stderr],
    detached: request.detached ?? false,
  });
  if (prepared.fd3) {
    const pipe = child.stdio[3] as NodeJS.WritableStream | null;
    pipe?.on?.('error', () => undefined); // bwrap gone before reading: its exit says why
    pipe?.end(prepared.fd3);
  }
  return { child, prepared };
}

/**
 * `argv` in the sandbox as one command line for a program that can pass no extra descriptor (a PTY:
 * node-pty spawns a file with arguments, nothing more). bubblewrap's options go into a private file
 * that a shell opens as fd 3 and removes before it becomes bwrap, so they are still never on a
 * command line the sandbox shows.
 */
export async function prepareSandboxedCommandLine(argv: readonly string[], request: SandboxRequest): Promise<PreparedCommand> {
  const prepared = await prepareSandboxed(argv, request);
  if (!prepared.fd3) return prepared;
  const file = argsFile(prepared.fd3);
  const script = 'exec 3<"$1" && rm -f -- "$1" && shift && exec "$@"';
  return { ...prepared, file: '/bin/sh', args: ['-c', script, 'huddle-sandbox', file, prepared.file, ...prepared.args], fd3: undefined };
}

/**
 * Descriptors huddle inherited without close-on-exec (a pipe of whatever started it: fd 251 from an
 * IDE's terminal, a jobserver) would pass through bwrap into every command: closed inside the
 * sandbox before the command starts, so it sees 0, 1 and 2 only (docs/trust.md). Bash, for
 * redirections of any descriptor number; where there is none, the command runs as it is.
 */
const CLOSE_LOOP = 'for f in /proc/self/fd/*; do n=${f##*/}; case $n in 0|1|2) ;; *) eval "exec $n>&-" 2>/dev/null ;; esac; done; ';
export const CLOSE_STRAY_DESCRIPTORS = `${CLOSE_LOOP}exec "$@"`;

/** The same shell also points stderr at stdout (mergeStderr): no second shell before the program for that. */
const CLOSE_STRAY_DESCRIPTORS_MERGED = `${CLOSE_LOOP}exec 2>&1; exec "$@"`;

function withoutStrayDescriptors(argv: readonly string[], mergeStderr: boolean): string[] {
  const bash = ['/bin/bash', '/usr/bin/bash'].find((file) => existsSync(file));
  if (!bash) return mergeStderr ? withStderrMerged(argv) : [...argv];
  // POSIX mode: this shell reads no BASH_ENV (the program's own bash does, once, with the stray
  // descriptors closed). --norc: nor ~/.bashrc, which bash reads when its stdin is a socket (as for
  // sshd; Node's piped stdin is one: a hook's, an MCP server's) and SHLVL is unset.
  return [bash, '--posix', '--norc', '-c', mergeStderr ? CLOSE_STRAY_DESCRIPTORS_MERGED : CLOSE_STRAY_DESCRIPTORS, 'huddle-fds', ...argv];
}

/** Where no shell closes descriptors first: a shell of its own points stderr at stdout, then becomes the program. */
function withStderrMerged(argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', 'exec 2>&1; exec "$@"', 'huddle-stderr', ...argv];
}

function hasLists(network: NetworkSettings): boolean {
  return Boolean(network.allow?.length || network.deny?.length);
}

function existingReal(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!existsSync(p)) continue;
    const real = realpathSync(p);
    if (!out.includes(real)) out.push(real);
  }
  return out;
}
