// What the board's rules see: the tasks as they stand inside one board transaction (the file
// backend: under its lock; a database: the rows read in the transaction). The rules are pure
// functions over a view; a backend builds the view, applies the rules, and stores the changes.
import type { Task } from './task.js';

export interface BoardView {
  /** The task stored as `id`; throws TaskBoardError naming the existing ids when there is none, and the backend's own error when it cannot be read. */
  require(id: number): Task;
  /** The task stored as `id`, or undefined when there is none or it cannot be read. */
  find(id: number): Task | undefined;
  /** True when something is stored as `id` but cannot be read as a task. */
  unreadable(id: number): boolean;
  /** Every stored id, readable or not, ascending. */
  ids(): number[];
  /** Ids of tasks whose blockedBy may list `id` (a superset is fine): who waits for it. */
  dependentsOf(id: number): Iterable<number>;
}

/** A view with some tasks replaced: the board as it will be once these changes are stored. */
export function overlay(view: BoardView, replaced: ReadonlyMap<number, Task>): BoardView {
  return {
    require: (id) => replaced.get(id) ?? view.require(id),
    find: (id) => replaced.get(id) ?? view.find(id),
    unreadable: (id) => !replaced.has(id) && view.unreadable(id),
    ids: () => {
      const ids = view.ids();
      const extra = [...replaced.keys()].filter((id) => !ids.includes(id));
      return extra.length ? [...ids, ...extra].sort((a, b) => a - b) : ids;
    },
    dependentsOf: (id) => {
      const ids = new Set(view.dependentsOf(id));
      for (const task of replaced.values()) if (task.blockedBy.includes(id)) ids.add(task.id);
      return ids;
    },
  };
}

/** A view over tasks held in memory (a database transaction's rows, a test's board). */
export function viewOf(
  tasks: Iterable<Task>,
  unreadable: Iterable<number> = [],
  notFound: (id: number) => Error = (id) => new Error(`no task #${id}`),
): BoardView {
  const byId = new Map<number, Task>();
  for (const task of tasks) byId.set(task.id, task);
  const broken = new Set(unreadable);
  const ids = [...new Set([...byId.keys(), ...broken])].sort((a, b) => a - b);
  return {
    require(id) {
      const task = byId.get(id);
      if (!task) throw notFound(id);
      return task;
    },
    find: (id) => byId.get(id),
    unreadable: (id) => broken.has(id),
    ids: () => ids,
    dependentsOf: (id) => [...byId.values()].filter((task) => task.blockedBy.includes(id)).map((task) => task.id),
  };
}
