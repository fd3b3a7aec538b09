// The file lock (store/file-lock.ts): it names its holder; a live holder is waited for, a
// dead one's lock is taken over at once (no staleness timeout), with real processes.
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentProcess } from '../../../src/runtime/fs/process-identity.js';
import { readLock, tryLock, withFileLock } from '../../../src/runtime/store/file-lock.js';
import { bundleFixture, runFixture } from './file/fixtures/bundle.js';

let dir: string;
let holder: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-lock-'));
  holder = await bundleFixture('lock-holder');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child holding `file`'s lock; resolves once it holds it. */
async function holdInChild(file: string) {
  let locked!: (pid: number) => void;
  const ready = new Promise<number>((resolve) => (locked = resolve));
  const run = runFixture(holder, { mode: 'file', file }, (line) => {
    const event = JSON.parse(line) as { event: string; pid: number };
    if (event.event === 'locked') locked(event.pid);
  });
  const pid = await Promise.race([ready, run.exited.then((exit) => Promise.reject(new Error(`holder exited: ${exit.stderr}`)))]);
  return { ...run, pid };
}

describe('file lock', () => {
  it('records who holds it: pid, process start time, host, since when', async () => {
    const file = path.join(dir, 'a');
    await withFileLock(file, () => {
      const found = readLock(`${file}.lock`);
      expect(found.kind).toBe('held');
      if (found.kind !== 'held') return;
      expect(found.record).toMatchObject({ pid: process.pid, host: hostname() });
      expect(found.record.start).toBe(currentProcess().start); // from /proc/<pid>/stat on Linux
      expect(typeof found.record.start).toBe('string');
      expect(Number.isNaN(Date.parse(found.record.since))).toBe(false);
    });
    expect(readLock(`${file}.lock`)).toEqual({ kind: 'gone' });
  });

  it('waits for a live holder in another process, and gets the lock when it lets go', async () => {
    const file = path.join(dir, 'b');
    const child = await holdInChild(file);
    const attempt = tryLock(`${file}.lock`);
    expect(attempt).toMatchObject({ acquired: false, holder: { pid: child.pid } });
    let mine = false;
    const waiting = withFileLock(file, () => {
      mine = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(mine).toBe(false);
    child.child.stdin!.end('release\n');
    await waiting;
    expect(mine).toBe(true);
    expect((await child.exited).code).toBe(0);
  });

  it('takes over at once the lock of a holder that was SIGKILLed', async () => {
    const file = path.join(dir, 'c');
    const child = await holdInChild(file);
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    // The lock is as fresh as can be (younger than any staleness timeout): only the dead pid tells.
    utimesSync(`${file}.lock`, new Date(), new Date());
    expect(readLock(`${file}.lock`)).toMatchObject({ kind: 'held', record: { pid: child.pid } });
    const attempt = tryLock(`${file}.lock`); // one attempt, no waiting
    expect(attempt.acquired).toBe(true);
    if (attempt.acquired) attempt.release();
  });

  it('a live pid with another start time is a reused pid: its lock is taken over', () => {
    const lockFile = path.join(dir, 'd.lock');
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, start: '1', host: hostname(), since: new Date().toISOString(), nonce: 'old' }));
    const attempt = tryLock(lockFile);
    expect(attempt.acquired).toBe(true);
    if (attempt.acquired) {
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, start: currentProcess().start });
      attempt.release();
    }
  });

  it("waits for another host's fresh lock and for a young unreadable one; takes over old ones", () => {
    const foreign = path.join(dir, 'e.lock');
    writeFileSync(foreign, JSON.stringify({ pid: 1, host: 'some-other-host', since: new Date().toISOString(), nonce: 'x' }));
    expect(tryLock(foreign)).toMatchObject({ acquired: false, holder: { host: 'some-other-host' } });
    const old = new Date(Date.now() - 60_000);
    utimesSync(foreign, old, old);
    const taken = tryLock(foreign);
    expect(taken.acquired).toBe(true);
    if (taken.acquired) taken.release();

    // A lock directory left by an older huddle (proper-lockfile): waited for while young, removed when old.
    const legacy = path.join(dir, 'f.lock');
    mkdirSync(legacy);
    expect(tryLock(legacy)).toMatchObject({ acquired: false, holder: undefined });
    utimesSync(legacy, old, old);
    const again = tryLock(legacy);
    expect(again.acquired).toBe(true);
    if (again.acquired) again.release();
  });

  it('takes its lock again without making a new file each time: its record file is kept and rewritten, and removed when the process exits', async () => {
    const sub = path.join(dir, 'reuse');
    mkdirSync(sub);
    const file = path.join(sub, 'g');
    const inodes = new Set<number>();
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) {
      await withFileLock(file, () => {
        const found = readLock(`${file}.lock`);
        expect(found.kind).toBe('held');
        if (found.kind === 'held') nonces.add(found.record.nonce);
        const lock = statSync(`${file}.lock`);
        // Linked from the kept record file, not made anew.
        expect(lock.nlink).toBe(2);
        inodes.add(lock.ino);
      });
    }
    expect(nonces.size).toBe(5);
    const kept = readdirSync(sub);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(new RegExp(`^g\\.lock\\.${process.pid}\\.[0-9a-z]+\\.tmp$`));
    expect([...inodes]).toEqual([statSync(path.join(sub, kept[0]!)).ino]);

    // Another process's kept record file goes when it exits.
    const other = path.join(dir, 'reuse-child');
    mkdirSync(other);
    const child = await holdInChild(path.join(other, 'g'));
    expect(readdirSync(other).some((name) => name.endsWith('.tmp'))).toBe(true);
    child.child.stdin!.end('release\n');
    expect((await child.exited).code).toBe(0);
    expect(readdirSync(other)).toEqual([]);
  });

  it("removes the record file a SIGKILLed process kept for a lock when it first takes that lock, and no live process's", async () => {
    const sub = path.join(dir, 'leftover');
    mkdirSync(sub);
    const file = path.join(sub, 'k');
    const child = await holdInChild(file);
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    const own = (name: string) => name.startsWith(`k.lock.${child.pid}.`) && name.endsWith('.tmp');
    expect(readdirSync(sub).filter(own)).toHaveLength(1);
    // A live process's record file (the test runner's parent) is left alone.
    const live = `k.lock.${process.ppid}.0.tmp`;
    writeFileSync(path.join(sub, live), `${JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString(), nonce: 'n' })}\n`);
    await withFileLock(file, () => undefined);
    expect(readdirSync(sub).filter(own)).toEqual([]);
    expect(readdirSync(sub)).toContain(live);
    rmSync(path.join(sub, live));
  });

  it("a second taking while the first holds the lock never rewrites the holder's record", () => {
    const lockFile = path.join(dir, 'h.lock');
    const first = tryLock(lockFile);
    expect(first.acquired).toBe(true);
    if (!first.acquired) return;
    const second = tryLock(lockFile);
    expect(second).toMatchObject({ acquired: false, holder: { pid: process.pid, nonce: first.record.nonce } });
    expect(readLock(lockFile)).toMatchObject({ kind: 'held', record: { nonce: first.record.nonce } });
    first.release();
    expect(readLock(lockFile).kind).toBe('gone');
    const third = tryLock(lockFile);
    expect(third.acquired).toBe(true);
    if (third.acquired) third.release();
  });

  it('an earlier process of the same pid (a container restarted) left its record file linked as the lock: taken over, its files removed, never written into', () => {
    const lockFile = path.join(dir, 'r.lock');
    // What a SIGKILLed holder with this pid leaves: the lock, a hard link to its kept record file, under every name it may have had.
    const leftovers = [`${lockFile}.${process.pid}.0.tmp`, `${lockFile}.${process.pid}.1.tmp`];
    const old = `${JSON.stringify({ pid: process.pid, start: '1', host: hostname(), since: new Date().toISOString(), nonce: 'deadbeef0' })}\n`;
    for (const leftover of leftovers) writeFileSync(leftover, old);
    linkSync(leftovers[0]!, lockFile);
    const attempt = tryLock(lockFile);
    expect(attempt.acquired).toBe(true);
    if (!attempt.acquired) return;
    expect(readLock(lockFile)).toMatchObject({ kind: 'held', record: { nonce: attempt.record.nonce, start: currentProcess().start } });
    for (const leftover of leftovers) expect(readdirSync(dir)).not.toContain(path.basename(leftover));
    attempt.release();
  });
});
