// The task board (SPEC section 3): one JSON file per task in the workspace's `.tasks/`,
// shared by every agent of this process and by other processes on the same directory.
//
// Correctness rests on three things:
// - ONE board-wide lock (`<dir>/.board.lock`, see file-lock.ts) around every mutation, so id
//   allocation, claims and dependency updates spanning several files never interleave;
// - every write is atomic (temp file + rename; temp names never match `task_<n>.json`), so a
//   reader outside the lock never sees half a task;
// - a claim re-reads the task file under the lock before writing it: two claimers never both win.
//
// Reads go through a cache keyed by each file's stat (inode, size, mtime, ctime), so scanning a
// large board costs one readdir and a stat per file, and only changed files are parsed again.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, mkdirSync, watch, type FSWatcher, type Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MalformedFileError, writeJsonAtomicSync } from '../../fs/atomic-file.js';
import type { EventHub } from '../../events/events.js';
import { withFileLock } from './file-lock.js';
import {
  type Board,
  type BoardChange,
  type BoardChangeListener,
  type BoardProblem,
  type CreateTaskInput,
  type ReviewDecision,
  type ReviewOutcome,
  type Task,
  type TaskAction,
  TASK_STATUSES,
  TaskBoardError,
  type UpdateTaskInput,
} from '../board.js';

export interface FileBoardOptions {
  events?: EventHub;
  /** Default acting agent for calls that do not name one (and for warnings). Defaults to 'lead'. */
  agent?: string;
}


/** A task file that exists but cannot be used: not JSON, or not the shape of a task. */
export class MalformedTaskFileError extends MalformedFileError {
  constructor(
    file: string,
    readonly detail: string,
  ) {
    super(file, detail);
    this.message = `${file} is not a valid task file (${detail}); fix or remove the file`;
    this.name = 'MalformedTaskFileError';
  }
}

const TASK_FILE = /^task_([1-9][0-9]*)\.json$/;
const LOCK_NAME = '.board.lock';
const WATCH_DEBOUNCE_MS = 15;

const Id = z.number().int().positive();
const TaskFileSchema = z.looseObject({
  id: Id,
  subject: z.string(),
  description: z.string().default(''),
  status: z.enum(TASK_STATUSES),
  owner: z.string().nullable().default(null),
  blockedBy: z.array(Id).default([]),
  blocks: z.array(Id).default([]),
  created_at: z.string(),
  updated_at: z.string(),
});

export function taskFileName(id: number): string {
  return `task_${id}.json`;
}

// ---------------------------------------------------------------------------------------------
// Per-directory state shared by every FileBoard of this process on that directory: the read
// cache, the change listeners and the one directory watcher.

interface CacheEntry {
  key: string;
  task?: Task;
  problem?: BoardProblem;
}

type WarningSink = (problem: BoardProblem) => void;

class BoardCore {
  readonly cache = new Map<number, CacheEntry>();
  readonly listeners = new Set<BoardChangeListener>();
  readonly warned = new Set<string>();
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #pendingNames = new Set<string>();
  #fullRescan = false;
  #watchWarn: WarningSink = () => undefined;

  constructor(readonly dir: string) {}

  /** The cached view of one task file, re-read when its stat changed (or `force`); undefined when absent. */
  load(id: number, warn: WarningSink, force = false): CacheEntry | undefined {
    const file = path.join(this.dir, taskFileName(id));
    const stat = statOrUndefined(file);
    if (!stat) {
      this.cache.delete(id);
      return undefined;
    }
    const key = statKey(stat);
    const cached = this.cache.get(id);
    if (cached && cached.key === key && !force) return cached;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.cache.delete(id);
        return undefined;
      }
      throw error;
    }
    const entry = parseTask(file, id, text, key);
    this.cache.set(id, entry);
    if (entry.problem) {
      // Once per distinct content of a file, not on every scan.
      const token = createHash('sha1').update(file).update('\0').update(text).digest('hex');
      if (!this.warned.has(token)) {
        this.warned.add(token);
        warn(entry.problem);
      }
    }
    return entry;
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

  /** Starts watching once there is someone to tell; stops when the last listener leaves. */
  syncWatcher(onWarning: WarningSink): void {
    this.#watchWarn = onWarning;
    if (this.listeners.size === 0) {
      this.#watcher?.close();
      this.#watcher = undefined;
      if (this.#poll) clearInterval(this.#poll);
      this.#poll = undefined;
      if (this.#debounce) clearTimeout(this.#debounce);
      this.#debounce = undefined;
      return;
    }
    if (this.#watcher || this.#poll) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      const watcher = watch(this.dir, { persistent: false }, (_event, name) => this.#onFsEvent(name));
      watcher.on('error', (error) => {
        // The directory went away or the watch broke: fall back to a slow poll.
        watcher.close();
        if (this.#watcher === watcher) this.#watcher = undefined;
        onWarning({ file: this.dir, error: `watching the task board failed (${error.message}); polling instead` });
        this.#startPolling();
      });
      this.#watcher = watcher;
    } catch (error) {
      onWarning({ file: this.dir, error: `watching the task board failed (${(error as Error).message}); polling instead` });
      this.#startPolling();
    }
  }

  #startPolling(): void {
    if (this.#poll || this.listeners.size === 0) return;
    this.#poll = setInterval(() => this.#onFsEvent(null), 1_000);
    this.#poll.unref();
  }

  #onFsEvent(name: string | Buffer | null): void {
    const file = name === null ? null : String(name);
    if (file === null) this.#fullRescan = true;
    else if (TASK_FILE.test(file)) this.#pendingNames.add(file);
    else return; // temp files, the lock directory, anything else
    if (this.#debounce) return;
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      const names = this.#fullRescan ? undefined : [...this.#pendingNames];
      this.#pendingNames.clear();
      this.#fullRescan = false;
      const ids = this.changedSince(names);
      if (ids.length > 0) this.notify({ source: 'external', ids });
    }, WATCH_DEBOUNCE_MS);
  }

  /**
   * Ids whose files differ from what this process last saw (the given names, or the whole
   * directory); the cache is brought up to date, so each change is reported once.
   */
  changedSince(names: string[] | undefined): number[] {
    const changed = new Set<number>();
    let ids: number[];
    if (names) ids = names.map((name) => Number(TASK_FILE.exec(name)?.[1]));
    else {
      ids = listTaskFiles(this.dir);
      const present = new Set(ids);
      for (const id of [...this.cache.keys()]) {
        if (!present.has(id)) {
          this.cache.delete(id);
          changed.add(id);
        }
      }
    }
    for (const id of ids) {
      const before = this.cache.get(id)?.key;
      const after = this.load(id, this.#watchWarn)?.key;
      if (before !== after) changed.add(id);
    }
    return [...changed].sort((a, b) => a - b);
  }
}

const cores = new Map<string, BoardCore>();

function coreFor(dir: string): BoardCore {
  let core = cores.get(dir);
  if (!core) {
    core = new BoardCore(dir);
    cores.set(dir, core);
  }
  return core;
}

// ---------------------------------------------------------------------------------------------

export class FileBoard implements Board {
  readonly dir: string;
  #core: BoardCore;
  #events: EventHub | undefined;
  #agent: string;
  #lockFile: string;
  #myListeners = new Set<BoardChangeListener>();

  constructor(dir: string, opts: FileBoardOptions = {}) {
    this.dir = path.resolve(dir);
    this.#core = coreFor(this.dir);
    this.#events = opts.events;
    this.#agent = opts.agent ?? 'lead';
    this.#lockFile = path.join(this.dir, LOCK_NAME);
  }

  // ---- reading ------------------------------------------------------------------------------

  /** Every readable task, by id. Malformed task files are skipped and reported as warnings. */
  async list(): Promise<Task[]> {
    return this.scan().tasks;
  }

  /** list() plus the task files that were skipped and why. */
  scan(): { tasks: Task[]; problems: BoardProblem[] } {
    const tasks: Task[] = [];
    const problems: BoardProblem[] = [];
    for (const id of listTaskFiles(this.dir)) {
      const entry = this.#load(id);
      if (entry?.task) tasks.push(clone(entry.task));
      else if (entry?.problem) problems.push(entry.problem);
    }
    return { tasks, problems };
  }

  async get(id: number): Promise<Task> {
    const entry = this.#load(id);
    if (!entry) throw this.#notFound(id);
    if (entry.problem) throw new MalformedTaskFileError(entry.problem.file, entry.problem.error);
    return clone(entry.task!);
  }

  /**
   * Tasks anyone may claim now, by id: pending, no owner, nothing open in blockedBy (the same rule
   * as claim and claimNext, which also treat a blocker that is completed or gone as met — left
   * over only if a process died between the writes of a completion).
   */
  async claimable(): Promise<Task[]> {
    const { tasks, problems } = this.scan();
    const byId = new Map(tasks.map((task) => [task.id, task]));
    const unreadable = new Set(problems.map((problem) => Number(TASK_FILE.exec(path.basename(problem.file))?.[1])));
    const open = (id: number) => unreadable.has(id) || (byId.has(id) && byId.get(id)!.status !== 'completed');
    return tasks.filter((task) => task.status === 'pending' && task.owner === null && !task.blockedBy.some(open));
  }

  // ---- writing ------------------------------------------------------------------------------

  async create(input: CreateTaskInput, by: string = this.#agent): Promise<Task> {
    const subject = input.subject.trim();
    if (!subject) throw new TaskBoardError('a task needs a subject: one line saying what is to be done');
    return this.#mutate(by, async (tx) => {
      const ids = listTaskFiles(this.dir);
      const id = (ids.at(-1) ?? 0) + 1;
      const blockers: Task[] = [];
      for (const blocker of unique(input.blockedBy ?? [])) {
        const task = tx.task(blocker);
        if (task.status !== 'completed') blockers.push(task); // a finished dependency is already met
      }
      const now = new Date().toISOString();
      const task: Task = {
        id,
        subject,
        description: input.description ?? '',
        status: 'pending',
        owner: null,
        blockedBy: blockers.map((b) => b.id),
        blocks: [],
        created_at: now,
        updated_at: now,
        ...(input.requires_review ? { requires_review: true } : {}),
        ...(input.verify?.trim() ? { verify: input.verify.trim() } : {}),
      };
      await tx.write(task, 'created');
      for (const blocker of blockers) {
        await tx.write({ ...blocker, blocks: unique([...blocker.blocks, id]) }, 'updated');
      }
      return task;
    });
  }

  async update(id: number, patch: UpdateTaskInput, by: string = this.#agent): Promise<Task> {
    return this.#mutate(by, async (tx) => {
      const current = tx.fresh(id);
      if (current.status === 'completed') {
        throw new TaskBoardError(`task #${id} is completed; completed tasks are final (create a new task for follow-up work)`);
      }
      const next: Task = { ...current, blockedBy: [...current.blockedBy], blocks: [...current.blocks] };
      let action: TaskAction = 'updated';

      // Status (and the owner that goes with it).
      if (patch.status !== undefined && patch.status !== current.status) {
        const from = current.status;
        const to = patch.status;
        if (from === 'pending' && to === 'in_progress') {
          const owner = patch.owner ?? current.owner ?? by;
          if (current.owner !== null && current.owner !== owner) throw claimedBy(id, current.owner, 'pending');
          next.owner = owner;
          action = 'claimed';
        } else if (from === 'in_progress' && to === 'pending') {
          next.owner = patch.owner ?? null;
        } else if (from === 'in_progress' && to === 'review') {
          if (!current.requires_review) {
            throw new TaskBoardError(`task #${id} does not require review; set its status to completed when done`);
          }
          next.reviewer = null; // any idle reviewer may take it (claimReview)
          action = 'review_requested';
        } else if (from === 'in_progress' && to === 'completed') {
          if (current.requires_review) {
            throw new TaskBoardError(`task #${id} requires review: set its status to review and ask a reviewer to complete it`);
          }
        } else if (from === 'review' && (to === 'completed' || to === 'in_progress')) {
          // reviewed: accepted, or sent back for changes
        } else {
          throw new TaskBoardError(`task #${id} cannot go from ${from} to ${to}; from ${from} it can go to ${allowedFrom(current)}`);
        }
        next.status = to;
        if (to === 'completed') action = 'completed';
      }

      // Owner alone: assignment of a pending task, under the same rule as a claim.
      if (patch.owner !== undefined && (patch.status ?? current.status) === current.status && patch.owner !== current.owner) {
        if (current.status !== 'pending') {
          throw new TaskBoardError(
            `task #${id} is ${current.status} with ${current.owner ?? 'nobody'}; only a pending task can be (re)assigned — set its status to pending first`,
          );
        }
        if (patch.owner !== null && current.owner !== null) throw claimedBy(id, current.owner, 'pending');
        next.owner = patch.owner;
      }

      // Dependencies, both ways.
      const partners = new Map<number, Task>();
      const partner = (other: number): Task => {
        let task = partners.get(other);
        if (!task) {
          const loaded = tx.task(other);
          task = { ...loaded, blockedBy: [...loaded.blockedBy], blocks: [...loaded.blocks] };
          partners.set(other, task);
        }
        return task;
      };
      for (const blocker of unique(patch.addBlockedBy ?? [])) {
        if (blocker === id) throw cycle([id, id]);
        const other = partner(blocker);
        if (next.blockedBy.includes(blocker)) continue;
        if (next.status !== 'pending') {
          throw new TaskBoardError(`task #${id} is ${next.status}; only a pending task can get new blockers`);
        }
        if (other.status === 'completed') continue; // already met
        const loop = tx.path(id, blocker, next, partners);
        if (loop) throw cycle([...loop, id]);
        next.blockedBy.push(blocker);
        other.blocks = unique([...other.blocks, id]);
      }
      for (const blocked of unique(patch.addBlocks ?? [])) {
        if (blocked === id) throw cycle([id, id]);
        const other = partner(blocked);
        if (other.blockedBy.includes(id)) continue;
        if (other.status !== 'pending') {
          throw new TaskBoardError(`task #${blocked} is ${other.status}; only a pending task can get new blockers`);
        }
        const loop = tx.path(blocked, id, next, partners);
        if (loop) throw cycle([id, ...loop]);
        other.blockedBy.push(id);
        next.blocks = unique([...next.blocks, blocked]);
      }

      if (next.status === 'in_progress' && current.status === 'pending') {
        const open = tx.openBlockers(next);
        if (open.length > 0) throw blockedError(id, open);
        next.blockedBy = [];
      }

      await tx.write(next, action);
      for (const other of partners.values()) await tx.write(other, 'updated');
      if (next.status === 'completed') await tx.unblock(id);
      return next;
    });
  }

  /** Claims one task for `owner`: pending, unowned (or assigned to `owner`), unblocked. */
  async claim(id: number, owner: string): Promise<Task> {
    return this.#mutate(owner, async (tx) => {
      const task = tx.fresh(id);
      if (task.status === 'completed') throw new TaskBoardError(`task #${id} is already completed`);
      if (task.owner !== null && task.owner !== owner) throw claimedBy(id, task.owner, task.status);
      if (task.status !== 'pending') throw new TaskBoardError(`task #${id} is already yours, ${owner} (${task.status})`);
      const open = tx.openBlockers(task);
      if (open.length > 0) throw blockedError(id, open);
      const claimed: Task = { ...task, status: 'in_progress', owner, blockedBy: [] };
      await tx.write(claimed, 'claimed');
      return claimed;
    });
  }

  /**
   * Atomically claims the first task by id that `owner` may take (pending and unblocked, unowned
   * or already assigned to `owner`). Undefined when there is none.
   */
  async claimNext(owner: string): Promise<Task | undefined> {
    return this.#mutate(owner, async (tx) => {
      for (const id of listTaskFiles(this.dir)) {
        const cached = this.#load(id)?.task;
        if (!cached || !mayClaim(cached, owner) || tx.openBlockers(cached).length > 0) continue;
        const task = tx.freshOrUndefined(id); // the file itself, not the cache, decides
        if (!task || !mayClaim(task, owner) || tx.openBlockers(task).length > 0) continue;
        const claimed: Task = { ...task, status: 'in_progress', owner, blockedBy: [] };
        await tx.write(claimed, 'claimed');
        return claimed;
      }
      return undefined;
    });
  }

  /**
   * Tasks waiting in review that `reviewer` may take (claimReview would): no reviewer yet, not
   * escalated to the lead, and not `reviewer`'s own work.
   */
  async reviewable(reviewer?: string): Promise<Task[]> {
    return this.scan().tasks.filter((task) => mayReview(task, reviewer));
  }

  /**
   * Atomically takes the first task by id waiting in review for `reviewer` (sets `reviewer`, as
   * a claim sets the owner): two reviewers never both take the same review. Undefined when none.
   */
  async claimReview(reviewer: string): Promise<Task | undefined> {
    return this.#mutate(reviewer, async (tx) => {
      for (const id of listTaskFiles(this.dir)) {
        const cached = this.#load(id)?.task;
        if (!cached || !mayReview(cached, reviewer)) continue;
        const task = tx.freshOrUndefined(id); // the file itself, not the cache, decides
        if (!task || !mayReview(task, reviewer)) continue;
        const taken: Task = { ...task, reviewer };
        await tx.write(taken, 'review_claimed');
        return taken;
      }
      return undefined;
    });
  }

  /**
   * A reviewer's verdict on a task in review, checked and written under the lock: approved
   * (completed, dependents unblocked), changes requested (back to in_progress with the same
   * owner, `review_rounds` + 1), or — when changes were already requested `maxRounds` times —
   * escalated: the task stays in review, marked for the lead to decide.
   */
  async decideReview(id: number, by: string, decision: ReviewDecision): Promise<ReviewOutcome> {
    return this.#mutate(by, async (tx) => {
      const task = tx.fresh(id);
      if (task.status !== 'review') {
        const why =
          task.status === 'in_progress' && task.requires_review
            ? `it comes to review when ${task.owner ?? 'its owner'} completes it`
            : task.requires_review
              ? 'only a task in review can be approved or sent back'
              : 'it does not require review';
        throw new TaskBoardError(`task #${id} is ${task.status}, not in review; ${why}`);
      }
      if (task.owner === by) {
        throw new TaskBoardError(`you cannot review your own task #${id}; a teammate with role reviewer (or the lead) decides it`);
      }
      if (!decision.override && task.reviewer && task.reviewer !== by) {
        throw new TaskBoardError(`task #${id} is being reviewed by ${task.reviewer}; pick another task in review (task_list)`);
      }
      if (!decision.override && task.review_escalated) {
        throw new TaskBoardError(`task #${id} was escalated to the lead after ${task.review_rounds ?? 0} rounds of changes; the lead decides it now`);
      }
      const { review_escalated: _escalated, ...rest } = task;
      if (decision.approve) {
        const comment = decision.comment?.trim();
        const done: Task = { ...rest, status: 'completed', reviewer: by, ...(comment ? { review_comment: comment } : {}) };
        await tx.write(done, 'review_approved');
        await tx.unblock(id);
        return { task: done, outcome: 'approved' };
      }
      const feedback = decision.feedback?.trim() ?? '';
      if (!feedback) throw new TaskBoardError('say what must change: feedback is required when requesting changes');
      if (task.owner === null) {
        throw new TaskBoardError(`task #${id} has no owner to send changes to; approve it, or have the lead reassign the work`);
      }
      const rounds = task.review_rounds ?? 0;
      if (!decision.override && rounds >= (decision.maxRounds ?? Infinity)) {
        const held: Task = { ...task, reviewer: by, review_feedback: feedback, review_escalated: true };
        await tx.write(held, 'updated');
        return { task: held, outcome: 'escalated' };
      }
      const back: Task = { ...rest, status: 'in_progress', reviewer: null, review_rounds: rounds + 1, review_feedback: feedback };
      await tx.write(back, 'changes_requested');
      return { task: back, outcome: 'changes_requested' };
    });
  }

  /**
   * Puts every unfinished task of `owner` (an agent that is gone) back to pending and unowned,
   * and gives the reviews it had taken back to the other reviewers.
   */
  async release(owner: string, by: string = this.#agent): Promise<Task[]> {
    return this.#mutate(by, async (tx) => {
      const released: Task[] = [];
      for (const id of listTaskFiles(this.dir)) {
        const task = this.#load(id)?.task;
        if (task && task.owner !== owner && task.status === 'review' && task.reviewer === owner && !task.review_escalated) {
          const fresh = tx.freshOrUndefined(id);
          if (!fresh || fresh.status !== 'review' || fresh.reviewer !== owner || fresh.review_escalated) continue;
          const open: Task = { ...fresh, reviewer: null };
          await tx.write(open, 'released');
          released.push(open);
          continue;
        }
        if (!task || task.owner !== owner || task.status === 'completed') continue;
        const fresh = tx.freshOrUndefined(id);
        if (!fresh || fresh.owner !== owner || fresh.status === 'completed') continue;
        const back: Task = { ...fresh, status: 'pending', owner: null };
        await tx.write(back, 'released');
        released.push(back);
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
    this.#core.listeners.add(listener);
    this.#core.syncWatcher(this.#warnSink);
    return () => {
      this.#myListeners.delete(listener);
      this.#core.listeners.delete(listener);
      this.#core.syncWatcher(this.#warnSink);
    };
  }

  /** Drops this board's listeners; the directory watcher stops when no board of the process listens. */
  close(): void {
    for (const listener of this.#myListeners) this.#core.listeners.delete(listener);
    this.#myListeners.clear();
    this.#core.syncWatcher(this.#warnSink);
  }

  // ---- internals ----------------------------------------------------------------------------

  #load(id: number, force = false): CacheEntry | undefined {
    return this.#core.load(id, this.#warnSink, force);
  }

  #warnSink: WarningSink = (problem) => this.#warn(problem);

  #warn(problem: BoardProblem): void {
    this.#events?.emit(this.#agent, 'warning', { file: problem.file, error: problem.error });
  }

  #notFound(id: number): TaskBoardError {
    const ids = listTaskFiles(this.dir);
    return new TaskBoardError(
      ids.length === 0 ? `no task #${id}; the board is empty` : `no task #${id}; existing tasks: ${formatIds(ids)}`,
    );
  }

  /** Runs `work` under the board lock; events and change listeners fire after the lock is released. */
  async #mutate<T>(by: string, work: (tx: Transaction) => Promise<T>): Promise<T> {
    const changes: { action: TaskAction; task: Task }[] = [];
    try {
      return await withFileLock(this.#lockFile, async () => {
        mkdirSync(this.dir, { recursive: true });
        return work(this.#transaction(changes));
      });
    } finally {
      // Whatever was written is announced, also when a later step failed.
      for (const { action, task } of changes) {
        this.#events?.emit(by, 'task', { action, task: clone(task) });
        this.#core.notify({ source: 'local', action, task: clone(task), agent: by });
      }
    }
  }

  #transaction(changes: { action: TaskAction; task: Task }[]): Transaction {
    const board = this;
    const readable = (id: number, force: boolean): Task | undefined => {
      const entry = board.#load(id, force);
      if (entry?.problem) throw new MalformedTaskFileError(entry.problem.file, entry.problem.error);
      return entry?.task;
    };
    const tx: Transaction = {
      task(id) {
        const task = readable(id, false);
        if (!task) throw board.#notFound(id);
        return task;
      },
      fresh(id) {
        const task = readable(id, true);
        if (!task) throw board.#notFound(id);
        return task;
      },
      freshOrUndefined(id) {
        const entry = board.#load(id, true);
        return entry?.task;
      },
      openBlockers(task) {
        const open: Task[] = [];
        for (const blocker of task.blockedBy) {
          const entry = board.#load(blocker);
          if (!entry) continue; // the file is gone: nothing left to wait for
          if (entry.problem) open.push({ id: blocker, status: 'unreadable' } as unknown as Task);
          else if (entry.task!.status !== 'completed') open.push(entry.task!);
        }
        return open;
      },
      path(from, to, overlay, partners) {
        // Depth-first along `blocks` edges (a blocks b: b waits for a), over the board as it
        // will be after this update (`overlay` and `partners` replace their files).
        const edges = new Map<number, Set<number>>();
        const edge = (a: number, b: number) => {
          let out = edges.get(a);
          if (!out) edges.set(a, (out = new Set()));
          out.add(b);
        };
        for (const id of listTaskFiles(board.dir)) {
          const task = id === overlay.id ? overlay : (partners.get(id) ?? board.#load(id)?.task);
          if (!task) continue;
          for (const blocked of task.blocks) edge(id, blocked);
          // blockedBy counts too, should the two lists disagree (a crash between two writes).
          for (const blocker of task.blockedBy) edge(blocker, id);
        }
        const seen = new Set<number>();
        const walk = (id: number): number[] | undefined => {
          if (id === to) return [id];
          if (seen.has(id)) return undefined;
          seen.add(id);
          for (const next of edges.get(id) ?? []) {
            const rest = walk(next);
            if (rest) return [id, ...rest];
          }
          return undefined;
        };
        return walk(from);
      },
      async unblock(done) {
        for (const id of listTaskFiles(board.dir)) {
          if (id === done) continue;
          const task = board.#load(id)?.task;
          if (!task?.blockedBy.includes(done)) continue;
          await tx.write({ ...task, blockedBy: task.blockedBy.filter((b) => b !== done) }, 'updated');
        }
      },
      async write(task, action) {
        const file = path.join(board.dir, taskFileName(task.id));
        const stored: Task = action === 'created' ? task : { ...task, updated_at: new Date().toISOString() };
        // Synchronous: a few hundred microseconds under the lock, against twice that through the
        // thread pool, and nothing else of this process can interleave between write and stat.
        writeJsonAtomicSync(file, stored);
        const stat = statOrUndefined(file);
        if (stat) board.#core.cache.set(task.id, { key: statKey(stat), task: clone(stored) });
        changes.push({ action, task: stored });
      },
    };
    return tx;
  }
}

interface Transaction {
  /** A task through the cache; throws when missing or malformed. */
  task(id: number): Task;
  /** A task read from its file now; throws when missing or malformed. */
  fresh(id: number): Task;
  freshOrUndefined(id: number): Task | undefined;
  /** The tasks in `task.blockedBy` that are not completed yet. */
  openBlockers(task: Task): Task[];
  /** A path of `blocks` edges from `from` to `to`, if one exists. */
  path(from: number, to: number, overlay: Task, partners: Map<number, Task>): number[] | undefined;
  /** Removes `done` from every blockedBy. */
  unblock(done: number): Promise<void>;
  write(task: Task, action: TaskAction): Promise<void>;
}

// ---- helpers ----------------------------------------------------------------------------------

function mayReview(task: Task, reviewer: string | undefined): boolean {
  return task.status === 'review' && !task.reviewer && !task.review_escalated && (reviewer === undefined || task.owner !== reviewer);
}

function mayClaim(task: Task, owner: string): boolean {
  return task.status === 'pending' && (task.owner === null || task.owner === owner);
}

function allowedFrom(task: Task): string {
  switch (task.status) {
    case 'pending':
      return 'in_progress (claim it first)';
    case 'in_progress':
      return task.requires_review ? 'review, pending (unclaim)' : 'completed, pending (unclaim)';
    case 'review':
      return 'completed (accept), in_progress (changes requested)';
    case 'completed':
      return 'nothing (completed is final)';
  }
}

function claimedBy(id: number, owner: string, status: string): TaskBoardError {
  return new TaskBoardError(
    status === 'pending'
      ? `task #${id} is already claimed by ${owner} (assigned, not started yet)`
      : `task #${id} is already claimed by ${owner}`,
  );
}

function blockedError(id: number, open: Task[]): TaskBoardError {
  const what = open
    .map((t) => `#${t.id} (${t.status}${t.owner ? `, ${t.owner}` : ''})`)
    .join(', ');
  return new TaskBoardError(`task #${id} is blocked by ${what}; wait for those to be completed or pick another task`);
}

function cycle(ids: number[]): TaskBoardError {
  return new TaskBoardError(
    `would create a cycle: ${ids.map((id) => `#${id}`).join(' → ')} (each arrow: blocks); a task cannot wait for itself`,
  );
}

function parseTask(file: string, id: number, text: string, key: string): CacheEntry {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { key, problem: { file, error: `not valid JSON: ${(error as Error).message}` } };
  }
  const parsed = TaskFileSchema.safeParse(raw);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'task'}: ${i.message}`).join('; ');
    return { key, problem: { file, error: `not a task: ${detail}` } };
  }
  if (parsed.data.id !== id) {
    return { key, problem: { file, error: `its id is ${parsed.data.id} but its file name says ${id}` } };
  }
  return { key, task: parsed.data as Task };
}

/** Task ids present in the directory by file name, ascending (malformed files included). */
function listTaskFiles(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const ids: number[] = [];
  for (const name of names) {
    const match = TASK_FILE.exec(name);
    if (match) ids.push(Number(match[1]));
  }
  return ids.sort((a, b) => a - b);
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

// Every board write renames a new file into place, so the inode changes with each write; size and
// times catch in-place edits. (Only a claim's re-read decides a claim; this key just saves reads.)
function statKey(stat: Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

function unique(ids: number[]): number[] {
  return [...new Set(ids)];
}

function clone(task: Task): Task {
  return structuredClone(task);
}

/** Ascending ids for a message, runs of four or more as ranges: 1, 2, 3, 5, 7, 8, 9, 10 → "1, 2, 3, 5, 7-10". */
export function formatIds(ids: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(j - i >= 3 ? `${ids[i]}-${ids[j]}` : ids.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}
