// Hosts of a team in PostgreSQL (hosts.ts has the contract): each process that opens the team is a
// row with a lease it renews. Time is the database's (`now()`), so clocks of different machines
// never disagree about a lease.
//
// Renewal uses a connection of its own, held between renewals (a pooled one may wait behind the
// team's work; a new one each time costs the server a backend start every few seconds), dropped
// and made afresh when a renewal fails or times out (a dead link). A renewal that finds the lease
// lapsed (or its epoch moved on) means the host is lost for good. The host also
// gives up by itself when it could not renew for a whole lease. Every process of the team sweeps:
// a worker whose lease lapsed is marked `lapsed` (its epoch moves on, which fences its writes),
// then one sweeper hands its teammates over (onLapsed) and marks it `gone`.
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { currentProcess } from '../../fs/process-identity.js';
import type { Placement, PlacementSpec, StopOutcome, TeamHosts } from '../hosts.js';
import type { StoreError } from '../store-errors.js';
import { askServerKeepalives, StoreFencedError } from './pg-database.js';
import { type PgContext, write } from './pg-context.js';
import { toJsonb } from './pg-json.js';
import { Reachability } from './pg-reachability.js';

/** How many leases a stop waits for the worker before it leaves the teammate's end to it. */
const STOP_DEADLINE_LEASES = 3;

export interface HostRegistration {
  kind: 'lead' | 'join';
  cwd: string;
  leaseMs: number;
}

/** A worker host whose lease lapsed, with what is needed to say so. */
export interface LapsedHost {
  host: string;
  label: string;
  leaseMs: number;
}

/** A worker's placements: how to start one, and those running (their stop switches). */
interface Serving {
  slots: number;
  start: (placement: Placement, stop: AbortSignal) => Promise<void>;
  running: Map<string, AbortController>;
  checking: boolean;
  again: boolean;
}

export function newHostId(): string {
  return `${
    hostname()
      .replace(/[^A-Za-z0-9.-]/g, '')
      .slice(0, 40) || 'host'
  }-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** A short token of a host id, usable in a message id. */
export function hostToken(host: string): string {
  return createHash('sha1').update(host).digest('hex').slice(0, 12);
}

export function hostLabel(cwd: string): string {
  return `${hostname()}:${cwd}`;
}

/** Inserts this host's row (its lease starts now). Inside the caller's transaction. */
export async function insertHost(client: pg.ClientBase, team: string, host: string, registration: HostRegistration): Promise<void> {
  const me = currentProcess();
  await client.query(
    `INSERT INTO huddle_hosts (team, host, kind, label, hostname, pid, proc_start, cwd, slots, epoch, state, lease_ms, lease_until)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 1, 'live', $9::integer, now() + $9::integer * interval '1 millisecond')`,
    [team, host, registration.kind, hostLabel(registration.cwd), me.host, me.pid, me.start ?? null, registration.cwd, registration.leaseMs],
  );
}

export class PgHosts implements TeamHosts {
  readonly self: string;
  readonly epoch = 1;
  readonly #ctx: PgContext;
  readonly #registration: HostRegistration;
  readonly #onLapsed: (lapsed: LapsedHost) => Promise<void>;
  readonly #lostListeners = new Set<(error: StoreError) => void>();
  readonly #live = new Set<string>();
  #lost: StoreError | undefined;
  #renewTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #lastRenewed = Date.now();
  #leaseClient: pg.Client | undefined;
  #closed = false;
  #sweeping = false;
  #serving: Serving | undefined;

  constructor(ctx: PgContext, registration: HostRegistration, onLapsed: (lapsed: LapsedHost) => Promise<void>) {
    this.#ctx = ctx;
    this.self = ctx.host;
    this.#registration = registration;
    this.#onLapsed = onLapsed;
  }

  /** The fence every write of this host carries (pg-database.ts). */
  fence = (): { host: string; epoch: number; lost: boolean } | undefined => ({ host: this.self, epoch: this.epoch, lost: this.#lost !== undefined });

  get lost(): StoreError | undefined {
    return this.#lost;
  }

  /** Starts renewing and sweeping. */
  start(): void {
    const { leaseMs } = this.#registration;
    // Three renewals per lease; after a failed one, soon again (a short cut must not cost the lease).
    const renewEvery = Math.max(50, Math.floor(leaseMs / 3));
    const renew = (delay: number) => {
      this.#renewTimer = setTimeout(() => {
        void this.#renew().then((ok) => {
          if (!this.#closed && !this.#lost) renew(ok ? renewEvery : Math.min(renewEvery, 200));
        });
      }, delay);
      this.#renewTimer.unref();
    };
    renew(renewEvery);
    const sweepEvery = Math.max(50, Math.floor(leaseMs / 4));
    const sweep = () => {
      this.#sweepTimer = setTimeout(() => {
        void this.sweep().finally(() => {
          if (!this.#closed) sweep();
        });
      }, sweepEvery);
      this.#sweepTimer.unref();
    };
    sweep();
    const offHosts = this.#ctx.channel.on('h', (change, remote) => {
      if (!remote) return;
      if (change.host === this.self) this.#checkPlacements();
      void this.refreshLive();
    });
    const offResync = this.#ctx.channel.onResync(() => {
      this.#checkPlacements();
      void this.refreshLive();
    });
    this.#offChannel = () => {
      offHosts();
      offResync();
    };
    void this.refreshLive();
  }

  #offChannel: () => void = () => undefined;

  onLost(listener: (error: StoreError) => void): () => void {
    if (this.#lost) {
      listener(this.#lost);
      return () => undefined;
    }
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  isLiveElsewhere(host: unknown): boolean {
    return typeof host === 'string' && host !== this.self && this.#live.has(host);
  }

  // ---- lease --------------------------------------------------------------------------------

  /** One renewal; false when the database could not be reached. */
  async #renew(): Promise<boolean> {
    if (this.#closed || this.#lost) return true;
    const { leaseMs } = this.#registration;
    const reachability = Reachability.of(this.#ctx.db.connectionString);
    let client = this.#leaseClient;
    try {
      client ??= await this.#connectLeaseClient();
      // A lead renews a lapsed lease too: nobody sweeps a lead, and a lead that took the team over in the
      // meantime marked this one `gone` (pg-store.ts), which this statement then finds. A worker's lapsed
      // lease is the sweep's to hand over, so it is lost.
      const { rows } = await client.query(
        `UPDATE huddle_hosts SET lease_until = now() + lease_ms * interval '1 millisecond'
          WHERE team = $1 AND host = $2 AND epoch = $3 AND state = 'live' AND (lease_until > now() OR kind = 'lead') RETURNING 1`,
        [this.#ctx.team, this.self, this.epoch],
      );
      reachability.up();
      if (rows.length === 0) {
        // Why the lease was lost is a nicety for the message; losing it is what matters.
        this.#lose(await whyLost(client, this.#ctx.team, this.self).catch(() => undefined));
        return true;
      }
      this.#lastRenewed = Date.now();
      return true;
    } catch (error) {
      if (this.#closed) return true;
      // Could not reach the database: the next renewal tries again on a new connection. A worker gives up
      // once a whole lease went by (its teammates are handed over); a lead rides out an outage of any
      // length, since only another lead taking the team can end its hold (docs/postgresql-managed.md#when-the-server-goes-away).
      reachability.down(error);
      if (client) this.#dropLeaseClient(client);
      if (this.#registration.kind !== 'lead' && Date.now() - this.#lastRenewed >= leaseMs) this.#lose();
      return false;
    }
  }

  async #connectLeaseClient(): Promise<pg.Client> {
    const timeout = Math.max(300, Math.floor(this.#registration.leaseMs / 4));
    const client = new pg.Client({
      connectionString: this.#ctx.db.connectionString,
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      application_name: 'huddle-lease',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { pooler } = this.#ctx.db.options;
      if (!pooler || pooler === 'none') askServerKeepalives(client);
    } catch (error) {
      this.#dropLeaseClient(client);
      throw error;
    }
    if (this.#closed) {
      this.#dropLeaseClient(client);
      throw new Error('closed');
    }
    this.#leaseClient = client;
    return client;
  }

  #dropLeaseClient(client: pg.Client): void {
    if (this.#leaseClient === client) this.#leaseClient = undefined;
    // Closing: a connection that already failed has nothing more to tell us.
    void client.end().catch(() => undefined);
    // A dead link may never finish ending: do not wait for it.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  #lose(why?: string): void {
    if (this.#lost || this.#closed) return;
    this.#lost = new StoreFencedError(this.self, why);
    for (const running of this.#serving?.running.values() ?? []) running.abort(this.#lost);
    for (const listener of [...this.#lostListeners]) listener(this.#lost);
  }

  /** Marks lapsed workers and hands over their teammates (any process of the team may do it; one does). */
  async sweep(): Promise<void> {
    if (this.#sweeping || this.#closed) return;
    this.#sweeping = true;
    const { db, team, channel } = this.#ctx;
    try {
      // FOR UPDATE waits for the lapsed host's writes in flight (pg-database.ts: fenceAndLock).
      const lapsed = await db.query<{ host: string }>(
        `UPDATE huddle_hosts SET state = 'lapsed', epoch = epoch + 1
          WHERE team = $1 AND host IN (SELECT host FROM huddle_hosts WHERE team = $1 AND state = 'live' AND kind <> 'lead' AND lease_until < now() FOR UPDATE)
          RETURNING host`,
        [team],
      );
      const claimed = await db.query<{ host: string; label: string; lease_ms: number }>(
        `UPDATE huddle_hosts SET state = 'sweeping', swept_by = $2, swept_at = now()
          WHERE team = $1 AND (state = 'lapsed' OR (state = 'sweeping' AND swept_at < now() - interval '30 seconds')) RETURNING host, label, lease_ms`,
        [team, this.self],
      );
      for (const row of claimed.rows) {
        await this.#onLapsed({ host: row.host, label: row.label, leaseMs: row.lease_ms });
        await db.query(
          `UPDATE huddle_placements SET state = 'lost' WHERE team = $1 AND host = $2 AND state IN ('reserved', 'pending', 'running', 'stopping')`,
          [team, row.host],
        );
        await db.query(`UPDATE huddle_hosts SET state = 'gone' WHERE team = $1 AND host = $2 AND state = 'sweeping' AND swept_by = $3`, [
          team,
          row.host,
          this.self,
        ]);
      }
      // A spawn whose lead died between reserving and dispatching keeps no slot for long.
      await db.query(`UPDATE huddle_placements SET state = 'cancelled' WHERE team = $1 AND state = 'reserved' AND created_at < now() - interval '60 seconds'`, [
        team,
      ]);
      if (lapsed.rows.length || claimed.rows.length) {
        await db.query('SELECT pg_notify($1, $2)', [channel.channel, JSON.stringify({ k: 'h', o: 'sweep' })]);
        await this.refreshLive();
      }
    } catch (error) {
      // The next sweep tries again.
    } finally {
      this.#sweeping = false;
    }
  }

  async refreshLive(): Promise<void> {
    try {
      const { rows } = await this.#ctx.db.query<{ host: string }>(`SELECT host FROM huddle_hosts WHERE team = $1 AND state = 'live' AND lease_until > now()`, [
        this.#ctx.team,
      ]);
      this.#live.clear();
      for (const row of rows) this.#live.add(row.host);
    } catch {
      // Kept as it was until the next read.
    }
  }

  // ---- placements (the lead) ------------------------------------------------------------

  async reserve(spec: PlacementSpec): Promise<Placement | undefined> {
    const { team } = this.#ctx;
    const id = `place_${randomBytes(8).toString('hex')}`;
    return write(this.#ctx, async (client) => {
      const { rows } = await client.query<{ host: string; label: string; free: string }>(
        `SELECT h.host, h.label,
                h.slots - (SELECT count(*) FROM huddle_placements p WHERE p.team = h.team AND p.host = h.host AND p.state IN ('reserved', 'pending', 'running', 'stopping')) AS free
           FROM huddle_hosts h
          WHERE h.team = $1 AND h.state = 'live' AND h.slots > 0 AND h.lease_until > now() AND h.host <> $2
          ORDER BY h.started_at
          FOR UPDATE OF h`,
        [team, this.self],
      );
      const chosen = rows.filter((row) => Number(row.free) > 0).sort((a, b) => Number(b.free) - Number(a.free))[0];
      if (!chosen) return undefined;
      await client.query(`INSERT INTO huddle_placements (team, id, host, name, spec, state) VALUES ($1, $2, $3, $4, $5, 'reserved')`, [
        team,
        id,
        chosen.host,
        spec.name,
        toJsonb(spec),
      ]);
      return { ...spec, id, host: chosen.host, hostLabel: chosen.label };
    });
  }

  async dispatch(placementId: string): Promise<boolean> {
    const { team, channel } = this.#ctx;
    return write(this.#ctx, async (client) => {
      // Only a reservation still held moves on: a stale one was cancelled by a sweep, and one on a
      // worker that lapsed meanwhile was marked lost (nobody will ever take it).
      const { rows } = await client.query<{ host: string }>(
        `UPDATE huddle_placements SET state = 'pending' WHERE team = $1 AND id = $2 AND state = 'reserved' RETURNING host`,
        [team, placementId],
      );
      if (rows[0]) {
        await channel.publish(client, { k: 'h', host: rows[0].host });
        return true;
      }
      // A retry after a dropped COMMIT finds its own earlier dispatch (pending, or taken already).
      const now = await client.query<{ state: string }>('SELECT state FROM huddle_placements WHERE team = $1 AND id = $2', [team, placementId]);
      const state = now.rows[0]?.state;
      return state !== undefined && state !== 'reserved' && state !== 'cancelled' && state !== 'lost';
    });
  }

  async cancel(placementId: string): Promise<void> {
    await write(this.#ctx, (client) =>
      client.query(`UPDATE huddle_placements SET state = 'cancelled' WHERE team = $1 AND id = $2 AND state = 'reserved'`, [this.#ctx.team, placementId]),
    );
  }

  async recall(reason: string): Promise<void> {
    const { team, channel } = this.#ctx;
    await write(this.#ctx, async (client) => {
      // One no worker has taken yet is nobody's to stop: cancelled, so that no worker takes it after all.
      await client.query(`UPDATE huddle_placements SET state = 'cancelled' WHERE team = $1 AND state = 'pending'`, [team]);
      const { rows } = await client.query<{ host: string }>(
        `UPDATE huddle_placements SET state = 'stopping', spec = spec || jsonb_build_object('stop_reason', $2::text) WHERE team = $1 AND state = 'running' RETURNING host`,
        [team, reason],
      );
      for (const host of new Set(rows.map((row) => row.host))) await channel.publish(client, { k: 'h', host });
    });
  }

  async stop(name: string, reason: string): Promise<StopOutcome> {
    const { team, channel } = this.#ctx;
    const { cancelled, ids } = await write(this.#ctx, async (client) => {
      // A placement its worker has not taken yet is cancelled: nothing runs it, and no worker will take it now.
      const pending = await client.query(`UPDATE huddle_placements SET state = 'cancelled' WHERE team = $1 AND name = $2 AND state = 'pending'`, [team, name]);
      const { rows } = await client.query<{ id: string; host: string }>(
        `UPDATE huddle_placements SET state = 'stopping', spec = spec || jsonb_build_object('stop_reason', $3::text)
          WHERE team = $1 AND name = $2 AND state IN ('running', 'stopping') RETURNING id, host`,
        [team, name, reason],
      );
      for (const host of new Set(rows.map((row) => row.host))) await channel.publish(client, { k: 'h', host });
      return { cancelled: (pending.rowCount ?? 0) > 0, ids: rows.map((row) => row.id) };
    });
    if (ids.length === 0) return cancelled ? 'cancelled' : false;
    // The worker says `done` when the teammate ended; a sweep says `lost` when the worker is gone: either frees the slot.
    // A worker that neither stops it nor lapses within three leases is left to it: the stop is asked, not awaited.
    return new Promise<StopOutcome>((resolve) => {
      let over = false;
      const finish = (outcome: StopOutcome) => {
        if (over) return;
        over = true;
        off();
        offResync();
        clearInterval(again);
        clearTimeout(deadline);
        resolve(outcome);
      };
      const check = () => {
        void this.#ctx.db
          .query(`SELECT 1 FROM huddle_placements WHERE team = $1 AND id = ANY($2) AND state IN ('pending', 'running', 'stopping')`, [team, ids])
          .then(({ rows }) => rows.length === 0 && finish('stopped'))
          // The next notification (or resync, or the deadline) looks again.
          .catch(() => undefined);
      };
      const off = channel.on('h', check);
      const offResync = channel.onResync(check);
      // A notification lost with a dropped link: looked at again once per lease.
      const again = setInterval(check, this.#registration.leaseMs);
      const deadline = setTimeout(() => finish('asked'), STOP_DEADLINE_LEASES * this.#registration.leaseMs);
      check();
    });
  }

  // ---- serving (a worker) ----------------------------------------------------------------

  async serve(slots: number, start: (placement: Placement, stop: AbortSignal) => Promise<void>): Promise<void> {
    const { team, channel } = this.#ctx;
    await write(this.#ctx, async (client) => {
      await client.query('UPDATE huddle_hosts SET slots = $3 WHERE team = $1 AND host = $2', [team, this.self, slots]);
      await channel.publish(client, { k: 'h' });
    });
    this.#serving = { slots, start, running: new Map(), checking: false, again: false };
    this.#checkPlacements();
  }

  /** Takes the placements handed to this host and stops those recalled. */
  #checkPlacements(): void {
    const serving = this.#serving;
    if (!serving || this.#lost || this.#closed) return;
    if (serving.checking) {
      serving.again = true;
      return;
    }
    serving.checking = true;
    void (async () => {
      try {
        do {
          serving.again = false;
          const { team } = this.#ctx;
          const taken = await write(this.#ctx, async (client) => {
            const recalled = await client.query<{ id: string; reason: string | null }>(
              `SELECT id, spec->>'stop_reason' AS reason FROM huddle_placements WHERE team = $1 AND host = $2 AND state = 'stopping'`,
              [team, this.self],
            );
            // Recalled, and no longer run here: its run ended, and its `done` (written once, on the way out) was lost.
            const ended = recalled.rows.filter((row) => !serving.running.has(row.id)).map((row) => row.id);
            if (ended.length) {
              await client.query(`UPDATE huddle_placements SET state = 'done' WHERE team = $1 AND id = ANY($2) AND state = 'stopping'`, [team, ended]);
              await this.#ctx.channel.publish(client, { k: 'h' });
            }
            const { rows } = await client.query<{ id: string; spec: PlacementSpec }>(
              `UPDATE huddle_placements SET state = 'running' WHERE team = $1 AND host = $2 AND state = 'pending' RETURNING id, spec`,
              [team, this.self],
            );
            return { started: rows, recalled: recalled.rows };
          });
          for (const { id, reason } of taken.recalled) serving.running.get(id)?.abort(new Error(reason ?? 'the lead recalled it: the team finished'));
          for (const row of taken.started) this.#run(serving, { ...row.spec, id: row.id, host: this.self, hostLabel: hostLabel(this.#registration.cwd) });
        } while (serving.again);
      } catch {
        // Lost (fenced) or unreachable: the lease logic decides what happens next.
      } finally {
        serving.checking = false;
      }
    })();
  }

  #run(serving: Serving, placement: Placement): void {
    const stop = new AbortController();
    serving.running.set(placement.id, stop);
    void serving
      .start(placement, stop.signal)
      // A teammate's run ends as it ends (its own events say how); the placement is done either way.
      .catch(() => undefined)
      .then(async () => {
        serving.running.delete(placement.id);
        if (this.#lost || this.#closed) return;
        // Told on the channel: a lead waiting for the slot (stop()) hears it is free.
        await write(this.#ctx, async (client) => {
          await client.query(`UPDATE huddle_placements SET state = 'done' WHERE team = $1 AND id = $2`, [this.#ctx.team, placement.id]);
          await this.#ctx.channel.publish(client, { k: 'h' });
        })
          // Best effort on the way out: a sweep by the next lead fixes what this leaves.
          .catch(() => undefined);
      });
  }

  // ---- closing ------------------------------------------------------------------------------

  /** Stops renewing; the lease ends now (a worker's teammates still on the roster are handed over by a sweep). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#sweepTimer);
    if (this.#leaseClient) this.#dropLeaseClient(this.#leaseClient);
    this.#offChannel();
    for (const running of this.#serving?.running.values() ?? []) running.abort(new Error('the worker is stopping'));
    if (this.#lost) return;
    const { team } = this.#ctx;
    const gone = this.#registration.kind === 'lead' ? `state = 'gone'` : `lease_until = now()`;
    // Best effort on the way out: a lease that is not renewed ends by itself.
    await this.#ctx.db
      .query(`UPDATE huddle_hosts SET ${gone} WHERE team = $1 AND host = $2 AND epoch = $3 AND state = 'live'`, [team, this.self, this.epoch])
      .catch(() => undefined);
    if (this.#registration.kind === 'lead') {
      // Best effort on the way out: a sweep by the next lead fixes what this leaves.
      await this.#ctx.db.query('UPDATE huddle_teams SET lead_host = NULL WHERE team = $1 AND lead_host = $2', [team, this.self]).catch(() => undefined);
    }
  }
}

/**
 * Why a renewal found no live lease, in the words the person reads: a lapse is the usual reason;
 * a fresh start of the team (its state archived) takes the host's row away with it.
 */
async function whyLost(client: pg.Client, team: string, host: string): Promise<string | undefined> {
  const { rows } = await client.query('SELECT state FROM huddle_hosts WHERE team = $1 AND host = $2', [team, host]);
  return rows.length === 0 ? 'the team was started afresh (its state archived), which ends every lease' : undefined;
}
