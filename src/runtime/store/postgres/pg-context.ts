// What every PostgreSQL store of one opened team holds: the database, the team's channel, the
// host this instance writes as (its fence), and its event hub.
import type pg from 'pg';
import type { EventHub } from '../../events/events.js';
import type { Database, Fence } from './pg-database.js';
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

/** A fenced write transaction of this team (see pg-database.ts). */
export function write<T>(ctx: PgContext, work: (client: pg.PoolClient) => Promise<T>, options: { once?: boolean } = {}): Promise<T> {
  return ctx.db.write({ team: ctx.team, fence: ctx.fence, once: options.once === true }, work);
}
