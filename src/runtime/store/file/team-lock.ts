// The team lock (docs/contract.md#command-line): a workspace in which a huddle process is live belongs to that
// process. `.team/huddle.lock` names it (pid, process start time, host, since when); a second
// run there is refused at once with that name, and a lock left by a dead process is taken over
// at once. Within one process the lock is shared: opening the team twice is fine.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentProcess, isCurrentProcess, liveness } from '../../fs/process-identity.js';
import { StoreUnavailableError } from '../store-errors.js';
import { TeamBusyError } from '../team-store.js';
import { type LockRecord, readLock, tryLock } from '../file-lock.js';

export const TEAM_LOCK = 'huddle.lock';

interface Held {
  count: number;
  release(): void;
}
const heldHere = new Map<string, Held>();

export function teamLockFile(teamDir: string): string {
  return path.join(teamDir, TEAM_LOCK);
}

/** The live process other than this one that holds the team, if any. */
export function liveTeamHolder(teamDir: string): LockRecord | undefined {
  const found = readLock(teamLockFile(teamDir));
  if (found.kind !== 'held' || isCurrentProcess(found.record)) return undefined;
  return liveness(found.record) === 'dead' ? undefined : found.record;
}

/** Refuses (TeamBusyError) when another live process holds the team. */
export function refuseIfBusy(teamDir: string, where: string): void {
  const holder = liveTeamHolder(teamDir);
  if (holder) throw busy(holder, where);
}

/**
 * Takes the team for this process; resolves with the function that gives it back. Another live
 * holder (also on another host: its processes cannot be asked, so it is never presumed dead) is
 * refused at once with TeamBusyError; a dead one's lock is taken over.
 */
export async function acquireTeamLock(teamDir: string, where: string): Promise<() => void> {
  const file = teamLockFile(teamDir);
  let held = heldHere.get(file);
  if (!held) {
    // A lock file just being written reads as unreadable for a moment: look again shortly.
    for (let attempt = 0; ; attempt++) {
      const result = tryLock(file, { foreignStaleMs: Number.POSITIVE_INFINITY });
      if (result.acquired) {
        held = { count: 0, release: result.release };
        heldHere.set(file, held);
        break;
      }
      if (result.holder && isCurrentProcess(result.holder)) {
        // Ours, from an open whose release went wrong: take it back.
        rmSync(file, { force: true });
        continue;
      }
      if (result.holder) throw busy(result.holder, where);
      if (attempt >= 50) {
        throw new StoreUnavailableError(`${file} is not a lock huddle can read; if no huddle runs in ${where}, remove it`);
      }
      await sleep(20);
    }
  }
  held.count += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.count -= 1;
    if (held.count === 0) {
      heldHere.delete(file);
      held.release();
    }
  };
}

function busy(holder: LockRecord, where: string): TeamBusyError {
  const elsewhere = holder.host !== currentProcess().host;
  return new TeamBusyError({ pid: holder.pid, ...(elsewhere ? { host: holder.host } : {}), ...(holder.since ? { since: holder.since } : {}) }, where);
}
