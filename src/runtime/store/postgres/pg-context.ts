// What every PostgreSQL store of one opened team holds: the database, the team's channel, the
// host this instance writes as (its fence), and its event hub.
import type pg from 'pg';
import type { EventHub } from '../../events/events.js';
import type { Database, Fence, Transaction, WriteOptions } from './pg-database.js';
import type { TeamChannel } from './team-channel.js';

export interface PgContext {
  db: Database;
  channel: TeamChannel;
  team: string;
  /** This instance's host id (a roster member's `host` when it runs here). */
  host: string;
  fence: Fence;
  hub: EventHub;
  /** The event record, once open: a board change writes its task events (and what was buffered before them) in its own transaction. */
  record?: InTransactionRecord;
}

/** Writes events inside another write's transaction (pg-events.ts). */
export interface InTransactionRecord {
  /**
   * Runs `work` once no other write of `agent`'s events is in flight (so its events keep their
   * order); `work` calls `write(tx, events)` in its transaction to store what `agent`
   * emitted before and `events`, which the record then does not store again when they are emitted.
   * Several agents: a batch of their changes in one transaction (each agent's events in order).
   * It calls it in every attempt of the transaction (with no events when that attempt changed
   * nothing): what the attempt that commits wrote is what the record counts as stored.
   */
  around<T>(
    agent: string | string[],
    work: (write: (tx: Transaction, events: Array<{ agent: string; type: string; [field: string]: unknown }>) => void) => Promise<T>,
  ): Promise<T>;
}

/** A fenced write transaction of this team (see pg-database.ts for the options). */
export function write<T>(
  ctx: PgContext,
  work: (client: pg.PoolClient, token: string, tx: Transaction) => Promise<T>,
  options: Omit<WriteOptions<T>, 'team' | 'fence'> = {},
): Promise<T> {
  return ctx.db.write({ ...options, team: ctx.team, fence: ctx.fence }, work);
}
