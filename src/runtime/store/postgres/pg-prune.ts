// Removing teams from the database: `huddle prune` and the retention of archived teams
// (`--fresh` renames a team to NAME@archive-TIME; its rows stay until pruned). A team whose lead
// is live is never removed. Every row of a team goes in one transaction per team.
import type { Database } from './pg-database.js';

/** Every table with a `team` column (huddle_teams last: it is what names a team). */
export const TEAM_TABLES = [
  'huddle_members',
  'huddle_inboxes',
  'huddle_messages',
  'huddle_tasks',
  'huddle_spend',
  'huddle_allow',
  'huddle_events',
  'huddle_transcripts',
  'huddle_run_records',
  'huddle_hosts',
  'huddle_placements',
  'huddle_approvals',
  'huddle_ops',
];

/** The mark `--fresh` puts in an archived team's name. */
export const ARCHIVE_MARK = '@archive-';

export interface PruneCandidate {
  team: string;
  archivedAt: Date | undefined;
  /** Rows of the team's event record (the bulk of a team). */
  events: number;
  /** Its lead holds it now: never removed. */
  live: boolean;
}

/**
 * Teams to prune: `names` when given, else every archived team archived at least `olderThanDays`
 * days ago (a team archived before huddle kept the time counts from its creation).
 */
export async function pruneCandidates(db: Database, options: { names?: string[]; olderThanDays?: number }): Promise<PruneCandidate[]> {
  const byName = options.names?.length ? options.names : null;
  const { rows } = await db.query<{ team: string; archived_at: Date | null; events: string; live: boolean }>(
    `SELECT t.team, t.archived_at,
            (SELECT count(*) FROM huddle_events e WHERE e.team = t.team) AS events,
            EXISTS (SELECT 1 FROM huddle_hosts h WHERE h.team = t.team AND h.host = t.lead_host AND h.state = 'live' AND h.lease_until > now()) AS live
       FROM huddle_teams t
      WHERE CASE WHEN $1::text[] IS NOT NULL THEN t.team = ANY($1::text[])
                 ELSE position($2 in t.team) > 0 AND coalesce(t.archived_at, t.created_at) <= now() - make_interval(days => $3::int) END
      ORDER BY t.team`,
    [byName, ARCHIVE_MARK, Math.max(0, Math.floor(options.olderThanDays ?? 0))],
  );
  return rows.map((row) => ({ team: row.team, archivedAt: row.archived_at ?? undefined, events: Number(row.events), live: row.live }));
}

/** Deletes every row of `team` unless its lead is live (checked under the team row's lock); true when it was removed. */
export async function pruneTeam(db: Database, team: string): Promise<boolean> {
  return db.write({ team }, async (client) => {
    const { rows } = await client.query<{ live: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM huddle_hosts h WHERE h.team = t.team AND h.host = t.lead_host AND h.state = 'live' AND h.lease_until > now()) AS live
         FROM huddle_teams t WHERE t.team = $1 FOR UPDATE`,
      [team],
    );
    if (!rows[0] || rows[0].live) return false;
    for (const table of TEAM_TABLES) await client.query(`DELETE FROM ${table} WHERE team = $1`, [team]);
    await client.query('DELETE FROM huddle_teams WHERE team = $1', [team]);
    return true;
  });
}

/** Retention: removes the archived teams older than `days` (0: keeps them); the number removed. Failures are left for next time. */
export async function pruneArchived(db: Database, days: number): Promise<number> {
  if (!(days > 0)) return 0;
  let removed = 0;
  for (const candidate of await pruneCandidates(db, { olderThanDays: days })) {
    if (!candidate.live && (await pruneTeam(db, candidate.team).catch(() => false))) removed += 1;
  }
  return removed;
}
