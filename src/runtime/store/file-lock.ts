// Mutual exclusion over a file, across the agents of this process and across processes.
//
// The lock is the file `<file>.lock`, holding who took it: {pid, start, host, since, nonce}, made
// by hard-linking a complete temp file to that name (link() fails when the name exists: exactly
// one taker wins, and the lock is never seen without its holder). A waiter reads the holder:
// - a live process holds it: wait (with a short, growing, randomized backoff);
// - the holder is dead (no such pid, a reused pid, a zombie): take the lock over at once — there
//   is no staleness timeout to sit out after a crash;
// - another host holds it (its processes cannot be asked from here): wait, and take it over only
//   when the lock is older than any real holder keeps one.
// Taking over goes through a second, short-lived lock, `<file>.lock.break`: only its holder may
// remove someone else's lock, and only after reading it again and finding the same dead holder,
// so two waiters can never both break in and remove a lock the other one just took.
//
// In front of all that, a promise chain per path queues the callers of this process in order, so
// they do not spin against each other on the lock file.
import { closeSync, constants, ftruncateSync, linkSync, openSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentProcess, isCurrentProcess, liveness, newNonce, type ProcessIdentity } from '../fs/process-identity.js';
import { makeDirectory, StoreWriteError } from './store-errors.js';
import { PRIVATE_FILE_MODE } from '../fs/private-modes.js';
import { atExit } from '../process/at-exit.js';

export interface LockRecord extends ProcessIdentity {
  /** When it was taken (ISO). */
  since: string;
  nonce: string;
}

/** A lock held by another live process (or one whose liveness cannot be told). */
export interface LockBusy {
  holder: LockRecord | undefined;
  /** How old the lock file is, in ms. */
  ageMs: number;
}

export type LockAttempt = { acquired: true; record: LockRecord; release(): void } | ({ acquired: false } & LockBusy);

/** Another host's lock (or an unreadable one) older than this is taken over: real holders keep board and inbox locks for milliseconds. */
const FOREIGN_STALE_MS = 30_000;
/** A `.break` lock older than this was left by a process that died while breaking. */
const BREAK_STALE_MS = 5_000;
/** A waiter gives up (with a clear error) after this long behind a live holder. */
const MAX_WAIT_MS = 120_000;

const inProcessQueues = new Map<string, Promise<unknown>>();

/** Runs `work` while holding the lock named by `file` (the file itself need not exist). */
export async function withFileLock<T>(file: string, work: () => Promise<T> | T): Promise<T> {
  const key = path.resolve(file);
  const previous = inProcessQueues.get(key) ?? Promise.resolve();
  // The queue only orders the work: each caller hears its own failure through the promise it holds.
  const run = previous.catch(() => undefined).then(() => lockAcrossProcesses(key, work));
  // The queue only orders the work: each caller hears its own failure through the promise it holds.
  const tail = run.catch(() => undefined);
  inProcessQueues.set(key, tail);
  try {
    return await run;
  } finally {
    if (inProcessQueues.get(key) === tail) inProcessQueues.delete(key);
  }
}

async function lockAcrossProcesses<T>(file: string, work: () => Promise<T> | T): Promise<T> {
  const lockFile = `${file}.lock`;
  const started = Date.now();
  let delay = 1;
  for (;;) {
    const attempt = tryLock(lockFile);
    if (attempt.acquired) {
      try {
        return await work();
      } finally {
        attempt.release();
      }
    }
    if (Date.now() - started > MAX_WAIT_MS) {
      const who = attempt.holder ? `pid ${attempt.holder.pid} on ${attempt.holder.host}` : 'an unreadable lock';
      throw new StoreWriteError(
        `${lockFile} has been held by ${who} for ${Math.round(attempt.ageMs / 1000)} s; if that process is stuck, stop it (a dead holder's lock is taken over at once)`,
      );
    }
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(25, delay * 1.3 + 0.5);
  }
}

/**
 * One attempt at `lockFile`: taken (dead holders' locks are taken over on the way), or busy with
 * the holder. Throws StoreWriteError when the lock cannot be written at all (read-only, full disk).
 */
export function tryLock(lockFile: string, options: { foreignStaleMs?: number } = {}): LockAttempt {
  const foreignStaleMs = options.foreignStaleMs ?? FOREIGN_STALE_MS;
  for (let attempt = 0; ; attempt++) {
    const record: LockRecord = { ...currentProcess(), since: new Date().toISOString(), nonce: newNonce() };
    if (placeExclusive(lockFile, record)) {
      return { acquired: true, record, release: () => releaseLock(lockFile, record.nonce) };
    }
    const found = readLock(lockFile);
    // Lost the race for a free or broken lock several times: wait like behind any holder.
    if (attempt >= 5) return { acquired: false, holder: found.kind === 'held' ? found.record : undefined, ageMs: found.kind === 'gone' ? 0 : found.ageMs };
    if (found.kind === 'gone') continue; // released between our create and our read
    const busy: LockBusy = { holder: found.kind === 'held' ? found.record : undefined, ageMs: found.ageMs };
    if (!canTakeOver(found, foreignStaleMs)) return { acquired: false, ...busy };
    breakLock(lockFile, found);
  }
}

/** The lock's holder as stored (for messages and for a team lock's owner), or why there is none. */
export function readLock(lockFile: string): LockFound {
  let ino: number;
  let mtimeMs: number;
  let ageMs: number;
  let isDirectory: boolean;
  try {
    const stat = statSync(lockFile);
    ino = stat.ino;
    mtimeMs = stat.mtimeMs;
    ageMs = Date.now() - stat.mtimeMs;
    isDirectory = stat.isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw error;
  }
  // A directory is a lock left by an older huddle (proper-lockfile): no holder to ask.
  if (isDirectory) return { kind: 'unreadable', ino, mtimeMs, ageMs };
  let text: string;
  try {
    text = readFileSync(lockFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw error;
  }
  const record = parseRecord(text);
  return record ? { kind: 'held', record, ino, mtimeMs, ageMs } : { kind: 'unreadable', ino, mtimeMs, ageMs };
}

export type LockFound =
  | { kind: 'gone' }
  | { kind: 'held'; record: LockRecord; ino: number; mtimeMs: number; ageMs: number }
  | { kind: 'unreadable'; ino: number; mtimeMs: number; ageMs: number };

/** Whether a waiter may remove this lock: its holder is dead, or it is foreign/unreadable and old. */
function canTakeOver(found: Exclude<LockFound, { kind: 'gone' }>, foreignStaleMs: number): boolean {
  if (found.kind === 'unreadable') return found.ageMs > FOREIGN_STALE_MS;
  const state = liveness(found.record);
  if (state === 'dead') return true;
  if (state === 'unknown') return found.ageMs > foreignStaleMs;
  return false;
}

/** Removes a lock found dead, if it is still that very lock, under `<lock>.break`. */
function breakLock(lockFile: string, found: Exclude<LockFound, { kind: 'gone' }>): void {
  const breaker = `${lockFile}.break`;
  const mine: LockRecord = { ...currentProcess(), since: new Date().toISOString(), nonce: newNonce() };
  if (!placeExclusive(breaker, mine)) {
    // Someone else is breaking in; their break lock is removed only if they died doing it.
    const other = readLock(breaker);
    if (other.kind === 'held' && (liveness(other.record) === 'dead' || other.ageMs > BREAK_STALE_MS)) releaseLock(breaker, other.record.nonce);
    else if (other.kind === 'unreadable' && other.ageMs > BREAK_STALE_MS) rmSync(breaker, { recursive: true, force: true });
    return;
  }
  try {
    const again = readLock(lockFile);
    const same =
      again.kind !== 'gone' &&
      again.kind === found.kind &&
      again.ino === found.ino &&
      // A record file is rewritten in place for each taking (same inode): its time tells a new taking apart.
      again.mtimeMs === found.mtimeMs &&
      (again.kind === 'unreadable' || (found.kind === 'held' && again.record.nonce === found.record.nonce));
    if (same) {
      rmSync(lockFile, { recursive: true, force: true });
      // What the dead holder kept beside its lock goes with it (a live process's stay).
      removeDeadRecordFiles(lockFile);
    }
  } finally {
    releaseLock(breaker, mine.nonce);
  }
}

/**
 * Creates `file` holding `record` unless it exists (false then). The record is written to a temp
 * file first and hard-linked into place: link() is atomic and fails when the name exists, so a
 * lock never appears empty or half-written, even when its taker is killed halfway.
 *
 * The temp file is this process's own for that lock (recordFileFor) and is rewritten in place for
 * the next taking rather than made anew: a new file costs the file system an inode each time,
 * and on a busy board that was a good part of huddle's own work per task.
 */
export function placeExclusive(file: string, record: LockRecord, madeDir = false): boolean {
  const { temp, reused } = recordFileFor(file);
  try {
    writeRecordFile(temp, `${JSON.stringify(record)}\n`);
  } catch (error) {
    forgetRecordFile(file, temp, reused);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !madeDir) {
      makeDirectory(path.dirname(file));
      return placeExclusive(file, record, true);
    }
    throw StoreWriteError.from(error, file);
  }
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    forgetRecordFile(file, temp, reused);
    throw StoreWriteError.from(error, file);
  } finally {
    if (!reused) removeQuietly(temp);
  }
}

/** Whether the kept record files are removed at exit (registered once). */
let removalAtExit = false;

/** Lock → this process's record file for it, kept between takings (removed when the process exits). */
const recordFiles = new Map<string, string>();
/** A process that takes many different locks keeps no more record files than this; others are made per taking. */
const MAX_RECORD_FILES = 64;

/**
 * The temp file a record for `file` is written to. The kept one is reused only while no lock name
 * links to it (one link): while it is a held lock (a second taking in this process, of the team's
 * lock say), rewriting it would change that lock's holder, so a new temp file is made instead.
 */
function recordFileFor(file: string): { temp: string; reused: boolean } {
  const kept = recordFiles.get(file);
  if (kept !== undefined) {
    let links = 1;
    try {
      links = statSync(kept).nlink;
    } catch {
      // Gone (its directory removed, say): written anew under the same name.
    }
    if (links === 1) return { temp: kept, reused: true };
  }
  // The nonce's random part keeps the name this process's own: a process that reuses a dead
  // holder's pid (a container's pid 7, restarted) must never write into that holder's files.
  const temp = `${file}.${process.pid}.${newNonce()}.tmp`;
  if (kept !== undefined || recordFiles.size >= MAX_RECORD_FILES || path.basename(file).endsWith('.break')) return { temp, reused: false };
  if (!removalAtExit) {
    removalAtExit = true;
    atExit(removeRecordFiles);
  }
  recordFiles.set(file, temp);
  removeDeadRecordFiles(file);
  return { temp, reused: true };
}

/**
 * The record files a killed process kept for this lock, removed when this process first takes
 * it: only those whose own record names a holder that is dead on this host (a live or another
 * host's one, or one being written and not readable whole, is left alone). The lock itself is
 * another name: a dead holder's lock is still taken over as before.
 */
function removeDeadRecordFiles(file: string): void {
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(path.dirname(file));
  } catch {
    return; // No directory yet: nothing left over in it.
  }
  for (const name of names) {
    const pid = RECORD_FILE_NAME.exec(name.slice(prefix.length))?.[1];
    if (!name.startsWith(prefix) || pid === undefined) continue;
    const candidate = path.join(path.dirname(file), name);
    let record: LockRecord | undefined;
    try {
      record = parseRecord(readFileSync(candidate, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW }));
    } catch {
      continue; // Gone meanwhile, or not a plain file: not ours to judge.
    }
    // This process's own are kept; an earlier process's of the same pid (since restarted) are dead.
    if (record && record.pid === Number(pid) && !isCurrentProcess(record) && liveness(record) === 'dead') removeQuietly(candidate);
  }
}

/** `<pid>.<nonce>.tmp`, after the lock's name and a dot. */
const RECORD_FILE_NAME = /^(\d+)\.[0-9a-z]+\.tmp$/;

/** Whether `name` is a lock's record file, `<lock>.<pid>.<nonce>.tmp`: a process's own, not the state it guards. */
export function isLockRecordFile(name: string): boolean {
  const at = name.indexOf('.lock.');
  return at >= 0 && RECORD_FILE_NAME.test(name.slice(at + '.lock.'.length));
}

/**
 * The record written over the file's old bytes, then cut to its length: never truncated to zero
 * first (ext4 then forces the file's blocks to disk when it is closed, the cost of a new file
 * and more).
 */
function writeRecordFile(temp: string, text: string): void {
  const bytes = Buffer.from(text);
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written, written);
    ftruncateSync(fd, bytes.length);
  } finally {
    closeSync(fd);
  }
}

/** A kept record file that failed is not kept: the next taking starts from a new one. */
function forgetRecordFile(file: string, temp: string, reused: boolean): void {
  removeQuietly(temp);
  if (reused && recordFiles.get(file) === temp) recordFiles.delete(file);
}

function removeRecordFiles(): void {
  for (const temp of recordFiles.values()) removeQuietly(temp);
  recordFiles.clear();
}

/** unlink, ignoring a file that is not there (cheaper than rmSync's checks, on the claim path). */
function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

/** Removes the lock if it is still the one taken with `nonce` (someone may have broken it meanwhile). */
function releaseLock(lockFile: string, nonce: string): void {
  try {
    const found = readLock(lockFile);
    if (found.kind === 'held' && found.record.nonce === nonce) unlinkSync(lockFile);
  } catch {
    // Nothing to release, or nothing we can do about it: a dead holder's lock is taken over anyway.
  }
}

function parseRecord(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string' || typeof value.nonce !== 'string') return undefined;
    return {
      pid: value.pid,
      host: value.host,
      nonce: value.nonce,
      since: typeof value.since === 'string' ? value.since : '',
      ...(typeof value.start === 'string' ? { start: value.start } : {}),
    };
  } catch {
    return undefined;
  }
}
