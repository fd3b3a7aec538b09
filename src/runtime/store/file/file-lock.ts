// Mutual exclusion over a file, across the agents of this process and across processes.
// proper-lockfile gives the cross-process part (an atomic mkdir of `<file>.lock`, kept fresh
// while held, taken over when stale after a crash); a promise chain per path in front of it
// keeps in-process callers queued in order instead of spinning on the lock directory.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

const STALE_MS = 10_000;
const inProcessQueues = new Map<string, Promise<unknown>>();

/** Runs `work` while holding the lock named by `file` (the file itself need not exist). */
export async function withFileLock<T>(file: string, work: () => Promise<T> | T): Promise<T> {
  const key = path.resolve(file);
  const previous = inProcessQueues.get(key) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => lockAcrossProcesses(key, work));
  const tail = run.catch(() => undefined);
  inProcessQueues.set(key, tail);
  try {
    return await run;
  } finally {
    if (inProcessQueues.get(key) === tail) inProcessQueues.delete(key);
  }
}

async function lockAcrossProcesses<T>(file: string, work: () => Promise<T> | T): Promise<T> {
  mkdirSync(path.dirname(file), { recursive: true });
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: STALE_MS,
    retries: { retries: 2_000, factor: 1.2, minTimeout: 1, maxTimeout: 25, randomize: true },
    // The default throws from a timer and would crash the process; a lock we lost shows up
    // as a failed release below instead.
    onCompromised: () => undefined,
  });
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
