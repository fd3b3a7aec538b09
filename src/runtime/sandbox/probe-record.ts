// bubblewrap's probe, remembered between processes (status.ts): a sandbox that worked for this
// bwrap binary, on this boot, under these user-namespace settings, works again; every huddle start
// otherwise pays for two or three bwrap processes before it can run anything. Only a sandbox that
// worked is remembered, never "off": a stale record can make a command fail to start (bwrap says
// why), never make one run unsandboxed. The record holds no path to run (the program is found on
// PATH as always) and lives in huddle's private runtime directory, which every sandbox hides, so
// no agent can write it.
import { lstatSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { huddleRuntimeDir } from './runtime-dir.js';

const FILE = 'sandbox-probe.json';

/** What decides whether bwrap can make its namespaces: the binary itself, the boot, the kernel's user-namespace knobs. */
const KNOBS = [
  '/proc/sys/kernel/random/boot_id',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];

export interface ProbeVerdict {
  version: string;
  userns: boolean;
}

/** The conditions the probe ran under; undefined when they cannot be read (then nothing is remembered). */
export function probeConditions(program: string): string | undefined {
  try {
    const real = realpathSync(program);
    const s = statSync(real, { bigint: true });
    const knobs = KNOBS.map((file) => {
      try {
        return readFileSync(file, 'utf8').trim();
      } catch {
        return '-';
      }
    });
    return JSON.stringify([program, real, `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}:${s.uid}`, ...knobs]);
  } catch {
    return undefined;
  }
}

/** The verdict a probe under the same conditions gave, if one was recorded. */
export function recalledVerdict(conditions: string | undefined): ProbeVerdict | undefined {
  if (!conditions) return undefined;
  try {
    const file = path.join(huddleRuntimeDir(), FILE);
    // The directory is owner-only; the file must be ours too (not a link planted there).
    const info = lstatSync(file);
    if (!info.isFile() || (typeof process.getuid === 'function' && info.uid !== process.getuid())) return undefined;
    const record = JSON.parse(readFileSync(file, 'utf8')) as { conditions?: unknown; version?: unknown; userns?: unknown };
    if (record.conditions !== conditions || typeof record.version !== 'string' || typeof record.userns !== 'boolean') return undefined;
    return { version: record.version.slice(0, 100), userns: record.userns };
  } catch {
    return undefined;
  }
}

/** Remembers a sandbox that worked (written whole, then renamed into place). */
export function rememberVerdict(conditions: string | undefined, verdict: ProbeVerdict): void {
  if (!conditions) return;
  try {
    const file = path.join(huddleRuntimeDir(), FILE);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ conditions, ...verdict }), { mode: 0o600 });
    renameSync(temp, file);
  } catch {
    // Not remembered: the next start probes again.
  }
}
