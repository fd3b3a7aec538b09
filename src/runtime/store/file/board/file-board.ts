// The file backend's task board (docs/contract.md#task-files): one JSON file per task in the workspace's
// `.tasks/`, shared by every agent of this process and by other processes on the same directory.
// The rules are the backend-neutral ones of store/board/; this file runs them under the lock.
//
// Correctness rests on three things:
// - ONE board-wide lock (`<dir>/.board.lock`, see file-lock.ts) around every change, so id
//   allocation, claims and dependency updates spanning several files never interleave;
// - every write is atomic (task-files.ts), so a reader outside the lock never sees half a task;
// - a claim reads the task's file itself under the lock before writing it: the cache only
//   suggests which task to try, the file decides, so two claimers never both win.
import path from 'node:path';
import type { EventHub } from '../../../events/events.js';
import { withFileLock } from '../../file-lock.js';
import type { Board, BoardChangeListener, BoardProblem, BoardScan } from '../../board.js';
import { findCycles } from '../../board/dependencies.js';
import { claimed, isClaimable, isClaimableBy, mayReview, planClaim, planCreate, planReviewDecision, releaseChange } from '../../board/rules.js';
import {
  type CreateTaskInput,
  formatIds,
  formatPath,
  type ReviewDecision,
  type ReviewOutcome,
  type Task,
  TaskBoardError,
  type TaskChange,
  type UpdateTaskInput,
} from '../../board/task.js';
import { planUpdate } from '../../board/update.js';
import { viewOf, type BoardView } from '../../board/view.js';
import { type BoardCache, boardCacheFor, type WarningSink } from './board-cache.js';
import { createTaskFile, listTaskFiles, LOCK_NAME, MalformedTaskFileError, readHighestId, writeHighestId, writeTaskFile } from './task-files.js';

export { MalformedTaskFileError, taskFileName } from './task-files.js';
export { formatIds } from '../../board/task.js';

export interface FileBoardOptions {
  events?: EventHub;
  /** Default acting agent for calls that do not name one (and for warnings). Defaults to 'lead'. */
  agent?: string;
}

export class FileBoard implements Board {
  readonly dir: string;
  readonly #cache: BoardCache;
  readonly #events: EventHub | undefined;
  readonly #agent: string;
  readonly #lockFile: string;
  readonly #myListeners = new Set<BoardChangeListener>();
  readonly #warnedCycles = new Set<string>();

  constructor(dir: string, opts: FileBoardOptions = {}) {
    this.dir = path.resolve(dir);
    this.#cache = boardCacheFor(this.dir);
    this.#events = opts.events;
    this.#agent = opts.agent ?? 'lead';
    this.#lockFile = path.join(this.dir, LOCK_NAME);
  }

  // ---- reading ------------------------------------------------------------------------------

  async list(): Promise<Task[]> {
    return (await this.scan()).tasks;
  }

  /** Every readable task, the files skipped and why, and the dependency loops on the board. */
  async scan(): Promise<BoardScan> {
    const listing = this.#cache.scanAll(this.#warnSink);
    const tasks: Task[] = [];
    const problems: BoardProblem[] = [];
    for (const id of listing.ids) {
      const entry = this.#cache.cached(id);
      if (entry?.task) tasks.push(clone(entry.task));
      else if (entry?.problem) problems.push(entry.problem);
    }
    problems.push(...listing.unsafe);
    const cycles = findCycles(viewOf(tasks));
    for (const cycle of cycles) this.#warnCycle(cycle);
    return { tasks, problems, cycles };
  }

  async get(id: number): Promise<Task> {
    const entry = this.#cache.load(id, this.#warnSink);
    if (!entry) throw this.#notFound(id);
    if (entry.problem) throw new MalformedTaskFileError(entry.problem.file, entry.problem.error);
    return clone(entry.task!);
  }

  /** Tasks anyone may claim now, by id: pending, no owner, nothing open in blockedBy. */
  async claimable(): Promise<Task[]> {
    const { tasks, problems } = await this.scan();
    const view = viewOf(
      tasks,
      problems.flatMap((p) => idOfFile(p.file)),
    );
    return tasks.filter((task) => isClaimable(task, view));
  }

  /**
   * Whether any task is claimable: only the ids that may be pending are looked at (each file
   * re-read only when its stat changed). The whole directory is read only when no watcher kept the
   * cache current: the first time (which starts one until the board closes), or when fs.watch
   * failed and nobody listens. Given `owner`, a pending task assigned to it counts too (claimNext
   * takes those): the candidates hold every id that may be pending, owned or not.
   */
  async hasClaimable(owner?: string): Promise<boolean> {
    if (!this.#cache.keepCurrent(this.#warnSink)) this.#cache.scanAll(this.#warnSink);
    const view = this.#rememberedView();
    for (const id of [...this.#cache.candidates()]) {
      const task = this.#cache.load(id, this.#warnSink)?.task;
      if (task && (owner === undefined ? isClaimable(task, view) : isClaimableBy(task, owner, view))) return true;
    }
    return false;
  }

  /** Tasks waiting in review that `reviewer` may take (claimReview would). */
  async reviewable(reviewer?: string): Promise<Task[]> {
    return (await this.scan()).tasks.filter((task) => mayReview(task, reviewer));
  }

  // ---- writing ------------------------------------------------------------------------------

  async create(input: CreateTaskInput, by: string = this.#agent): Promise<Task> {
    if (!input.subject.trim()) throw new TaskBoardError('a task needs a subject: one line saying what is to be done');
    return this.#mutate(by, (tx) => {
      // Above every id on the board and every id ever given out; a name taken meanwhile (by hand) is skipped.
      let id = Math.max(readHighestId(this.dir), listTaskFiles(this.dir).ids.at(-1) ?? 0) + 1;
      for (;;) {
        const { task, changes } = planCreate(input, id, new Date().toISOString(), tx.view, by);
        if (tx.create(task)) {
          writeHighestId(this.dir, id);
          for (const change of changes.slice(1)) tx.write(change);
          return task;
        }
        id += 1;
      }
    });
  }

  async update(id: number, patch: UpdateTaskInput, by: string = this.#agent): Promise<Task> {
    return this.#mutate(by, (tx) => {
      const { task, changes } = planUpdate(tx.fresh(id), patch, by, tx.view);
      for (const change of changes) tx.write(change);
      return task;
    });
  }

  /** Claims one task for `owner`: pending, unowned (or assigned to `owner`), unblocked. */
  async claim(id: number, owner: string): Promise<Task> {
    return this.#mutate(owner, (tx) => {
      const task = planClaim(tx.fresh(id), owner, tx.view);
      tx.write({ action: 'claimed', task });
      return task;
    });
  }

  /**
   * Atomically claims the first task by id that `owner` may take (pending and unblocked, unowned
   * or already assigned to `owner`). Undefined when there is none.
   */
  async claimNext(owner: string): Promise<Task | undefined> {
    return this.#mutate(owner, (tx) =>
      this.#claimFirst(
        tx,
        () => [...this.#cache.candidates()],
        (task, view) => isClaimableBy(task, owner, view),
        (task) => {
          const next = claimed(task, owner);
          tx.write({ action: 'claimed', task: next });
          return next;
        },
      ),
    );
  }

  /**
   * Atomically takes the first task by id waiting in review for `reviewer` (sets `reviewer`, as a
   * claim sets the owner): two reviewers never both take the same review. Undefined when none.
   */
  async claimReview(reviewer: string): Promise<Task | undefined> {
    return this.#mutate(reviewer, (tx) =>
      this.#claimFirst(
        tx,
        () => this.#cache.inReview(),
        (task) => mayReview(task, reviewer),
        (task) => {
          const taken: Task = { ...task, reviewer };
          tx.write({ action: 'review_claimed', task: taken });
          return taken;
        },
      ),
    );
  }

  async decideReview(id: number, by: string, decision: ReviewDecision): Promise<ReviewOutcome> {
    return this.#mutate(by, (tx) => {
      const { result, changes } = planReviewDecision(tx.fresh(id), by, decision, tx.view);
      for (const change of changes) tx.write(change);
      return result;
    });
  }

  /**
   * Puts every unfinished task of `owner` (an agent that is gone) back to pending and unowned,
   * and gives the reviews it had taken back to the other reviewers.
   */
  async release(owner: string, by: string = this.#agent): Promise<Task[]> {
    return this.#mutate(by, (tx) => {
      const released: Task[] = [];
      for (const id of tx.view.ids()) {
        const cached = this.#cache.load(id, this.#warnSink)?.task;
        if (!cached || !releaseChange(cached, owner, by)) continue;
        const fresh = tx.freshOrUndefined(id);
        const change = fresh && releaseChange(fresh, owner, by);
        if (!change) continue;
        tx.write(change);
        released.push(change.task);
      }
      return released;
    });
  }

  // ---- change subscription -----------------------------------------------------------------

  /**
   * Calls `listener` after every write through any board of this process on this directory, and
   * (watching the directory) when another process or a person changes a task file.
   */
  onChange(listener: BoardChangeListener): () => void {
    this.#myListeners.add(listener);
    this.#cache.listeners.add(listener);
    this.#cache.syncWatcher(this.#warnSink);
    return () => {
      this.#myListeners.delete(listener);
      this.#cache.listeners.delete(listener);
      this.#cache.syncWatcher(this.#warnSink);
    };
  }

  /** Drops this board's listeners; the directory watcher stops when no board of the process listens. */
  close(): void {
    for (const listener of this.#myListeners) this.#cache.listeners.delete(listener);
    this.#myListeners.clear();
    this.#cache.syncWatcher(this.#warnSink, true);
  }

  // ---- internals ----------------------------------------------------------------------------

  /**
   * Walks `candidates` (ascending ids the cache suggests), judging each first on what the cache
   * holds, then on its file read now; takes the first that passes. When none does, the cache may
   * be missing another process's changes: the whole board is read again and walked once more.
   */
  #claimFirst(tx: Transaction, candidates: () => number[], accept: (task: Task, view: BoardView) => boolean, take: (task: Task) => Task): Task | undefined {
    const remembered = this.#rememberedView();
    for (let pass = 0; pass < 2; pass++) {
      for (const id of candidates()) {
        const known = this.#cache.cached(id);
        if (known && (!known.task || !accept(known.task, remembered))) continue;
        const task = tx.freshOrUndefined(id); // the file itself, not the cache, decides
        if (task && accept(task, tx.view)) return take(task);
      }
      if (pass === 0) this.#cache.scanAll(this.#warnSink);
    }
    return undefined;
  }

  /** The board as last read, without looking at any file (to rule out candidates cheaply). */
  #rememberedView(): BoardView {
    const cache = this.#cache;
    return {
      require: (id) => {
        const task = cache.cached(id)?.task;
        if (!task) throw this.#notFound(id);
        return task;
      },
      find: (id) => cache.cached(id)?.task,
      unreadable: (id) => cache.cached(id)?.problem !== undefined,
      ids: () => listTaskFiles(this.dir).ids,
      dependentsOf: (id) => cache.dependentsOf(id),
    };
  }

  #warnSink: WarningSink = (problem) => {
    this.#events?.emit(this.#agent, 'warning', { message: problem.message, file: problem.file, error: problem.error });
  };

  #warnCycle(cycle: number[]): void {
    const key = cycle.join(',');
    if (this.#warnedCycles.has(key)) return;
    this.#warnedCycles.add(key);
    this.#events?.emit(this.#agent, 'warning', {
      message: `tasks ${formatPath(cycle)} wait for each other (each arrow: blocks), so none of them can ever start; remove one of these dependencies from a task file in ${this.dir}`,
      cycle,
    });
  }

  #notFound(id: number): TaskBoardError {
    const { ids } = listTaskFiles(this.dir);
    return new TaskBoardError(ids.length === 0 ? `no task #${id}; the board is empty` : `no task #${id}; existing tasks: ${formatIds(ids)}`);
  }

  /** Runs `work` under the board lock; events and change listeners fire after the lock is released. */
  async #mutate<T>(by: string, work: (tx: Transaction) => T): Promise<T> {
    const changes: TaskChange[] = [];
    try {
      // Taking the lock creates the directory when it is missing.
      return await withFileLock(this.#lockFile, () => work(this.#transaction(changes)));
    } finally {
      // Whatever was written is announced, also when a later step failed.
      for (const { action, task } of changes) {
        this.#events?.emit(by, 'task', { action, task: clone(task) });
        this.#cache.notify({ source: 'local', action, task: clone(task), agent: by });
      }
    }
  }

  #transaction(changes: TaskChange[]): Transaction {
    const cache = this.#cache;
    const warn = this.#warnSink;
    const readable = (id: number, force: boolean): Task | undefined => {
      const entry = cache.load(id, warn, force);
      if (entry?.problem) throw new MalformedTaskFileError(entry.problem.file, entry.problem.error);
      return entry?.task;
    };
    const view: BoardView = {
      require: (id) => {
        const task = readable(id, false);
        if (!task) throw this.#notFound(id);
        return task;
      },
      find: (id) => cache.load(id, warn)?.task,
      unreadable: (id) => cache.load(id, warn)?.problem !== undefined,
      ids: () => listTaskFiles(this.dir).ids,
      dependentsOf: (id) => cache.dependentsOf(id),
    };
    const stamp = (change: TaskChange): Task => (change.action === 'created' ? change.task : { ...change.task, updated_at: new Date().toISOString() });
    return {
      view,
      fresh: (id) => {
        const task = readable(id, true);
        if (!task) throw this.#notFound(id);
        return task;
      },
      freshOrUndefined: (id) => cache.load(id, warn, true)?.task,
      create: (task) => {
        const key = createTaskFile(cache.fileOf(task.id), task);
        if (key === false) return false;
        cache.stored(task.id, { key, task: clone(task) });
        changes.push({ action: 'created', task });
        return true;
      },
      write: (change) => {
        // Synchronous: a few hundred microseconds under the lock, against twice that through the
        // thread pool, and nothing else of this process can interleave between write and stat.
        const stored = stamp(change);
        const key = writeTaskFile(cache.fileOf(stored.id), stored);
        cache.stored(stored.id, { key, task: clone(stored) });
        changes.push({ action: change.action, task: stored });
      },
    };
  }
}

interface Transaction {
  /** The board as it stands under the lock (files re-read when their stat changed). */
  view: BoardView;
  /** A task read from its file now; throws when missing or malformed. */
  fresh(id: number): Task;
  freshOrUndefined(id: number): Task | undefined;
  /** Creates a task's file; false when the name is taken. */
  create(task: Task): boolean;
  write(change: TaskChange): void;
}

function idOfFile(file: string): number[] {
  const id = Number(/^task_([1-9][0-9]*)\.json$/.exec(path.basename(file))?.[1]);
  return Number.isSafeInteger(id) ? [id] : [];
}

function clone(task: Task): Task {
  return structuredClone(task);
}
