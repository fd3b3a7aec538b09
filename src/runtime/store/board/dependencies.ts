// The dependency graph of a board: a blocks b (b waits for a). Paths for refusing a new edge that
// would close a loop, and the loops already there (made by hand on disk), which no claim can
// ever resolve and so must be reported rather than waited on.
import { TaskBoardError, formatPath } from './task.js';
import type { BoardView } from './view.js';

/** Edges a → b for every `a blocks b`, from both lists (should a crash leave them disagreeing). */
function edgesOf(view: BoardView): Map<number, Set<number>> {
  const edges = new Map<number, Set<number>>();
  const edge = (a: number, b: number) => {
    let out = edges.get(a);
    if (!out) edges.set(a, (out = new Set()));
    out.add(b);
  };
  for (const id of view.ids()) {
    const task = view.find(id);
    if (!task) continue;
    for (const blocked of task.blocks) edge(id, blocked);
    for (const blocker of task.blockedBy) edge(blocker, id);
  }
  return edges;
}

/** A path of `blocks` edges from `from` to `to` (both included), if there is one. */
export function dependencyPath(view: BoardView, from: number, to: number): number[] | undefined {
  const edges = edgesOf(view);
  const seen = new Set<number>();
  // Iterative depth-first search: a chain of thousands of tasks must not overflow the stack.
  const parent = new Map<number, number>();
  const stack = [from];
  while (stack.length) {
    const id = stack.pop()!;
    if (id === to) {
      const path = [id];
      for (let at = id; at !== from;) path.unshift((at = parent.get(at)!));
      return path;
    }
    if (seen.has(id)) continue;
    seen.add(id);
    const next = [...(edges.get(id) ?? [])].reverse(); // visit in insertion order
    for (const n of next) {
      if (seen.has(n)) continue;
      parent.set(n, id);
      stack.push(n);
    }
  }
  return undefined;
}

/** Refuses a new edge blocker → blocked that would close a loop, naming the loop. */
export function refuseCycle(view: BoardView, blocker: number, blocked: number, describe: (path: number[]) => number[]): void {
  const path = dependencyPath(view, blocked, blocker);
  if (path) throw cycleError(describe(path));
}

export function cycleError(ids: number[]): TaskBoardError {
  return new TaskBoardError(`would create a cycle: ${formatPath(ids)} (each arrow: blocks); a task cannot wait for itself`);
}

/**
 * Every loop on the board, each once, as a path that starts and ends at its smallest id:
 * [1, 3, 2, 1] means #1 blocks #3, #3 blocks #2, #2 blocks #1. Completed tasks no longer block,
 * so loops through them do not count.
 */
export function findCycles(view: BoardView): number[][] {
  const edges = edgesOf(view);
  const open = (id: number) => {
    const task = view.find(id);
    return task !== undefined && task.status !== 'completed';
  };
  const state = new Map<number, 'active' | 'done'>();
  const found = new Map<string, number[]>();
  for (const root of view.ids()) {
    if (state.has(root) || !open(root)) continue;
    // Iterative DFS keeping the current path, so a back edge gives the loop directly.
    const path: number[] = [];
    const iterators: Array<Iterator<number>> = [];
    const enter = (id: number) => {
      state.set(id, 'active');
      path.push(id);
      iterators.push((edges.get(id) ?? new Set<number>()).values());
    };
    enter(root);
    while (iterators.length) {
      const step = iterators.at(-1)!.next();
      if (step.done) {
        state.set(path.pop()!, 'done');
        iterators.pop();
        continue;
      }
      const next = step.value;
      if (!open(next)) continue;
      const seen = state.get(next);
      if (seen === 'active') {
        const loop = path.slice(path.indexOf(next));
        const start = loop.indexOf(Math.min(...loop));
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        found.set(rotated.join(','), [...rotated, rotated[0]!]);
      } else if (seen === undefined) {
        enter(next);
      }
    }
  }
  return [...found.values()].sort((a, b) => a[0]! - b[0]! || a.length - b.length);
}
