// `huddle prune [--team URL] [--dry-run] [--older-than DAYS] [TEAM…]`: removes teams from a
// PostgreSQL database, one line per team. Without names: every team archived by --fresh at least
// DAYS ago (default: the retentionDays setting). With names: those teams. A team whose lead is live
// is refused (it stays, and the exit code is 1); --dry-run says what would go and removes nothing.
//
// `huddle prune --checkpoints [--dry-run]`: removes the checkpoint shadows of workspaces that are gone
// (docs/trust.md#checkpoints-and-rewind), one line each and a total. Only with the flag: a workspace
// on a disk that is not mounted looks gone, so this never happens as a side effect of pruning teams.
import { loadSettings } from '../runtime/settings/load.js';
import { SettingsError } from '../runtime/settings/errors.js';
import { pruneCandidates, pruneTeam } from '../runtime/store/postgres/pg-prune.js';
import { DEFAULT_RETENTION_DAYS, withTeamDatabase } from '../runtime/store/postgres/pg-store.js';
import { StoreError } from '../runtime/store/store-errors.js';
import { judgeCheckpointShadows, removeOrphanedShadow } from '../runtime/workspace/checkpoint-prune.js';
import { Workspace } from '../runtime/workspace/workspace.js';

export interface PruneOptions {
  cwd?: string;
  team?: string;
  dryRun: boolean;
  olderThanDays?: number;
  names: string[];
}

/**
 * Removes (or with dryRun lists) the shadows whose workspace is gone; a shadow whose workspace is there is
 * never touched. Exit 1 when a shadow was left that the person should look at (it could not be judged or removed).
 */
export function runPruneCheckpoints(options: { dryRun: boolean }, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): number {
  const verdicts = judgeCheckpointShadows();
  let removed = 0;
  let bytes = 0;
  let left = 0;
  for (const verdict of verdicts) {
    if (verdict.kind === 'unknown') {
      out(`left ${verdict.dir}: ${verdict.reason}`);
      left += 1;
    } else if (verdict.kind === 'orphaned') {
      const what = `checkpoints of ${verdict.workspace} (${megabytes(verdict.bytes)})`;
      if (options.dryRun) {
        out(`would remove ${what}`);
      } else {
        let gone: boolean;
        try {
          gone = removeOrphanedShadow(verdict);
        } catch (error) {
          out(`left ${what}: ${(error as Error).message}`);
          left += 1;
          continue;
        }
        if (!gone) {
          out(`kept ${what}: the workspace is back`);
          continue;
        }
        out(`removed ${what}`);
      }
      removed += 1;
      bytes += verdict.bytes;
    }
  }
  const kept = verdicts.filter((v) => v.kind === 'in use').length;
  const total = removed
    ? `${options.dryRun ? 'would remove' : 'removed'} the checkpoints of ${removed} workspace${removed === 1 ? '' : 's'} that are gone (${megabytes(bytes)})`
    : 'no checkpoints of workspaces that are gone';
  out(`${total}; kept ${kept} of workspaces that exist${left ? `, left ${left} named above` : ''}`);
  return left ? 1 : 0;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

export async function runPruneCommand(options: PruneOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const fail = (line: string) => {
    process.stderr.write(`huddle: ${line}\n`);
    return 2;
  };
  const cwd = options.cwd ?? process.cwd();
  let url = options.team;
  let days = options.olderThanDays;
  try {
    const { settings } = loadSettings({ cwd, env });
    url ??= settings.team;
    days ??= settings.retentionDays ?? DEFAULT_RETENTION_DAYS;
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    if (!url) return fail(error.message);
    days ??= DEFAULT_RETENTION_DAYS;
  }
  if (!url)
    return fail(
      'huddle prune needs a team on PostgreSQL: --team postgres://USER@HOST/DB (or the team setting); huddle prune --checkpoints removes the checkpoints of workspaces that are gone',
    );
  try {
    return await withTeamDatabase(url, new Workspace(cwd), async (db) => {
      const candidates = await pruneCandidates(db, { names: options.names, olderThanDays: days });
      let refused = 0;
      for (const name of options.names) {
        if (!candidates.some((c) => c.team === name)) {
          out(`no team '${name}' in the database`);
          refused += 1;
        }
      }
      if (!options.names.length && !candidates.length) out(`no team archived ${days} days ago or more`);
      for (const candidate of candidates) {
        const what = `team '${candidate.team}' (${candidate.events} events${candidate.archivedAt ? `, archived ${candidate.archivedAt.toISOString()}` : ''})`;
        if (candidate.live) {
          out(`kept ${what}: its lead is running it; stop it first`);
          refused += 1;
        } else if (options.dryRun) {
          out(`would remove ${what}`);
        } else if (await pruneTeam(db, candidate.team)) {
          out(`removed ${what}`);
        } else {
          out(`kept ${what}: its lead started running it meanwhile`);
          refused += 1;
        }
      }
      return refused ? 1 : 0;
    });
  } catch (error) {
    if (error instanceof StoreError) return fail(error.message);
    throw error;
  }
}
