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
import os from 'node:os';
import { bwrapOptions, hostTempDirs } from './bwrap-args.js';
import { hiddenPaths } from './hidden-paths.js';
import { bridgeScript, filteringProxy, PROXY_SOCKET_INSIDE, proxyEnv } from './network-filter.js';
import { expandPath, sandboxSettings, type NetworkSettings, type SandboxRequest } from './options.js';
import { cacheEnv, emptyDir, hostCacheDirs, privateTmp, sandboxCacheDir } from './private-dirs.js';
import { macosProfile } from './seatbelt.js';
import { hasSocat, sandboxStatus } from './status.js';

export interface PreparedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Written to the child's fd 3 (bubblewrap's options). */
  fd3?: Buffer;
  sandboxed: boolean;
  /** Something the caller should pass on (network lists that could not be applied). */
  note?: string;
}

/** How `argv` runs under `request`: through bwrap or sandbox-exec, or as it is when there is no sandbox. */
export async function prepareSandboxed(argv: readonly string[], request: SandboxRequest): Promise<PreparedCommand> {
  const status = sandboxStatus();
  if (!status.available) return { file: argv[0]!, args: argv.slice(1), env: request.env, sandboxed: false };

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
  const hidden = hiddenPaths(settings.hidden ?? [], writable);

  if (status.engine === 'sandbox-exec') {
    const profile = macosProfile({ writable: tmp ? [...writable, tmp] : writable, hidden: hidden.map((h) => h.path), network: request.network ?? settings.network });
    if (tmp) Object.assign(env, { TMPDIR: tmp, TMP: tmp, TEMP: tmp });
    return { file: status.program, args: ['-p', profile, ...argv], env, sandboxed: true };
  }

  const network = request.network ?? settings.network ?? {};
  let plan: 'on' | 'off' | { socket: string; inside: string } = network.enabled === false ? 'off' : 'on';
  let note: string | undefined;
  let command = [...argv];
  if (plan === 'on' && hasLists(network)) {
    const socat = hasSocat();
    if (socat) {
      plan = { socket: await filteringProxy(network), inside: PROXY_SOCKET_INSIDE };
      Object.assign(env, proxyEnv());
      command = ['/bin/sh', '-c', bridgeScript(socat), 'huddle-network', ...argv];
    } else {
      plan = 'off';
      note = 'sandbox: the network allow/deny lists need socat (apt-get install socat); this command ran without network';
    }
  }
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
    hostTmp: hostTempDirs(os.tmpdir()),
    network: plan,
    userns: status.userns,
  });
  return {
    file: status.program,
    args: ['--args', '3', '--', ...command],
    env,
    fd3: Buffer.from(`${options.join('\0')}\0`),
    sandboxed: true,
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
export async function sandboxedSpawn(argvOrCommand: readonly string[] | string, request: SpawnRequest): Promise<{ child: ChildProcess; prepared: PreparedCommand }> {
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
