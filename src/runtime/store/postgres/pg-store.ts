// The PostgreSQL backend (docs/contract.md#command-line, `--team URL`): a team's shared state in one database that
// several processes and hosts open at once. Opening it connects (applying migrations), registers
// this process as a host with a lease, and, to run the team (`run`), takes the team: the lead's
// host is recorded on the team, and a second run is refused while that lease lives (at once when
// the holder is a dead process on this machine). Workers and other helpers join (`join`).
import path from 'node:path';
import { currentProcess, isCurrentProcess, liveness } from '../../fs/process-identity.js';
import type { Workspace } from '../../workspace/workspace.js';
import { LEAD_NAME } from '../../vocabulary.js';
import type { Task } from '../board/task.js';
import { StoreError, StoreUnavailableError, StoreWriteError } from '../store-errors.js';
import { type OpenStoreOptions, type StoreBackend, TeamBusyError, type TeamStore } from '../team-store.js';
import { PgAllowList } from './pg-allow-list.js';
import { PgApprovals } from './pg-approvals.js';
import { PgBoard } from './pg-board.js';
import { PgBus } from './pg-bus.js';
import type { PgContext } from './pg-context.js';
import { Database, describeConnectError, isConnectionError, type Pooler } from './pg-database.js';
import { PgEventStore } from './pg-events.js';
import { hostToken, insertHost, type LapsedHost, newHostId, PgHosts } from './pg-hosts.js';
import { PgRemoteControl } from './pg-remote-control.js';
import { PgRoster } from './pg-roster.js';
import { PgSpendLedger } from './pg-spend-ledger.js';
import { parseTeamUrl, type TeamUrl } from '../team-url.js';
import { ARCHIVE_MARK, pruneArchived, TEAM_TABLES } from './pg-prune.js';
import { TeamChannel } from './team-channel.js';
import { ensureTeamGitignore } from '../../workspace/team-gitignore.js';
import { makeTeamDirPrivate } from '../../workspace/team-privacy.js';

export interface PostgresBackendOptions {
  /** How long a host's lease lasts without renewal (HUDDLE_LEASE_MS). */
  leaseMs?: number;
  /** How often every wait re-reads the team whatever NOTIFY said (NOTIFY is a hint; this the floor). */
  pollMs?: number;
  /** Connections in this process's pool. */
  poolSize?: number;
  /** What sits in between: a pooler gets no startup parameters; a transaction-mode one no LISTEN and no prepared statements either. */
  pooler?: Pooler;
  /** Archived teams older than this many days are deleted when a lead opens a team (0: never). */
  retentionDays?: number;
}

export const DEFAULT_RETENTION_DAYS = 30;

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_POLL_MS = 5_000;

export function postgresBackend(url: string, workspace: Workspace, options: PostgresBackendOptions = {}): StoreBackend {
  const parsed = parseTeamUrl(url, path.basename(workspace.root) || 'team');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const tuning: Tuning = { leaseMs, pollMs: options.pollMs ?? DEFAULT_POLL_MS, poolSize: options.poolSize, pooler: options.pooler ?? 'none' };
  const where = `team '${parsed.team}' on ${parsed.display.replace(/\?.*$/, '')}`;
  const withDatabase = async <T>(work: (db: Database) => Promise<T>): Promise<T> => {
    const db = await connect(parsed, tuning);
    try {
      return await work(db);
    } catch (error) {
      if (error instanceof StoreError || !isConnectionError(error)) throw error;
      throw describeConnectError(error, parsed.display);
    } finally {
      await db.close();
    }
  };
  return {
    describe: () => where,
    unfinishedMembers: () =>
      withDatabase(async (db) => {
        await refuseIfBusy(db, parsed.team, where);
        // A team only workers have joined so far was never run: nothing of it is unfinished.
        const { rows } = await db.query<{ name: string }>(
          `SELECT m.name FROM huddle_members m JOIN huddle_teams t ON t.team = m.team AND t.ran WHERE m.team = $1 AND m.data->>'status' <> 'shutdown' ORDER BY m.position`,
          [parsed.team],
        );
        return rows.map((row) => row.name);
      }),
    archive: () =>
      withDatabase(async (db) => {
        await refuseIfBusy(db, parsed.team, where);
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const archived = `${parsed.team}${ARCHIVE_MARK}${stamp}`;
        const moved = await db.write({ team: parsed.team }, async (client) => {
          const { rowCount } = await client.query('UPDATE huddle_teams SET team = $2, archived_at = now() WHERE team = $1', [parsed.team, archived]);
          if (!rowCount) return false;
          for (const table of TEAM_TABLES) await client.query(`UPDATE ${table} SET team = $2 WHERE team = $1`, [parsed.team, archived]);
          return true;
        });
        return moved ? `team '${archived}' in the database` : undefined;
      }),
    open: (openOptions) => openPostgresStore(parsed, workspace, tuning, openOptions, where, options.retentionDays ?? DEFAULT_RETENTION_DAYS),
  };
}

/** The database of a team URL for `work` (huddle prune), closed after; a connection that fails is one line. */
export async function withTeamDatabase<T>(url: string, workspace: Workspace, work: (db: Database, team: string) => Promise<T>): Promise<T> {
  const parsed = parseTeamUrl(url, path.basename(workspace.root) || 'team');
  const db = await connect(parsed, { leaseMs: DEFAULT_LEASE_MS, pollMs: DEFAULT_POLL_MS, poolSize: undefined, pooler: 'none' });
  try {
    return await work(db, parsed.team);
  } catch (error) {
    if (error instanceof StoreError || !isConnectionError(error)) throw error;
    throw describeConnectError(error, parsed.display);
  } finally {
    await db.close();
  }
}

/** How a process uses the team's database: its lease, its polls, its pool, and what sits in between. */
interface Tuning {
  leaseMs: number;
  pollMs: number;
  poolSize: number | undefined;
  pooler: Pooler;
}

async function connect(parsed: TeamUrl, { leaseMs, poolSize, pooler }: Tuning): Promise<Database> {
  try {
    return await Database.open(parsed.connectionString, {
      retryForMs: Math.max(30_000, leaseMs * 3),
      queryTimeoutMs: Math.max(5_000, leaseMs),
      // Shorter than a lease: what a cut-off host held is free again before its lease is swept.
      idleInTransactionMs: Math.max(1_000, Math.floor(leaseMs / 2)),
      lockTimeoutMs: Math.max(2_000, leaseMs),
      ...(poolSize ? { poolSize } : {}),
      pooler,
    });
  } catch (error) {
    throw describeConnectError(error, parsed.display);
  }
}

interface LeadHolder {
  hostname: string;
  pid: number;
  proc_start: string | null;
  started_at: Date;
}

/** The live lead holding the team, if any (a dead process on this machine holds nothing). */
async function liveLead(db: Database, team: string): Promise<LeadHolder | undefined> {
  const { rows } = await db.query<LeadHolder>(
    `SELECT h.hostname, h.pid, h.proc_start, h.started_at FROM huddle_teams t JOIN huddle_hosts h ON h.team = t.team AND h.host = t.lead_host
      WHERE t.team = $1 AND h.state = 'live' AND h.lease_until > now()`,
    [team],
  );
  const holder = rows[0];
  if (!holder) return undefined;
  const identity = { pid: holder.pid, host: holder.hostname, ...(holder.proc_start ? { start: holder.proc_start } : {}) };
  // This process holding it is no conflict (as with the file backend's lock); a dead one holds nothing.
  if (isCurrentProcess(identity) || liveness(identity) === 'dead') return undefined;
  return holder;
}

async function refuseIfBusy(db: Database, team: string, where: string): Promise<void> {
  const holder = await liveLead(db, team);
  if (holder) throw busy(holder, where);
}

function busy(holder: LeadHolder, where: string): TeamBusyError {
  const elsewhere = holder.hostname !== currentProcess().host;
  return new TeamBusyError({ pid: holder.pid, ...(elsewhere ? { host: holder.hostname } : {}), since: new Date(holder.started_at).toISOString() }, where);
}

export async function openPostgresStore(
  parsed: TeamUrl,
  workspace: Workspace,
  tuning: Tuning,
  options: OpenStoreOptions,
  where: string,
  retentionDays = 0,
): Promise<TeamStore> {
  const { hub, secrets, mode = 'run' } = options;
  makeTeamDirPrivate(workspace.teamDir); // the checkout's .team/ (logs, run records) is the person's alone
  const { leaseMs } = tuning;
  const db = await connect(parsed, tuning);
  const host = newHostId();
  const registration = { kind: mode === 'run' ? ('lead' as const) : ('join' as const), cwd: workspace.root, leaseMs };
  let channel: TeamChannel | undefined;
  try {
    // Register (and, to run the team, take it) in one transaction on the team's row.
    await db.write({ team: parsed.team }, async (client) => {
      await client.query('INSERT INTO huddle_teams (team, team_name, lead) VALUES ($1, $2, $3) ON CONFLICT (team) DO NOTHING', [
        parsed.team,
        parsed.team,
        LEAD_NAME,
      ]);
      await client.query('SELECT 1 FROM huddle_teams WHERE team = $1 FOR UPDATE', [parsed.team]);
      if (mode === 'run') {
        const holder = await liveLead(db, parsed.team);
        if (holder) throw busy(holder, where);
        // The lead before us is gone (it ended, or died: its lease ran out or its pid is dead here);
        // what it ran in its own process is ours to resume, not "running elsewhere".
        await client.query(
          `UPDATE huddle_hosts SET state = 'gone' WHERE team = $1 AND host = (SELECT lead_host FROM huddle_teams WHERE team = $1) AND state = 'live'`,
          [parsed.team],
        );
      }
      await insertHost(client, parsed.team, host, registration);
      if (mode === 'run') await client.query('UPDATE huddle_teams SET lead_host = $2, ran = true WHERE team = $1', [parsed.team, host]);
    });
    channel = await TeamChannel.acquire(parsed.connectionString, parsed.team, {
      pingMs: Math.max(500, Math.min(2_000, Math.floor(leaseMs / 3))),
      pollMs: tuning.pollMs,
      listen: tuning.pooler !== 'transaction',
    });
  } catch (error) {
    await db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreUnavailableError(`cannot open the team (${where}): ${(error as Error).message}`);
  }

  const failureListeners = new Set<(error: StoreError) => void>();
  let failure: StoreError | undefined;
  const fail = (error: StoreError): void => {
    if (failure) return;
    failure =
      error.name === 'StoreFencedError'
        ? error
        : new StoreWriteError(`${error.message}; the team's state can no longer be kept, so the run stops (once fixed, huddle --resume goes on from here)`);
    hub.emit('huddle', 'warning', { message: failure.message, store_failure: true });
    for (const listener of [...failureListeners]) listener(failure);
  };

  // The hosts object is made first: its fence guards every write of the stores below.
  let hosts!: PgHosts;
  const ctx: PgContext = { db, channel, team: parsed.team, host, fence: () => hosts.fence(), hub };
  let handOver: (lapsed: LapsedHost) => Promise<void> = async () => undefined;
  hosts = new PgHosts(ctx, registration, (lapsed) => handOver(lapsed));
  hosts.onLost((error) => fail(error));

  try {
    const roster = await PgRoster.open(ctx, { teamName: parsed.team });
    if (mode === 'run') await roster.update(LEAD_NAME, { host });
    const events = await PgEventStore.open(ctx, { secrets, logsDir: path.join(workspace.teamDir, 'logs'), mirror: mode === 'run', onFailure: fail });
    ctx.record = events;
    const bus = new PgBus(ctx, { knownNames: () => roster.names(), freshNames: () => roster.freshNames(), recorded: () => events.settled() });
    const board = new PgBoard(ctx);
    const spend = await PgSpendLedger.open(ctx, { onFailure: fail });
    const approvals = await PgApprovals.open(ctx);
    const allowList = await PgAllowList.open(ctx, workspace.root);

    handOver = async ({ host: lapsedHost, label, leaseMs: lapsedLease }) => {
      await roster.refresh();
      const stranded = roster.members().filter((m) => m.host === lapsedHost && m.status !== 'shutdown' && m.status !== 'failed');
      for (const member of stranded) {
        const released: Task[] = await board.release(member.name, 'huddle');
        const tasks = released.length ? `; its task${released.length > 1 ? 's' : ''} ${released.map((t) => `#${t.id}`).join(', ')} went back on the board` : '';
        const why = `its host ${label} stopped renewing its lease (no renewal within ${lapsedLease} ms)`;
        await bus.send({
          id: `lapse_${hostToken(lapsedHost)}_${member.name}`,
          type: 'message',
          from: 'huddle',
          to: roster.lead,
          content: `[huddle] ${member.name} failed: ${why}${tasks}`,
        });
        await roster.setStatus(member.name, 'failed', { error: why });
      }
    };
    hosts.start();
    await hosts.refreshLive();
    // While the team is open it holds the process: every timer that renews, pings and retries is
    // unref'd, so when the server goes away (a restart, a failover) nothing else might, and Node
    // would end the process mid-run. One idle handle, released at close.
    const hold = setInterval(() => undefined, 2 ** 31 - 1);
    const server = new URL(parsed.display).host || 'its host';
    const offReachability = db.reachability.on(({ reachable, why }) =>
      hub.emit('huddle', 'warning', {
        message: reachable
          ? `the team's database at ${server} is reachable again; the team carries on`
          : `the team's database at ${server} is unreachable (${why}); waiting for it, nothing is lost`,
        database: reachable ? 'reachable' : 'unreachable',
      }),
    );
    // Retention: the lead clears out teams archived long ago, in the background (what fails waits for the next lead).
    let retention: Promise<unknown> = Promise.resolve();
    if (mode === 'run') retention = pruneArchived(db, retentionDays).catch(() => 0);
    // The checkout still keeps local things in .team/ (logs, worktrees, input history, the control
    // pointer): the same .gitignore as on files keeps them out of git.
    ensureTeamGitignore(workspace.teamDir);

    let closed = false;
    return {
      teamName: roster.teamName,
      bus,
      board,
      roster,
      spend,
      approvals,
      allowList,
      events,
      hosts,
      remote: new PgRemoteControl(ctx),
      get failure() {
        return failure;
      },
      onFailure(listener) {
        failureListeners.add(listener);
        return () => failureListeners.delete(listener);
      },
      async close(reason = 'huddle closed') {
        if (closed) return;
        closed = true;
        approvals.close(reason);
        board.close();
        bus.close();
        roster.close();
        await spend.close();
        await events.closeAndFlush();
        await approvals.settled();
        // The last changes' NOTIFY (sent after their commits, team-channel.ts) goes out before the pool closes.
        await channel!.drained();
        await retention;
        await hosts.close();
        channel!.release();
        offReachability();
        await db.close();
        clearInterval(hold);
      },
    } satisfies TeamStore;
  } catch (error) {
    // Closing: each part closes on its own; one that fails must not keep the rest open.
    await hosts.close().catch(() => undefined);
    channel.release();
    await db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreUnavailableError(`cannot open the team (${where}): ${(error as Error).message}`);
  }
}
