// The statements of the PostgreSQL board (pg-board.ts): what a claim or a change reads in one
// round trip, and the one statement that writes a change's rows (marked with its transaction's
// token), from which a retry after an unknown outcome rebuilds what happened.
import type pg from 'pg';
import type { Task, TaskChange } from '../board/task.js';
import { LoadedView, type StoredRow } from './pg-board-view.js';
import { toJsonb } from './pg-json.js';

/** Selects a task with its blockers (as JSON), for a claim to judge it in one round trip. */
export const WITH_BLOCKERS = `SELECT t.id, t.data,
  (SELECT coalesce(json_agg(json_build_object('id', b.id, 'data', b.data)), '[]'::json) FROM huddle_tasks b WHERE b.team = t.team AND b.id = ANY(t.blocked_by)) AS blockers
  FROM huddle_tasks t`;

export function viewWithBlockers(view: LoadedView, row: StoredRow & { blockers: StoredRow[] }): LoadedView {
  view.add([{ id: row.id, data: row.data }, ...row.blockers]);
  const task = view.tasks.get(Number(row.id));
  // A blocker that is gone is met (rules.ts): known to be absent, not "not read".
  for (const id of task?.blockedBy ?? []) if (!view.tasks.has(id) && !view.broken.has(id)) view.absent.add(id);
  return view;
}

/**
 * The tasks $2, and the tasks that wait for them, all locked (a change may write them), and their
 * other neighbours (blockers, what they block) as they are: one statement.
 */
export const READ_LOCKED = `WITH waiting AS MATERIALIZED (
    -- Who waits for them, found through the blocked_by index alone (the team is compared after, and
    -- each row is then read by its key): a plan made before the table has statistics (prepared
    -- statements keep theirs) must not read the whole team instead. The index holds only the rows
    -- whose list is not empty (migrations.ts, version 4): the search says so, or it could not use it.
    SELECT id, team FROM huddle_tasks WHERE blocked_by && $2::bigint[] AND blocked_by <> '{}'
  ), locked AS (
    SELECT id, data, blocked_by FROM huddle_tasks
     WHERE team = $1 AND id = ANY($2::bigint[] || ARRAY(SELECT id FROM waiting WHERE team = $1)) FOR UPDATE
  ), near AS (
    SELECT DISTINCT n.id FROM locked l,
      LATERAL (SELECT unnest(l.blocked_by) AS id UNION SELECT jsonb_array_elements_text(l.data->'blocks')::bigint) n
     WHERE l.id = ANY($2::bigint[])
  )
  SELECT id, data, true AS locked FROM locked
  UNION ALL
  -- The neighbours by key (an id array, as for the locked rows): a join here is planned, generically,
  -- as a scan of the whole team, which cost a completion more than everything else it does.
  SELECT t.id, t.data, false FROM huddle_tasks t
   WHERE t.team = $1 AND t.id = ANY(ARRAY(SELECT id FROM near EXCEPT SELECT id FROM locked))`;

export const SKIP_LOCKED = 'FOR UPDATE OF t SKIP LOCKED';

/** The view READ_LOCKED gives for `ids`. */
export function lockedView(rows: Array<StoredRow & { locked: boolean }>, ids: number[]): LoadedView {
  const view = new LoadedView();
  view.add(rows);
  for (const id of ids) {
    if (!view.tasks.has(id) && !view.broken.has(id)) view.absent.add(id);
    view.dependentsRead.add(id);
  }
  // A neighbour named but not stored is gone (met, for the rules), not "not read".
  for (const id of ids)
    for (const other of [...(view.tasks.get(id)?.blockedBy ?? []), ...(view.tasks.get(id)?.blocks ?? [])])
      if (!view.tasks.has(other) && !view.broken.has(other)) view.absent.add(other);
  return view;
}

/**
 * The statement that writes every changed task (new ones inserted), marks them with the
 * transaction's token. The NOTIFY is sent after the commit (pg-board.ts), not in it.
 */
export function storeChanges(team: string, changes: TaskChange[], options: { token: string }): [string, unknown[]] {
  // One row per task: the last change of it wins (a plan never changes one task twice, but be sure).
  const byId = new Map<number, { id: number; created: boolean; action: string; data: Task }>();
  for (const { action, task } of changes)
    byId.set(task.id, { id: task.id, created: action === 'created' || byId.get(task.id)?.created === true, action, data: task });
  return [
    `WITH c AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS c(id bigint, created boolean, action text, data jsonb)),
     ins AS (
       INSERT INTO huddle_tasks (team, id, status, owner, reviewer, blocked_by, data, op_token, op_action)
       SELECT $1, c.id, c.data->>'status', c.data->>'owner', c.data->>'reviewer',
              ARRAY(SELECT jsonb_array_elements_text(c.data->'blockedBy')::bigint), c.data, $3, c.action
         FROM c WHERE c.created
       RETURNING id
     ),
     upd AS (
       UPDATE huddle_tasks t SET status = c.data->>'status', owner = c.data->>'owner', reviewer = c.data->>'reviewer',
              blocked_by = ARRAY(SELECT jsonb_array_elements_text(c.data->'blockedBy')::bigint), data = c.data,
              version = t.version + 1, op_token = $3, op_action = c.action
         FROM c WHERE NOT c.created AND t.team = $1 AND t.id = c.id
       RETURNING t.id
     )
     SELECT (SELECT count(*) FROM ins) + (SELECT count(*) FROM upd) AS written`,
    [team, toJsonb([...byId.values()]), options.token],
  ];
}

/** What the transaction with `token` wrote, as changes (for a retry after an unknown outcome). */
export async function changesOf(client: pg.ClientBase, team: string, token: string): Promise<TaskChange[]> {
  const { rows } = await client.query<StoredRow & { op_action: TaskChange['action'] }>(
    'SELECT id, data, op_action FROM huddle_tasks WHERE team = $1 AND op_token = $2 ORDER BY id',
    [team, token],
  );
  const view = new LoadedView();
  view.add(rows);
  return rows.flatMap((row) => {
    const task = view.tasks.get(Number(row.id));
    return task ? [{ action: row.op_action, task }] : [];
  });
}
