// The BoardView the board's rules (store/board/) see inside a PostgreSQL transaction: the rows an
// operation needs, read in that transaction. The rules ask synchronously, so the rows are read
// first; a rule that asks for a task that was not read (a dependency check walking the whole
// graph, say) gets NeedMoreTasks, and the operation reads the whole board and runs again.
import type pg from 'pg';
import { parseTaskRecord, type Task } from '../board/task.js';
import type { BoardView } from '../board/view.js';

/** The rule looked beyond the rows read: read the whole board and plan again. */
export class NeedMoreTasks extends Error {
  constructor() {
    super('the board rules need more of the board than was read');
    this.name = 'NeedMoreTasks';
  }
}

/** A rule asked for a task that is not on the board (turned into the message naming existing ids). */
export class TaskNotFound extends Error {
  constructor(readonly id: number) {
    super(`no task #${id}`);
    this.name = 'TaskNotFound';
  }
}

export interface StoredRow {
  id: string;
  data: unknown;
}

export class LoadedView implements BoardView {
  readonly tasks = new Map<number, Task>();
  readonly broken = new Map<number, string>();
  /** Ids read and found missing. */
  readonly absent = new Set<number>();
  /** Ids whose dependents (tasks listing them in blockedBy) were all read. */
  readonly dependentsRead = new Set<number>();
  full = false;

  add(rows: StoredRow[]): void {
    for (const row of rows) {
      const id = Number(row.id);
      const parsed = parseTaskRecord(row.data);
      if ('task' in parsed) this.tasks.set(id, parsed.task);
      else this.broken.set(id, parsed.error);
      this.absent.delete(id);
    }
  }

  #known(id: number): boolean {
    return this.full || this.tasks.has(id) || this.broken.has(id) || this.absent.has(id);
  }

  require(id: number): Task {
    const task = this.tasks.get(id);
    if (task) return task;
    if (!this.#known(id)) throw new NeedMoreTasks();
    if (this.broken.has(id)) throw new Error(`task #${id} is stored but is not a task (${this.broken.get(id)})`);
    throw new TaskNotFound(id);
  }

  find(id: number): Task | undefined {
    if (!this.#known(id)) throw new NeedMoreTasks();
    return this.tasks.get(id);
  }

  unreadable(id: number): boolean {
    if (!this.#known(id)) throw new NeedMoreTasks();
    return this.broken.has(id);
  }

  ids(): number[] {
    if (!this.full) throw new NeedMoreTasks();
    return [...new Set([...this.tasks.keys(), ...this.broken.keys()])].sort((a, b) => a - b);
  }

  dependentsOf(id: number): Iterable<number> {
    if (!this.full && !this.dependentsRead.has(id)) throw new NeedMoreTasks();
    return [...this.tasks.values()].filter((task) => task.blockedBy.includes(id)).map((task) => task.id);
  }
}

/** Reads `ids` (missing ones are noted as absent). */
export async function readTasks(client: pg.ClientBase, team: string, view: LoadedView, ids: Iterable<number>): Promise<void> {
  const wanted = [...new Set(ids)].filter((id) => !view.tasks.has(id) && !view.broken.has(id) && Number.isSafeInteger(id));
  if (wanted.length === 0) return;
  const { rows } = await client.query<StoredRow>('SELECT id, data FROM huddle_tasks WHERE team = $1 AND id = ANY($2::bigint[])', [team, wanted]);
  for (const id of wanted) view.absent.add(id);
  view.add(rows);
}

/** Reads the tasks that list `id` in their blockedBy. */
export async function readDependents(client: pg.ClientBase, team: string, view: LoadedView, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  // Through the blocked_by index alone (the team compared after): see READ_LOCKED in pg-board-sql.ts.
  const { rows } = await client.query<StoredRow>(
    "WITH waiting AS MATERIALIZED (SELECT id, team, data FROM huddle_tasks WHERE blocked_by && $2::bigint[] AND blocked_by <> '{}') SELECT id, data FROM waiting WHERE team = $1",
    [team, ids],
  );
  view.add(rows);
  for (const id of ids) view.dependentsRead.add(id);
}

/** Reads the whole board. */
export async function readAll(client: pg.ClientBase, team: string): Promise<LoadedView> {
  const view = new LoadedView();
  const { rows } = await client.query<StoredRow>('SELECT id, data FROM huddle_tasks WHERE team = $1 ORDER BY id', [team]);
  view.add(rows);
  view.full = true;
  return view;
}

/** Reads `ids`, then everything they touch: their blockers, what they block, and their dependents. */
export async function readAround(client: pg.ClientBase, team: string, ids: number[]): Promise<LoadedView> {
  const view = new LoadedView();
  await readTasks(client, team, view, ids);
  const near = new Set<number>();
  for (const id of ids) {
    const task = view.tasks.get(id);
    if (!task) continue;
    for (const other of [...task.blockedBy, ...task.blocks]) near.add(other);
  }
  await readTasks(client, team, view, near);
  await readDependents(
    client,
    team,
    view,
    ids.filter((id) => view.tasks.has(id)),
  );
  return view;
}
