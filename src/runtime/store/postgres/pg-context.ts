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
}

/** A fenced write transaction of this team (see pg-database.ts for the options). */
export function write<T>(ctx: PgContext, work: (client: pg.PoolClient, token: string, tx: Transaction) => Promise<T>, options: Omit<WriteOptions<T>, 'team' | 'fence'> = {}): Promise<T> {
  return ctx.db.write({ ...options, team: ctx.team, fence: ctx.fence }, work);
}
