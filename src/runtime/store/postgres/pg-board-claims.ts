// Which task each of several claimers gets, inside one board transaction (pg-board.ts): the first
// tasks by id that the SQL condition selects, locked with SKIP LOCKED so claimers in other
// processes spread out, each given to the first claimer still without one that the board's rule
// lets take it (an assigned task only to its owner). When the quick look serves not every
// claimer, a wider condition looks further, and a last pass waits for the rows other claimers
// hold, so "nothing to claim" is never said while a task exists that claimer may take. With one
// claimer this is exactly the claim of a single agent. A transaction that took a task does not
// wait for rows (it would hold its own while it waits, and two such batches deadlock, each
// costing a second of deadlock detection): its claimers still without one go in the next batch.
import type pg from 'pg';
import type { Task, TaskChange } from '../board/task.js';
import { SKIP_LOCKED, viewWithBlockers, WITH_BLOCKERS } from './pg-board-sql.js';
import { LoadedView, type StoredRow } from './pg-board-view.js';
import { prepared } from './pg-database.js';

/** What a kind of claim takes and how ($1 the team, $2 the claimers' names, as text[]). */
export interface ClaimRule {
  action: TaskChange['action'];
  /** The quick look's condition: every task the rule allows that the board's columns can show. */
  where: string;
  /** A wider condition, looked at when the quick one serves not every claimer. */
  wider?: string;
  /** The board's rule: may `claimer` take `task`, read with its blockers? */
  accept: (task: Task, claimer: string, view: LoadedView) => boolean;
  take: (task: Task, claimer: string) => TaskChange;
  /** Who a stored change of this kind went to: finds each claimer's task after an unknown outcome. */
  holder: (task: Task) => string | null;
}

/** How many rounds a pass looks again past rows no claimer could take. */
const ROUNDS = 50;

function select(condition: string, lock: string): string {
  return `${WITH_BLOCKERS} WHERE t.team = $1 AND ${condition} AND NOT (t.id = ANY($3::bigint[])) ORDER BY t.id LIMIT $4 ${lock}`;
}

/** The quick look, sent with BEGIN (the write's `first` statement). */
export function firstLook(rule: ClaimRule, team: string, claimers: string[]): { sql: string; params: unknown[] } {
  return { sql: select(rule.where, SKIP_LOCKED), params: [team, claimers, [], claimers.length] };
}

/** The change each claimer makes (undefined: nothing for it; `again`: look again in the next transaction), in the claimers' order. */
export async function pickTasks(
  client: pg.ClientBase,
  team: string,
  rule: ClaimRule,
  claimers: string[],
  first: pg.QueryResult | undefined,
): Promise<Array<TaskChange | undefined | 'again'>> {
  const picked: Array<TaskChange | undefined> = claimers.map(() => undefined);
  // Rows taken or refused: later looks go past them.
  const seen: number[] = [];
  const passes: Array<[string, string]> = [[rule.where, SKIP_LOCKED], ...(rule.wider ? ([[rule.wider, SKIP_LOCKED]] as Array<[string, string]>) : [])];
  passes.push([rule.wider ?? rule.where, 'FOR UPDATE OF t']);
  for (const [pass, [condition, lock]] of passes.entries()) {
    const waits = pass === passes.length - 1;
    for (let round = 0; round < ROUNDS; round++) {
      const open = claimers.filter((_, i) => !picked[i]);
      if (open.length === 0) return picked;
      // Before every waiting look, not only the first: a round of it may have taken a task.
      if (waits && picked.some(Boolean)) return picked.map((change) => change ?? 'again');
      // The first look came with BEGIN (one round trip); later ones are asked for.
      const { rows } = (
        pass === 0 && round === 0 && first ? first : await client.query(prepared(select(condition, lock), [team, open, seen, open.length]))
      ) as pg.QueryResult<StoredRow & { blockers: StoredRow[] }>;
      for (const row of rows) {
        const id = Number(row.id);
        seen.push(id);
        const view = viewWithBlockers(new LoadedView(), row);
        const task = view.tasks.get(id);
        if (!task) continue;
        const i = claimers.findIndex((claimer, at) => !picked[at] && rule.accept(task, claimer, view));
        if (i >= 0) picked[i] = rule.take(task, claimers[i]!);
      }
      // Fewer rows than asked for: this condition has nothing more.
      if (rows.length < open.length) break;
    }
  }
  return picked;
}
