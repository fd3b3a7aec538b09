// The task board in PostgreSQL (SPEC section 3): one row per task, the task itself as JSON beside
// the columns the queries filter on. The rules are the backend-neutral ones of store/board/,
// applied inside the transaction to the rows it read (pg-board-view.ts).
//
// Who may run at once: claims (claim, claimNext, claimReview) take the team's board lock shared
// and lock the one row they take — `FOR UPDATE SKIP LOCKED`, so eight claimers take eight
// different tasks instead of queueing on the first; every other change (create, update, review
// decisions, release) takes it exclusively, so a dependency check sees a graph no one else is
// changing and ids are given out one at a time. A claim and a change never interleave.
import type pg from 'pg';
import type { Board, BoardChange, BoardChangeListener, BoardProblem, BoardScan } from '../board.js';
import { findCycles } from '../board/dependencies.js';
import { claimed, isClaimable, isClaimableBy, mayReview, planClaim, planCreate, planReviewDecision, releaseChange } from '../board/rules.js';
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
} from '../board/task.js';
import { planUpdate } from '../board/update.js';
import { viewOf } from '../board/view.js';
import { LoadedView, NeedMoreTasks, readAll, readAround, readTasks, type StoredRow, TaskNotFound } from './pg-board-view.js';
import { type PgContext, write } from './pg-context.js';

/** The advisory lock class of board locks (the team's key is the second number). */
const BOARD_LOCK = 0x68626f61; // 'hboa'

interface SharedBoard {
  listeners: Set<BoardChangeListener>;
  unsubscribe: () => void;
}

const SHARED_KEY = 'board';

/** What a write transaction returns: its result, and the changes to announce once committed. */
interface Outcome<T> {
  value: T;
  changes: TaskChange[];
}

export class PgBoard implements Board {
  readonly #ctx: PgContext;
  readonly #shared: SharedBoard;
  readonly #myListeners = new Set<BoardChangeListener>();
  readonly #warnedCycles = new Set<string>();
  readonly #agent = 'lead';

  constructor(ctx: PgContext) {
    this.#ctx = ctx;
    let shared = ctx.channel.shared.get(SHARED_KEY) as SharedBoard | undefined;
    if (!shared) {
      const state: SharedBoard = { listeners: new Set(), unsubscribe: () => undefined };
      const offChange = ctx.channel.on('b', (change, remote) => {
        if (remote) announce(state, { source: 'external', ids: Array.isArray(change.ids) ? (change.ids as number[]) : [] });
      });
      const offResync = ctx.channel.onResync(() => announce(state, { source: 'external', ids: [] }));
      state.unsubscribe = () => {
        offChange();
        offResync();
      };
      ctx.channel.shared.set(SHARED_KEY, (shared = state));
    }
    this.#shared = shared;
  }

  // ---- reading ------------------------------------------------------------------------------

  async list(): Promise<Task[]> {
    return (await this.scan()).tasks;
  }

  async scan(): Promise<BoardScan> {
    const { rows } = await this.#ctx.db.query<StoredRow>('SELECT id, data FROM huddle_tasks WHERE team = $1 ORDER BY id', [this.#ctx.team]);
    const view = new LoadedView();
    view.add(rows);
    const tasks = [...view.tasks.values()].sort((a, b) => a.id - b.id);
    const problems: BoardProblem[] = [...view.broken].map(([id, error]) => this.#problem(id, error));
    const cycles = findCycles(viewOf(tasks));
    for (const cycle of cycles) this.#warnCycle(cycle);
    return { tasks, problems, cycles };
  }

  async get(id: number): Promise<Task> {
    const { rows } = await this.#ctx.db.query<StoredRow>('SELECT id, data FROM huddle_tasks WHERE team = $1 AND id = $2', [this.#ctx.team, safeId(id)]);
    if (rows.length === 0) throw await this.#notFound(id);
    const view = new LoadedView();
    view.add(rows);
    const task = view.tasks.get(id);
    if (!task) throw new TaskBoardError(this.#problem(id, view.broken.get(id) ?? 'unreadable').message);
    return task;
  }

  async claimable(): Promise<Task[]> {
    const { rows } = await this.#ctx.db.query<StoredRow & { blockers: StoredRow[] | null }>(
      `SELECT t.id, t.data,
              (SELECT json_agg(json_build_object('id', b.id, 'data', b.data)) FROM huddle_tasks b WHERE b.team = t.team AND b.id = ANY(t.blocked_by)) AS blockers
         FROM huddle_tasks t
        WHERE t.team = $1 AND t.status = 'pending' AND t.owner IS NULL
        ORDER BY t.id`,
      [this.#ctx.team],
    );
    const out: Task[] = [];
    for (const row of rows) {
      const view = new LoadedView();
      view.add([row, ...(row.blockers ?? [])]);
      const task = view.tasks.get(Number(row.id));
      if (!task) continue;
      for (const id of task.blockedBy) if (!view.tasks.has(id) && !view.broken.has(id)) view.absent.add(id);
      if (isClaimable(task, view)) out.push(task);
    }
    return out;
  }

  async reviewable(reviewer?: string): Promise<Task[]> {
    const { rows } = await this.#ctx.db.query<StoredRow>(`SELECT id, data FROM huddle_tasks WHERE team = $1 AND status = 'review' ORDER BY id`, [this.#ctx.team]);
    const view = new LoadedView();
    view.add(rows);
    return [...view.tasks.values()].filter((task) => mayReview(task, reviewer));
  }

  // ---- changes (exclusive) ----------------------------------------------------------------

  async create(input: CreateTaskInput, by: string = this.#agent): Promise<Task> {
    if (!input.subject.trim()) throw new TaskBoardError('a task needs a subject: one line saying what is to be done');
    return this.#change(by, input.blockedBy ?? [], async (client, view) => {
      const { rows } = await client.query<{ id: string }>(
        `UPDATE huddle_teams SET last_task_id = GREATEST(last_task_id, (SELECT coalesce(max(id), 0) FROM huddle_tasks WHERE team = $1)) + 1
          WHERE team = $1 RETURNING last_task_id AS id`,
        [this.#ctx.team],
      );
      const id = Number(rows[0]!.id);
      const { task, changes } = planCreate(input, id, new Date().toISOString(), view);
      return { value: task, changes };
    });
  }

  async update(id: number, patch: UpdateTaskInput, by: string = this.#agent): Promise<Task> {
    const ids = [id, ...(patch.addBlockedBy ?? []), ...(patch.addBlocks ?? [])];
    return this.#change(by, ids, async (_client, view) => {
      const { task, changes } = planUpdate(view.require(id), patch, by, view);
      return { value: task, changes };
    });
  }

  async decideReview(id: number, by: string, decision: ReviewDecision): Promise<ReviewOutcome> {
    return this.#change(by, [id], async (_client, view) => {
      const { result, changes } = planReviewDecision(view.require(id), by, decision, view);
      return { value: result, changes };
    });
  }

  async release(owner: string, by: string = this.#agent): Promise<Task[]> {
    return this.#transaction(by, 'exclusive', async (client) => {
      const { rows } = await client.query<StoredRow>(
        `SELECT id, data FROM huddle_tasks WHERE team = $1 AND status <> 'completed' AND (owner = $2 OR reviewer = $2) ORDER BY id`,
        [this.#ctx.team, owner],
      );
      const view = new LoadedView();
      view.add(rows);
      const changes: TaskChange[] = [];
      for (const task of view.tasks.values()) {
        const change = releaseChange(task, owner);
        if (change) changes.push(change);
      }
      return { value: changes.map((change) => change.task), changes };
    });
  }

  // ---- claims (shared, row locks) ---------------------------------------------------------

  async claim(id: number, owner: string): Promise<Task> {
    return this.#transaction(owner, 'shared', async (client) => {
      const { rows } = await client.query<StoredRow>('SELECT id, data FROM huddle_tasks WHERE team = $1 AND id = $2 FOR UPDATE', [this.#ctx.team, safeId(id)]);
      const view = new LoadedView();
      view.add(rows);
      if (rows.length === 0) view.absent.add(id);
      const task = view.require(id);
      await readTasks(client, this.#ctx.team, view, task.blockedBy);
      const next = planClaim(task, owner, view);
      return { value: next, changes: [{ action: 'claimed', task: next }] };
    });
  }

  async claimNext(owner: string): Promise<Task | undefined> {
    return this.#claimFirst(
      owner,
      `t.status = 'pending' AND (t.owner IS NULL OR t.owner = $2)
       AND NOT EXISTS (SELECT 1 FROM huddle_tasks b WHERE b.team = t.team AND b.id = ANY(t.blocked_by) AND b.status <> 'completed')`,
      (task, view) => isClaimableBy(task, owner, view),
      (task) => ({ action: 'claimed', task: claimed(task, owner) }),
    );
  }

  async claimReview(reviewer: string): Promise<Task | undefined> {
    return this.#claimFirst(
      reviewer,
      `t.status = 'review' AND t.reviewer IS NULL AND (t.data->>'review_escalated') IS DISTINCT FROM 'true' AND t.owner IS DISTINCT FROM $2`,
      (task) => mayReview(task, reviewer),
      (task) => ({ action: 'review_claimed', task: { ...task, reviewer } }),
    );
  }

  // ---- change subscription -----------------------------------------------------------------

  onChange(listener: BoardChangeListener): () => void {
    this.#myListeners.add(listener);
    this.#shared.listeners.add(listener);
    return () => {
      this.#myListeners.delete(listener);
      this.#shared.listeners.delete(listener);
    };
  }

  close(): void {
    for (const listener of this.#myListeners) this.#shared.listeners.delete(listener);
    this.#myListeners.clear();
  }

  // ---- internals ----------------------------------------------------------------------------

  /**
   * The first task by id that `where` selects and `accept` (the rule) allows, locked with SKIP
   * LOCKED so concurrent claimers spread out. When every candidate is locked by another claimer,
   * one more pass waits for the first of them, so "nothing to claim" is never said while a
   * claimable task exists.
   */
  #claimFirst(owner: string, where: string, accept: (task: Task, view: LoadedView) => boolean, take: (task: Task) => TaskChange): Promise<Task | undefined> {
    return this.#transaction(owner, 'shared', async (client) => {
      const refused: number[] = [];
      for (const lock of ['FOR UPDATE OF t SKIP LOCKED', 'FOR UPDATE OF t']) {
        for (let round = 0; round < 50; round++) {
          const { rows } = await client.query<StoredRow>(
            `SELECT t.id, t.data FROM huddle_tasks t WHERE t.team = $1 AND ${where} AND NOT (t.id = ANY($3::bigint[])) ORDER BY t.id LIMIT 1 ${lock}`,
            [this.#ctx.team, owner, refused],
          );
          if (rows.length === 0) break;
          const view = new LoadedView();
          view.add(rows);
          const id = Number(rows[0]!.id);
          const task = view.tasks.get(id);
          if (task) {
            await readTasks(client, this.#ctx.team, view, task.blockedBy);
            if (accept(task, view)) {
              const change = take(task);
              return { value: change.task as Task | undefined, changes: [change] };
            }
          }
          refused.push(id);
        }
      }
      return { value: undefined, changes: [] };
    });
  }

  /** A change under the exclusive lock: reads around `ids`, plans; when the plan needs more, reads all and plans again. */
  #change<T>(by: string, ids: number[], plan: (client: pg.PoolClient, view: LoadedView) => Promise<Outcome<T>>): Promise<T> {
    return this.#transaction(by, 'exclusive', async (client) => {
      let view = await readAround(client, this.#ctx.team, ids.filter((id) => Number.isSafeInteger(id)));
      for (;;) {
        try {
          return await plan(client, view);
        } catch (error) {
          if (!(error instanceof NeedMoreTasks) || view.full) throw error;
          view = await readAll(client, this.#ctx.team);
        }
      }
    });
  }

  /**
   * One board transaction: the board lock (shared for claims), `work`, the rows it changed
   * written with a NOTIFY; then, once committed, the task events and this process's listeners.
   */
  async #transaction<T>(by: string, mode: 'shared' | 'exclusive', work: (client: pg.PoolClient) => Promise<Outcome<T>>): Promise<T> {
    const { team, channel } = this.#ctx;
    let outcome: Outcome<T>;
    try {
      outcome = await write(
        this.#ctx,
        async (client) => {
          await client.query(mode === 'shared' ? 'SELECT pg_advisory_xact_lock_shared($1, hashtext($2))' : 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [BOARD_LOCK, team]);
          const result = await work(client);
          const stamped = result.changes.map((change) => stamp(change));
          for (const change of stamped) await storeTask(client, team, change);
          if (stamped.length) await channel.publish(client, { k: 'b', ids: [...new Set(stamped.map((c) => c.task.id))] });
          return { value: result.value, changes: stamped };
        },
        { once: true },
      );
    } catch (error) {
      if (error instanceof TaskNotFound) throw await this.#notFound(error.id);
      throw error;
    }
    for (const { action, task } of outcome.changes) {
      this.#ctx.hub.emit(by, 'task', { action, task: structuredClone(task) });
      announce(this.#shared, { source: 'local', action, task: structuredClone(task), agent: by });
    }
    return outcome.value;
  }

  async #notFound(id: number): Promise<TaskBoardError> {
    const { rows } = await this.#ctx.db.query<{ id: string }>('SELECT id FROM huddle_tasks WHERE team = $1 ORDER BY id', [this.#ctx.team]);
    const ids = rows.map((row) => Number(row.id));
    return new TaskBoardError(ids.length === 0 ? `no task #${id}; the board is empty` : `no task #${id}; existing tasks: ${formatIds(ids)}`);
  }

  #problem(id: number, error: string): BoardProblem {
    const file = `task #${id} of team ${this.#ctx.team} (huddle_tasks)`;
    return { file, error, message: `skipped ${file}: ${error}; fix the row's data or delete it` };
  }

  #warnCycle(cycle: number[]): void {
    const key = cycle.join(',');
    if (this.#warnedCycles.has(key)) return;
    this.#warnedCycles.add(key);
    this.#ctx.hub.emit(this.#agent, 'warning', {
      message: `tasks ${formatPath(cycle)} wait for each other (each arrow: blocks), so none of them can ever start; remove one of these dependencies (huddle_tasks of team ${this.#ctx.team})`,
      cycle,
    });
  }
}

function stamp(change: TaskChange): TaskChange {
  return change.action === 'created' ? change : { action: change.action, task: { ...change.task, updated_at: new Date().toISOString() } };
}

async function storeTask(client: pg.ClientBase, team: string, { action, task }: TaskChange): Promise<void> {
  const columns = [team, task.id, task.status, task.owner, typeof task.reviewer === 'string' ? task.reviewer : null, task.blockedBy, JSON.stringify(task)];
  if (action === 'created') {
    await client.query('INSERT INTO huddle_tasks (team, id, status, owner, reviewer, blocked_by, data) VALUES ($1, $2, $3, $4, $5, $6, $7)', columns);
    return;
  }
  await client.query(
    'UPDATE huddle_tasks SET status = $3, owner = $4, reviewer = $5, blocked_by = $6, data = $7, version = version + 1 WHERE team = $1 AND id = $2',
    columns,
  );
}

function announce(shared: SharedBoard, change: BoardChange): void {
  for (const listener of [...shared.listeners]) {
    try {
      listener(change);
    } catch {
      // A broken listener must not break the board.
    }
  }
}

/** An id the database can hold (anything else is simply not there). */
function safeId(id: number): number {
  return Number.isSafeInteger(id) ? id : -1;
}

export { NeedMoreTasks };
