// Who holds a lock, and whether that process still runs. A pid alone is not enough: pids are
// reused (a container restarts huddle as pid 7 each time), so a holder is its pid, the start time
// of that process (from /proc/<pid>/stat where there is one) and the host it runs on.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessIdentity {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), where known. */
  start?: string;
  host: string;
}

export type Liveness = 'alive' | 'dead' | 'unknown';

interface ProcStat {
  state: string;
  start: string;
}

/** State and start time of a process from /proc; undefined when there is no /proc or no such process. */
function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state && start ? { state, start } : undefined;
}

let self: ProcessIdentity | undefined;

/** This process. */
export function currentProcess(): ProcessIdentity {
  if (!self) {
    const start = readProcStat(process.pid)?.start;
    self = { pid: process.pid, ...(start ? { start } : {}), host: hostname() };
  }
  return self;
}

const nonceBase = randomBytes(6).toString('hex');
let nonceCounter = 0;

/** A token unique to one acquisition of a lock (so a breaker can tell one holder's file from the next). */
export function newNonce(): string {
  return `${nonceBase}${(nonceCounter++).toString(36)}`;
}

export function isCurrentProcess(holder: ProcessIdentity): boolean {
  const me = currentProcess();
  return holder.pid === me.pid && holder.host === me.host && (holder.start === undefined || me.start === undefined || holder.start === me.start);
}

/**
 * Whether the process that `holder` names still runs. `unknown` for another host (its processes
 * cannot be asked from here). A zombie (killed, not yet reaped) counts as dead.
 */
export function liveness(holder: ProcessIdentity): Liveness {
  if (holder.host !== currentProcess().host) return 'unknown';
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return 'dead';
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 'dead';
  }
  const stat = readProcStat(holder.pid);
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X') return 'dead';
    if (holder.start !== undefined && stat.start !== holder.start) return 'dead'; // the pid was reused
  } else if (currentProcess().start !== undefined) {
    return 'dead'; // /proc works here, and has no such process (it ended just now)
  }
  return 'alive';
}
