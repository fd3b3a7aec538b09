// Whether this machine can sandbox the commands agents run, found out once per process.
// Linux: bubblewrap (`bwrap`), probed by really starting a sandbox (it may be installed but unable
// to make namespaces, e.g. inside an unprivileged container). macOS: `sandbox-exec`.
// HUDDLE_SANDBOX=off is the one way to run commands unsandboxed on purpose.
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { probeConditions, recalledVerdict, rememberVerdict } from './probe-record.js';

export type SandboxEngine = 'bwrap' | 'sandbox-exec';

export type SandboxStatus =
  | {
      available: true;
      engine: SandboxEngine;
      /** The executable to run. */
      program: string;
      version: string;
      /** bwrap can also make a user namespace and forbid nested ones (bwrap ≥ 0.8 with the right capabilities). */
      userns: boolean;
      /** One line for `--version`, the status bar and headless stderr. */
      line: string;
    }
  | {
      available: false;
      /** The person turned it off (HUDDLE_SANDBOX=off): no warning is owed, only a note. */
      onPurpose: boolean;
      reason: string;
      line: string;
    };

/** What the person sees when commands run unsandboxed by necessity. */
export const SANDBOX_OFF_WARNING = 'sandbox: off — install bubblewrap';

let cached: SandboxStatus | undefined;

/** Set beside HUDDLE_SANDBOX=off when a settings file turned it off: that file's name, for the messages. */
export const SANDBOX_OFF_SOURCE = 'HUDDLE_SANDBOX_OFF_BY';

/** available, or off and why; probed once (HUDDLE_SANDBOX is read on every call). */
export function sandboxStatus(env: NodeJS.ProcessEnv = process.env): SandboxStatus {
  if (sandboxOffOnPurpose(env)) {
    const by = env[SANDBOX_OFF_SOURCE]?.trim();
    const reason = by ? `"sandbox": {"enabled": false} in ${by}` : 'HUDDLE_SANDBOX=off';
    return { available: false, onPurpose: true, reason, line: `sandbox: off (${reason}): commands run unsandboxed` };
  }
  cached ??= probe(env);
  return cached;
}

export function sandboxOffOnPurpose(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.HUDDLE_SANDBOX ?? '').trim().toLowerCase() === 'off';
}

/** For tests: forget the probe. */
export function resetSandboxStatus(): void {
  cached = undefined;
}

/**
 * The same probe without blocking: bubblewrap's runs at once, in child processes, while the caller
 * goes on (the console loads its session core meanwhile). Fills what sandboxStatus() returns.
 */
export async function probeSandbox(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (cached || sandboxOffOnPurpose(env) || process.platform !== 'linux') return;
  const program = findProgram('bwrap', env);
  if (!program) return; // sandboxStatus() says so without running anything
  const conditions = probeConditions(program);
  const recalled = recalledVerdict(conditions);
  if (recalled) {
    cached ??= on(program, recalled.version, recalled.userns);
    return;
  }
  const run = (args: string[]) =>
    new Promise<Ran>((resolve) => {
      execFile(program, args, { encoding: 'utf8', timeout: 10_000 }, (error, stdout, stderr) => {
        const failed = error as (NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals | null }) | null;
        resolve({ status: failed ? (typeof failed.code === 'number' ? failed.code : null) : 0, signal: failed?.signal ?? null, stdout, stderr });
      });
    });
  const [version, strong, plain] = await Promise.all([run(['--version']), run(['--unshare-user', '--disable-userns', ...BWRAP_PROBE]), run(BWRAP_PROBE)]);
  cached ??= remembered(conditions, bwrapVerdict(program, version.stdout, strong, plain));
}

/** What a probe run gave back. */
interface Ran {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A sandbox of bwrap's that only runs `true`: whether it can make the namespaces huddle's sandbox needs. */
const BWRAP_PROBE = ['--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--unshare-pid', '--die-with-parent', '--', 'true'];

function probe(env: NodeJS.ProcessEnv): SandboxStatus {
  if (process.platform === 'darwin') {
    const program = findProgram('sandbox-exec', env) ?? '/usr/bin/sandbox-exec';
    const ran = spawnSync(program, ['-p', '(version 1)(allow default)', '/usr/bin/true'], { stdio: 'ignore', timeout: 10_000 });
    if (ran.status === 0) {
      return { available: true, engine: 'sandbox-exec', program, version: 'macOS', userns: false, line: 'sandbox: sandbox-exec (macOS; untested by huddle)' };
    }
    return off('sandbox-exec did not run', 'sandbox: off — sandbox-exec did not run');
  }
  if (process.platform !== 'linux') return off(`no sandbox for ${process.platform}`, `sandbox: off — no sandbox on ${process.platform}`);
  const program = findProgram('bwrap', env);
  if (!program) return off('bubblewrap (bwrap) is not installed', `${SANDBOX_OFF_WARNING} (apt-get install bubblewrap)`);
  const conditions = probeConditions(program);
  const recalled = recalledVerdict(conditions);
  if (recalled) return on(program, recalled.version, recalled.userns);
  const version = spawnSync(program, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout ?? '';
  const strong = spawnSync(program, ['--unshare-user', '--disable-userns', ...BWRAP_PROBE], { stdio: 'ignore', timeout: 10_000 });
  // The plain sandbox is tried only when the strong one fails.
  const plain = strong.status === 0 ? strong : spawnSync(program, BWRAP_PROBE, { encoding: 'utf8', timeout: 10_000 });
  return remembered(conditions, bwrapVerdict(program, version, strong, { status: plain.status, signal: plain.signal, stderr: String(plain.stderr ?? '') }));
}

/** A sandbox that worked is remembered for the next start under the same conditions (probe-record.ts). */
function remembered(conditions: string | undefined, status: SandboxStatus): SandboxStatus {
  if (status.available && status.engine === 'bwrap') rememberVerdict(conditions, { version: status.version, userns: status.userns });
  return status;
}

function bwrapVerdict(program: string, versionText: string, strong: { status: number | null }, plain: Omit<Ran, 'stdout'>): SandboxStatus {
  const version = versionText.trim().replace(/^bubblewrap\s*/, '') || 'unknown';
  if (strong.status === 0) return on(program, version, true);
  if (plain.status === 0) return on(program, version, false);
  const why = (plain.stderr ?? '').trim().split('\n')[0] || `exit ${plain.status ?? plain.signal}`;
  return off(`bubblewrap cannot make a sandbox here (${why})`, `sandbox: off — bubblewrap cannot make namespaces here (${why})`);
}

function on(program: string, version: string, userns: boolean): SandboxStatus {
  return { available: true, engine: 'bwrap', program, version, userns, line: `sandbox: bubblewrap ${version}` };
}

function off(reason: string, line: string): SandboxStatus {
  return { available: false, onPurpose: false, reason, line };
}

function findProgram(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** socat bridges the sandbox's own loopback to huddle's network filter (only with allow/deny lists). */
export function hasSocat(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findProgram('socat', env);
}
