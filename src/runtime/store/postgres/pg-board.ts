// The task board in PostgreSQL (docs/contract.md#tasks): one row per task, the task itself as JSON beside
// the columns the queries filter on. The rules are the backend-neutral ones of store/board/,
// applied inside the transaction to the rows it read (pg-board-view.ts).
//
// Who may run at once: claims (claim, claimNext, claimReview) take the team's board lock shared
// and lock the rows they take — `FOR UPDATE SKIP LOCKED`, so eight claimers take eight
// different tasks instead of queueing on the first (the claims and status changes of this
// process's agents that come together share one transaction: pg-batcher.ts); every other change (create, update, review
// decisions, release) takes it exclusively, so a dependency check sees a graph no one else is
// changing and ids are given out one at a time. A claim and a change never interleave.
// (Measured: with claims and completions sharing it, no transaction waited on this lock in the
// claim benchmark; what had serialised them was the event record's per-process chain, now per
// agent: pg-events.ts.) A change's transaction ends in one round trip with COMMIT, so concurrent
// claimers' and completers' commits reach the server together and one WAL flush serves several.
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
import { type BatchOutcome, Batcher } from './pg-batcher.js';
import { type ClaimRule, firstLook, pickTasks } from './pg-board-claims.js';
import { changesOf, lockedView, READ_LOCKED, storeChanges, viewWithBlockers, WITH_BLOCKERS } from './pg-board-sql.js';
import { LoadedView, NeedMoreTasks, readAll, readAround, type StoredRow, TaskNotFound } from './pg-board-view.js';
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

/** A status change (no new dependency) waiting for its batch. */
interface RowUpdate {
  id: number;
  patch: UpdateTaskInput;
  by: string;
}

/** A change whose plan needs more of the board than its rows: it runs by itself, holding the board lock alone. */
const ALONE = Symbol('alone');

const CLAIM_NEXT: ClaimRule = {
  action: 'claimed',
  // Completing a task takes it out of its dependents' blockedBy, so the ready ones have it empty
  // (huddle_tasks_ready); the wider condition finds those whose blockers are met otherwise.
  where: `t.status = 'pending' AND (t.owner IS NULL OR t.owner = ANY($2::text[])) AND t.blocked_by = '{}'`,
  wider: `t.status = 'pending' AND (t.owner IS NULL OR t.owner = ANY($2::text[]))
       AND NOT EXISTS (SELECT 1 FROM huddle_tasks b WHERE b.team = t.team AND b.id = ANY(t.blocked_by) AND b.status <> 'completed')`,
  accept: (task, owner, view) => isClaimableBy(task, owner, view),
  take: (task, owner) => ({ action: 'claimed', task: claimed(task, owner) }),
  holder: (task) => task.owner,
};

const REVIEW_CLAIM: ClaimRule = {
  action: 'review_claimed',
  // One reviewer at a time (claimReview is not batched): "not the reviewer's own work" is then `<> ALL`.
  where: `t.status = 'review' AND t.reviewer IS NULL AND (t.data->>'review_escalated') IS DISTINCT FROM 'true' AND (t.owner IS NULL OR t.owner <> ALL($2::text[]))`,
  accept: (task, reviewer) => mayReview(task, reviewer),
  take: (task, reviewer) => ({ action: 'review_claimed', task: { ...task, reviewer } }),
  holder: (task) => task.reviewer ?? null,
};

export class PgBoard implements Board {
  readonly #ctx: PgContext;
  readonly #claims = new Batcher<string, Task | undefined>({
    key: (owner) => owner,
    run: async (owners) => (await this.#claimBatch(CLAIM_NEXT, owners)).map((task) => (task === 'again' ? task : { value: task })),
  });
  readonly #updates = new Batcher<RowUpdate, Task | typeof ALONE>({ key: (call) => String(call.id), run: (calls) => this.#updateBatch(calls) });
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
    // Claims send no NOTIFY: where other hosts' events are mirrored (the lead), their task events say it.
    const board = shared;
    this.#offMirrored = ctx.hub.subscribe((event) => {
      if (event.type === 'task' && (event as { host?: unknown }).host !== undefined) announce(board, { source: 'external', ids: [event.task.id] });
    });
  }

  readonly #offMirrored: () => void;

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
    return (await this.#claimableRows(false)).tasks;
  }

  /**
   * The first pending, unowned task with no blocker open by its status column, one row at most;
   * its row and its blockers' rows are then checked by the same rules as claimable(). Every
   * claimable task passes the SQL filter, so no row means none; a row that fails the rules (an
   * unreadable blocker) is the rare case that asks the full question.
   */
  async hasClaimable(owner?: string): Promise<boolean> {
    const first = await this.#claimableRows(true, owner);
    if (first.rows === 0) return false;
    if (first.tasks.length > 0) return true;
    return (await this.#claimableRows(false, owner)).tasks.length > 0;
  }

  /** Pending tasks unowned (or, given `owner`, assigned to it too) that pass the claim rules. */
  async #claimableRows(firstOnly: boolean, owner?: string): Promise<{ rows: number; tasks: Task[] }> {
    const noOpenBlocker = `NOT EXISTS (SELECT 1 FROM huddle_tasks o WHERE o.team = t.team AND o.id = ANY(t.blocked_by) AND o.status <> 'completed')`;
    const { rows } = await this.#ctx.db.query<StoredRow & { blockers: StoredRow[] | null }>(
      `SELECT t.id, t.data,
              (SELECT json_agg(json_build_object('id', b.id, 'data', b.data)) FROM huddle_tasks b WHERE b.team = t.team AND b.id = ANY(t.blocked_by)) AS blockers
         FROM huddle_tasks t
        WHERE t.team = $1 AND t.status = 'pending' AND ${owner === undefined ? 't.owner IS NULL' : '(t.owner IS NULL OR t.owner = $2)'}${firstOnly ? ` AND ${noOpenBlocker}` : ''}
        ORDER BY t.id${firstOnly ? ' LIMIT 1' : ''}`,
      owner === undefined ? [this.#ctx.team] : [this.#ctx.team, owner],
    );
    const out: Task[] = [];
    for (const row of rows) {
      const view = new LoadedView();
      view.add([row, ...(row.blockers ?? [])]);
      const task = view.tasks.get(Number(row.id));
      if (!task) continue;
      for (const id of task.blockedBy) if (!view.tasks.has(id) && !view.broken.has(id)) view.absent.add(id);
      if (owner === undefined ? isClaimable(task, view) : isClaimableBy(task, owner, view)) out.push(task);
    }
    return { rows: rows.length, tasks: out };
  }

  async reviewable(reviewer?: string): Promise<Task[]> {
    const { rows } = await this.#ctx.db.query<StoredRow>(`SELECT id, data FROM huddle_tasks WHERE team = $1 AND status = 'review' ORDER BY id`, [
      this.#ctx.team,
    ]);
    const view = new LoadedView();
    view.add(rows);
    return [...view.tasks.values()].filter((task) => mayReview(task, reviewer));
  }

  // ---- changes -----------------------------------------------------------------------------

  async create(input: CreateTaskInput, by: string = this.#agent): Promise<Task> {
    if (!input.subject.trim()) throw new TaskBoardError('a task needs a subject: one line saying what is to be done');
    const rebuild = (changes: TaskChange[]) => changes.find((change) => change.action === 'created')?.task;
    return this.#change(by, 'exclusive', input.blockedBy ?? [], rebuild, async (client, view) => {
      const { rows } = await client.query<{ id: string }>(
        `UPDATE huddle_teams SET last_task_id = GREATEST(last_task_id, (SELECT coalesce(max(id), 0) FROM huddle_tasks WHERE team = $1)) + 1
          WHERE team = $1 RETURNING last_task_id AS id`,
        [this.#ctx.team],
      );
      const id = Number(rows[0]!.id);
      const { task, changes } = planCreate(input, id, new Date().toISOString(), view, by);
      return { value: task, changes };
    });
  }

  async update(id: number, patch: UpdateTaskInput, by: string = this.#agent): Promise<Task> {
    const ids = [id, ...(patch.addBlockedBy ?? []), ...(patch.addBlocks ?? [])];
    // A new dependency needs the graph to stand still (the cycle check); a status change only its
    // rows, and goes with the others this process's agents make at the same time (#updateBatch).
    if ((patch.addBlockedBy?.length ?? 0) + (patch.addBlocks?.length ?? 0) === 0) {
      // A task not found is this caller's own error, named outside the batch (#guard), which never waits for it.
      const done = await this.#guard(() => this.#updates.submit({ id, patch, by }));
      if (done !== ALONE) return done;
    }
    return this.#change(
      by,
      'exclusive',
      ids,
      (changes) => changes.find((change) => change.task.id === id)?.task,
      async (_client, view) => {
        const { task, changes } = planUpdate(view.require(id), patch, by, view);
        return { value: task, changes };
      },
    );
  }

  async decideReview(id: number, by: string, decision: ReviewDecision): Promise<ReviewOutcome> {
    const rebuild = (changes: TaskChange[]): ReviewOutcome | undefined => {
      const change = changes.find((c) => c.task.id === id);
      if (!change) return undefined;
      return {
        task: change.task,
        outcome: change.action === 'review_approved' ? 'approved' : change.action === 'changes_requested' ? 'changes_requested' : 'escalated',
      };
    };
    return this.#change(by, 'rows', [id], rebuild, async (_client, view) => {
      const { result, changes } = planReviewDecision(view.require(id), by, decision, view);
      return { value: result, changes };
    });
  }

  async release(owner: string, by: string = this.#agent): Promise<Task[]> {
    return this.#transaction(
      by,
      true,
      undefined,
      (changes) => changes.map((change) => change.task),
      async (client) => {
        const { rows } = await client.query<StoredRow>(
          `SELECT id, data FROM huddle_tasks WHERE team = $1 AND status <> 'completed' AND (owner = $2 OR reviewer = $2) ORDER BY id FOR UPDATE`,
          [this.#ctx.team, owner],
        );
        const view = new LoadedView();
        view.add(rows);
        const changes: TaskChange[] = [];
        for (const task of view.tasks.values()) {
          const change = releaseChange(task, owner, by);
          if (change) changes.push(change);
        }
        return { value: changes.map((change) => change.task), changes };
      },
    );
  }

  // ---- claims (shared, row locks) ---------------------------------------------------------

  async claim(id: number, owner: string): Promise<Task> {
    const first = { sql: `${WITH_BLOCKERS} WHERE t.team = $1 AND t.id = $2 FOR UPDATE OF t`, params: [this.#ctx.team, safeId(id)] };
    const task = await this.#claimTransaction(owner, first, async (_client, read) => {
      const rows = read!.rows as Array<StoredRow & { blockers: StoredRow[] }>;
      const view = new LoadedView();
      if (rows.length === 0) view.absent.add(id);
      else viewWithBlockers(view, rows[0]!);
      const next = planClaim(view.require(id), owner, view);
      return { action: 'claimed', task: next };
    });
    return task!; // planClaim refuses rather than claim nothing
  }

  /**
   * Claims of this process's agents that come together are made in one transaction (pg-batcher.ts),
   * each agent getting its own task by the same rules as a claim alone.
   */
  async claimNext(owner: string): Promise<Task | undefined> {
    return this.#claims.submit(owner);
  }

  async claimReview(reviewer: string): Promise<Task | undefined> {
    // One reviewer: nothing taken by anyone else in its transaction, so never `again`.
    const [task] = await this.#claimBatch(REVIEW_CLAIM, [reviewer]);
    return task === 'again' ? undefined : task;
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
    this.#offMirrored();
    for (const listener of this.#myListeners) this.#shared.listeners.delete(listener);
    this.#myListeners.clear();
  }

  // ---- internals ----------------------------------------------------------------------------

  /**
   * Claims for `claimers` (distinct names) in one transaction: every row it takes is written with
   * the transaction's token, so that a retry after an unknown outcome finds each claimer's task by
   * who holds it (instead of claiming a second one).
   */
  async #claimBatch(rule: ClaimRule, claimers: string[]): Promise<Array<Task | undefined | 'again'>> {
    const { team } = this.#ctx;
    const picked = await this.#guard(() =>
      write(
        this.#ctx,
        async (client, token, tx) => {
          const changes = (await pickTasks(client, team, rule, claimers, tx.first)).map((change) => (change && change !== 'again' ? stamp(change) : change));
          const taken = changes.filter((change): change is TaskChange => change !== undefined && change !== 'again');
          // A claim makes nothing claimable for anyone: no NOTIFY wakes the team for it (the lead's
          // process still sees it, as the claimer's task event, in its board listeners).
          if (taken.length) tx.finish(...storeChanges(team, taken, { token }));
          return changes;
        },
        {
          lock: { shared: true, key: [BOARD_LOCK, team] },
          first: firstLook(rule, team, claimers),
          recover: async (client, token) => {
            const found = await changesOf(client, team, token);
            if (found.length === 0) return undefined;
            // Those it found nothing for were told to look again (what it took, it took without waiting).
            return claimers.map((claimer) => found.find((change) => change.action === rule.action && rule.holder(change.task) === claimer) ?? 'again');
          },
        },
      ),
    );
    return picked.map((change, i) => {
      if (change === 'again' || change === undefined) return change;
      this.#announce(claimers[i]!, [change]);
      return change.task;
    });
  }

  /**
   * A claim of one given task: at most one row changes, written with the transaction's token so
   * that a retry after an unknown outcome finds it (instead of claiming it again).
   */
  async #claimTransaction(
    owner: string,
    first: { sql: string; params: unknown[] },
    work: (client: pg.PoolClient, read: pg.QueryResult | undefined) => Promise<TaskChange | undefined>,
  ): Promise<Task | undefined> {
    const { team } = this.#ctx;
    const change = await this.#guard(() =>
      write(
        this.#ctx,
        async (client, token, tx) => {
          const planned = await work(client, tx.first);
          if (!planned) return null;
          const stamped = stamp(planned);
          tx.finish(...storeChanges(team, [stamped], { token }));
          return stamped;
        },
        {
          lock: { shared: true, key: [BOARD_LOCK, team] },
          first,
          recover: async (client, token) => (await changesOf(client, team, token))[0],
        },
      ),
    );
    if (!change) return undefined;
    this.#announce(owner, [change]);
    return change.task;
  }

  /**
   * Status changes (a completion, say) of this process's agents that come together, planned one
   * after the other on the rows read for all of them and written in one transaction. One that
   * fails its rules fails alone; one that would write a row another already writes goes in the
   * next batch (so each row of the batch is one caller's, as a retry finds them); one whose plan
   * needs more of the board runs by itself (ALONE).
   */
  async #updateBatch(calls: RowUpdate[]): Promise<Array<BatchOutcome<Task | typeof ALONE>>> {
    const { team, channel, record } = this.#ctx;
    const ids = [...new Set(calls.map((call) => call.id).filter((id) => Number.isSafeInteger(id)))];
    type Planned = { value: Task; by: string; changes: TaskChange[] } | { error: unknown } | 'again' | typeof ALONE;
    type Recorder = Parameters<Parameters<NonNullable<typeof record>['around']>[1]>[0];
    // What the latest attempt planned: after an unknown outcome that finds its rows, what each caller got.
    let planned: Planned[] = [];
    const run = (recordIn?: Recorder) =>
      write(
        this.#ctx,
        async (_client, token, tx) => {
          const view = lockedView(tx.first!.rows as Array<StoredRow & { locked: boolean }>, ids);
          const writing = new Set<number>();
          const all: TaskChange[] = [];
          const events: Array<{ agent: string; type: string; action: string; task: Task }> = [];
          planned = calls.map((call): Planned => {
            try {
              const { task, changes } = planUpdate(view.require(call.id), call.patch, call.by, view);
              const stamped = changes.map((change) => stamp(change));
              if (stamped.some((change) => writing.has(change.task.id))) return 'again';
              for (const change of stamped) {
                writing.add(change.task.id);
                // The next caller's plan sees this one's writes: as if they ran one after the other.
                view.tasks.set(change.task.id, change.task);
                all.push(change);
                events.push({ agent: call.by, type: 'task', action: change.action, task: change.task });
              }
              return { value: task, by: call.by, changes: stamped };
            } catch (error) {
              return error instanceof NeedMoreTasks ? ALONE : { error };
            }
          });
          // The changes' task events (and their agents' events before them) commit with them (pg-events.ts).
          recordIn?.(tx, events);
          if (all.length) tx.finish(...storeChanges(team, all, { token }));
          return planned;
        },
        {
          lock: { shared: true, key: [BOARD_LOCK, team] },
          first: { sql: READ_LOCKED, params: [team, ids] },
          // Its rows carry its token: found, the attempt that planned `planned` committed.
          recover: async (client, token) => ((await changesOf(client, team, token)).length ? planned : undefined),
        },
      );
    const agents = [...new Set(calls.map((call) => call.by))];
    const outcome = await (record ? record.around(agents, (recordIn) => run(recordIn)) : run());
    // Committed: every caller is announced and answered now, with nothing more awaited (an error
    // here would be every caller's, and a committed change would be told it failed).
    const changed: number[] = [];
    const results: Array<BatchOutcome<Task | typeof ALONE>> = [];
    for (const result of outcome) {
      if (result === 'again') results.push('again');
      else if (result === ALONE) results.push({ value: ALONE });
      else if ('error' in result) results.push({ error: result.error });
      else {
        this.#announce(result.by, result.changes);
        changed.push(...result.changes.map((change) => change.task.id));
        results.push({ value: result.value });
      }
    }
    if (changed.length) channel.announce(this.#ctx.db, { k: 'b', ids: changed });
    return results;
  }

  /**
   * A change planned on the rows around `ids`: `exclusive` (a new task, a new dependency) holds
   * the board lock alone; `rows` shares it with claims and locks the rows it may write (the task
   * and those that wait for it). A plan that needs more of the board runs again exclusively.
   */
  async #change<T>(
    by: string,
    mode: 'exclusive' | 'rows',
    ids: number[],
    rebuild: (changes: TaskChange[]) => T | undefined,
    plan: (client: pg.PoolClient, view: LoadedView) => Promise<Outcome<T>>,
  ): Promise<T> {
    const wanted = ids.filter((id) => Number.isSafeInteger(id));
    try {
      const first = mode === 'rows' ? { sql: READ_LOCKED, params: [this.#ctx.team, wanted] } : undefined;
      return await this.#transaction(by, mode === 'exclusive', first, rebuild, async (client, read) => {
        let view = read ? lockedView(read.rows as Array<StoredRow & { locked: boolean }>, wanted) : await readAround(client, this.#ctx.team, wanted);
        for (;;) {
          try {
            return await plan(client, view);
          } catch (error) {
            if (!(error instanceof NeedMoreTasks) || view.full) throw error;
            if (mode === 'rows') throw new NeedsExclusive();
            view = await readAll(client, this.#ctx.team);
          }
        }
      });
    } catch (error) {
      if (error instanceof NeedsExclusive) return this.#change(by, 'exclusive', ids, rebuild, plan);
      throw error;
    }
  }

  /**
   * One board transaction under the board lock (`exclusive`, or shared with claims): `work`, then
   * every row it changed and its record under the token, in one statement; then, once committed,
   * the task events, this process's listeners and (coalesced, team-channel.ts) the NOTIFY.
   */
  async #transaction<T>(
    by: string,
    exclusive: boolean,
    first: { sql: string; params: unknown[] } | undefined,
    rebuild: (changes: TaskChange[]) => T | undefined,
    work: (client: pg.PoolClient, read: pg.QueryResult | undefined) => Promise<Outcome<T>>,
  ): Promise<T> {
    const { team, channel, record } = this.#ctx;
    type Recorder = Parameters<Parameters<NonNullable<typeof record>['around']>[1]>[0];
    const run = (recordIn?: Recorder) =>
      write(
        this.#ctx,
        async (client, token, tx) => {
          const result = await work(client, tx.first);
          const stamped = result.changes.map((change) => stamp(change));
          // The change's task events (and this host's events before them) commit with it (pg-events.ts);
          // every attempt says what it wrote, none included, since a retried attempt may change nothing.
          recordIn?.(
            tx,
            stamped.map(({ action, task }) => ({ agent: by, type: 'task', action, task })),
          );
          if (stamped.length) tx.finish(...storeChanges(team, stamped, { token }));
          return { value: result.value, changes: stamped };
        },
        {
          lock: { shared: !exclusive, key: [BOARD_LOCK, team] },
          ...(first ? { first } : {}),
          // The rows it wrote carry its token and what it did to each: the result is rebuilt from them.
          recover: async (client, token) => {
            const changes = await changesOf(client, team, token);
            const value = changes.length ? rebuild(changes) : undefined;
            return value === undefined ? undefined : { value, changes };
          },
        },
      );
    const outcome = await this.#guard(() => (record ? record.around(by, (recordIn) => run(recordIn)) : run()));
    this.#announce(by, outcome.changes);
    if (outcome.changes.length) channel.announce(this.#ctx.db, { k: 'b', ids: outcome.changes.map((change) => change.task.id) });
    return outcome.value as T;
  }

  /** Runs a board transaction; a task it did not find becomes the message naming the existing ones. */
  async #guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof TaskNotFound) throw await this.#notFound(error.id);
      throw error;
    }
  }

  #announce(by: string, changes: TaskChange[]): void {
    for (const { action, task } of changes) {
      this.#ctx.hub.emit(by, 'task', { action, task: structuredClone(task) });
      // Its own copy for the listeners, when there are any (a busy board announces three changes a task).
      if (this.#shared.listeners.size) announce(this.#shared, { source: 'local', action, task: structuredClone(task), agent: by });
    }
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

/** A change that turned out to need the whole board: run it again holding the board lock alone. */
class NeedsExclusive extends Error {}

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
