// What this process knows of one board directory, shared by every FileBoard on it: each task
// file as last read (keyed by its stat, so a scan parses only what changed), the ids that may be
// claimable (so a claim does not look at every file before the first free task), the change
// listeners and the one directory watcher that tells them about other processes' writes.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DirectoryWatcher } from '../../../fs/directory-watcher.js';
import type { BoardChange, BoardChangeListener, BoardProblem } from '../../board.js';
import { listTaskFiles, type Listing, readTaskFile, statKey, statOrUndefined, TASK_FILE, taskFileName, type TaskEntry } from './task-files.js';

export type WarningSink = (problem: BoardProblem) => void;

const WATCH_DEBOUNCE_MS = 15;
const FALLBACK_POLL_MS = 1_000;

export class BoardCache {
  readonly dir: string;
  readonly listeners = new Set<BoardChangeListener>();
  readonly #entries = new Map<number, TaskEntry>();
  /**
   * Ascending ids that may be pending: those last read as pending, and those listed but not read
   * yet. A claim walks these, reading unknown ones as it goes, instead of every file on the board.
   */
  #candidates: number[] = [];
  /** Blocker → the ids read so far whose blockedBy lists it: a completion looks up its dependents, not every task. */
  readonly #dependents = new Map<number, Set<number>>();
  /** Ids read so far whose task is in review. */
  readonly #inReview = new Set<number>();
  #primed = false;
  readonly #warned = new Set<string>();
  #watcher: DirectoryWatcher | undefined;
  #watchFailed = false;
  #watchWarn: WarningSink = () => undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Whether the directory watcher keeps this cache current with other processes' writes. */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  fileOf(id: number): string {
    return path.join(this.dir, taskFileName(id));
  }

  /** The entry as last read, without looking at the file. */
  cached(id: number): TaskEntry | undefined {
    return this.#entries.get(id);
  }

  /** The entry of one task file, re-read when its stat changed (or `force`); undefined when absent. */
  load(id: number, warn: WarningSink, force = false): TaskEntry | undefined {
    const file = this.fileOf(id);
    const cached = this.#entries.get(id);
    if (cached && !force) {
      const stat = statOrUndefined(file);
      if (!stat) {
        this.#forget(id);
        return undefined;
      }
      if (statKey(stat) === cached.key) return cached;
    }
    const entry = readTaskFile(file, id);
    if (!entry) {
      this.#forget(id);
      return undefined;
    }
    this.#remember(id, entry);
    if (entry.problem) this.warnOnce(entry.problem, entry.text ?? '', warn);
    return entry;
  }

  /** Records what a board write of this process just stored. */
  stored(id: number, entry: TaskEntry): void {
    this.#remember(id, entry);
  }

  /** Every file of the board, each read if it changed: the listing, with the cache brought up to date. */
  scanAll(warn: WarningSink): Listing {
    const listing = listTaskFiles(this.dir);
    const present = new Set(listing.ids);
    for (const id of [...this.#entries.keys()]) if (!present.has(id)) this.#forget(id);
    for (const id of listing.ids) this.load(id, warn);
    for (const problem of listing.unsafe) this.warnOnce(problem, '', warn);
    this.#primed = true;
    return listing;
  }

  /**
   * The ids a claim should try, ascending. The first call lists the directory and reads nothing:
   * unknown ids are read by the claim as it walks them.
   */
  candidates(): readonly number[] {
    if (!this.#primed) {
      const listing = listTaskFiles(this.dir);
      for (const id of listing.ids) if (!this.#entries.has(id)) insertSorted(this.#candidates, id);
      this.#primed = true;
    }
    return this.#candidates;
  }

  /** Ids of tasks read so far whose blockedBy lists `id`. */
  dependentsOf(id: number): number[] {
    return [...(this.#dependents.get(id) ?? [])];
  }

  /** Ids read so far whose task is in review, ascending. */
  inReview(): number[] {
    return [...this.#inReview].sort((a, b) => a - b);
  }

  /** Once per distinct content of a file, not on every scan. */
  warnOnce(problem: BoardProblem, text: string, warn: WarningSink): void {
    const token = createHash('sha1').update(problem.file).update('\0').update(problem.error).update('\0').update(text).digest('hex');
    if (this.#warned.has(token)) return;
    this.#warned.add(token);
    warn(problem);
  }

  notify(change: BoardChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // A broken listener must not break the writer.
      }
    }
  }

  /**
   * Starts watching once there is someone to tell. When the last listener leaves, the watcher stays
   * until the board is closed (`closing`): it keeps the cache current, so an idle teammate's
   * hasClaimable looks at the pending ids only instead of stat-ing the whole board (the teammates of
   * a busy team come and go as listeners). It holds no process open. One that polls (fs.watch failed)
   * lists the whole directory every second: that one stops with the last listener, as before.
   */
  syncWatcher(onWarning: WarningSink, closing = false): void {
    this.#watchWarn = onWarning;
    if (this.listeners.size > 0) {
      this.#startWatcher();
      return;
    }
    if (closing || this.#watcher?.polling) {
      this.#watcher?.close();
      this.#watcher = undefined;
    }
  }

  /**
   * For a read that would otherwise look at every file each time (hasClaimable): starts the watcher
   * when none runs. True: the cache was current already; false: the caller reads the board once now
   * (the watcher, started first, reports anything that changes during that read).
   */
  keepCurrent(onWarning: WarningSink): boolean {
    if (this.#watcher) return true;
    // fs.watch failed here before: the caller reads the board (a poll would read it every second).
    if (this.#watchFailed) return false;
    this.#watchWarn = onWarning;
    this.#startWatcher();
    if (this.#watcher!.polling) {
      this.#watchFailed = true;
      this.#watcher!.close();
      this.#watcher = undefined;
    }
    return false;
  }

  #startWatcher(): void {
    this.#watcher ??= new DirectoryWatcher(this.dir, {
      accept: (name) => TASK_FILE.test(name),
      onChange: (names) => {
        const ids = this.changedSince(names);
        if (ids.length > 0) this.notify({ source: 'external', ids });
      },
      onFallback: (message) => this.#watchWarn({ file: this.dir, error: message, message: `watching the task board failed: ${message}` }),
      debounceMs: WATCH_DEBOUNCE_MS,
      pollMs: FALLBACK_POLL_MS,
    });
  }

  /**
   * Ids whose files differ from what this process last saw (the given names, or the whole
   * directory); the cache is brought up to date, so each change is reported once.
   */
  changedSince(names: string[] | undefined): number[] {
    const changed = new Set<number>();
    let ids: number[];
    if (names) ids = names.map((name) => Number(TASK_FILE.exec(name)?.[1])).filter((id) => Number.isSafeInteger(id));
    else {
      ids = listTaskFiles(this.dir).ids;
      const present = new Set(ids);
      for (const id of [...this.#entries.keys()]) {
        if (!present.has(id)) {
          this.#forget(id);
          changed.add(id);
        }
      }
    }
    for (const id of ids) {
      const before = this.#entries.get(id)?.key;
      const after = this.load(id, this.#watchWarn)?.key;
      if (before !== after) changed.add(id);
    }
    return [...changed].sort((a, b) => a - b);
  }

  #remember(id: number, entry: TaskEntry): void {
    this.#unindex(id);
    this.#entries.set(id, entry);
    if (entry.task?.status === 'pending') insertSorted(this.#candidates, id);
    else removeSorted(this.#candidates, id);
    if (entry.task?.status === 'review') this.#inReview.add(id);
    for (const blocker of entry.task?.blockedBy ?? []) {
      let dependents = this.#dependents.get(blocker);
      if (!dependents) this.#dependents.set(blocker, (dependents = new Set()));
      dependents.add(id);
    }
  }

  #forget(id: number): void {
    this.#unindex(id);
    this.#entries.delete(id);
    removeSorted(this.#candidates, id);
  }

  /** Takes the entry of `id` as last read out of the dependents and review indexes. */
  #unindex(id: number): void {
    const task = this.#entries.get(id)?.task;
    if (!task) return;
    this.#inReview.delete(id);
    for (const blocker of task.blockedBy) {
      const dependents = this.#dependents.get(blocker);
      dependents?.delete(id);
      if (dependents?.size === 0) this.#dependents.delete(blocker);
    }
  }
}

const caches = new Map<string, BoardCache>();

/** The one cache of this process for `dir`. */
export function boardCacheFor(dir: string): BoardCache {
  let cache = caches.get(dir);
  if (!cache) {
    cache = new BoardCache(dir);
    caches.set(dir, cache);
  }
  return cache;
}

function indexOf(sorted: number[], id: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(sorted: number[], id: number): void {
  const at = indexOf(sorted, id);
  if (sorted[at] !== id) sorted.splice(at, 0, id);
}

function removeSorted(sorted: number[], id: number): void {
  const at = indexOf(sorted, id);
  if (sorted[at] === id) sorted.splice(at, 1);
}
