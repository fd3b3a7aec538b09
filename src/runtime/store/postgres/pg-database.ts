// One connection pool per database per process, shared by every store of every team opened on it,
// and the two ways the stores use it: reads, and write transactions.
//
// A write transaction is retried when the connection drops (a cut link, a restarted server) until
// it goes through or its deadline passes. A drop during COMMIT leaves it unknown whether the
// transaction happened, so a write that must not happen twice (`once`) records a token in
// huddle_ops in the same transaction: the retry looks for its token first and, finding it, returns
// what the first attempt stored instead of doing the work again. Writes that are idempotent by
// themselves (a send with its client-made id, an ack, an event with its uid) need no token.
//
// Fencing: a store opened by a worker host checks, in every write transaction, that its lease is
// still live (same epoch, not expired, by the database's clock). A host whose lease lapsed is
// refused (StoreFencedError) whatever it tries to write, and forever: its work was handed back.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { StoreError, StoreUnavailableError, StoreWriteError } from '../store-errors.js';
import { migrate } from './migrations.js';

/** The host a store writes for, the lease epoch it holds, and whether it knows it lost it; undefined: not fenced. */
export type Fence = () => { host: string; epoch: number; lost?: boolean } | undefined;

/** This host's lease lapsed: nothing it writes is accepted any more. */
export class StoreFencedError extends StoreError {
  constructor(readonly host: string) {
    super(`this process (host ${host}) lost its lease on the team: it did not renew it in time, so its teammates were handed back; nothing more is written from here`);
    this.name = 'StoreFencedError';
  }
}

/** A write found that another one changed what it read: the whole transaction runs again. */
export class RetryTransaction extends Error {
  constructor() {
    super('retry');
    this.name = 'RetryTransaction';
  }
}

export interface WriteOptions {
  /** The team whose ops table records the token, and whose host row fences the write. */
  team: string;
  fence?: Fence;
  /** Must not happen twice: recorded with a token so a retry after an unknown outcome returns the first result. */
  once?: boolean;
}

/** Connection-level failures: the server or the link went away; the statement may or may not have run. */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | undefined;
  if (!e) return false;
  const code = e.code ?? '';
  if (['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTCONN', 'EAI_AGAIN'].includes(code)) return true;
  // admin_shutdown, crash_shutdown, cannot_connect_now, and class 08 (connection exceptions)
  if (code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08')) return true;
  const message = e.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended|not queryable/i.test(message);
}

/** Transaction conflicts the server resolved by aborting us (or a lock we waited too long for): run it again. */
function isConflict(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return error instanceof RetryTransaction || code === '40001' || code === '40P01' || code === '55P03';
}

export interface DatabaseOptions {
  /** How long a write (or read) keeps retrying through dropped connections. */
  retryForMs: number;
  /** A statement with no answer for this long counts as a dropped connection. */
  queryTimeoutMs: number;
  /**
   * The server ends a session that sits this long inside a transaction: a host cut off mid-write
   * would otherwise hold its locks (the board's, its host row) until TCP gives up, hours later.
   */
  idleInTransactionMs: number;
  /** A statement waits this long for a lock, then the transaction runs again. */
  lockTimeoutMs: number;
}

const pools = new Map<string, { db: Database; users: number }>();

export class Database {
  readonly pool: pg.Pool;
  readonly connectionString: string;
  readonly #options: DatabaseOptions;
  #closed = false;

  private constructor(connectionString: string, options: DatabaseOptions) {
    this.connectionString = connectionString;
    this.#options = options;
    this.pool = new pg.Pool({
      connectionString,
      max: 12,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: Math.min(10_000, options.queryTimeoutMs),
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      query_timeout: options.queryTimeoutMs,
      idle_in_transaction_session_timeout: options.idleInTransactionMs,
      lock_timeout: options.lockTimeoutMs,
      application_name: 'huddle',
    });
    // A client whose connection drops must not crash the process, idle or checked out between two
    // statements: the next statement on it fails (a connection error), and the pool replaces it.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** The process's pool for this database (migrated on first use); release it with close(). */
  static async open(connectionString: string, options: DatabaseOptions): Promise<Database> {
    let entry = pools.get(connectionString);
    if (!entry) {
      const db = new Database(connectionString, options);
      entry = { db, users: 0 };
      pools.set(connectionString, entry);
      try {
        await db.#migrate();
      } catch (error) {
        pools.delete(connectionString);
        await db.pool.end().catch(() => undefined);
        throw error;
      }
    }
    entry.users += 1;
    return entry.db;
  }

  get options(): DatabaseOptions {
    return this.#options;
  }

  async close(): Promise<void> {
    const entry = pools.get(this.connectionString);
    if (!entry || entry.db !== this) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    pools.delete(this.connectionString);
    this.#closed = true;
    await this.pool.end().catch(() => undefined);
  }

  async #migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await migrate(client);
      client.release();
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  /** A read: one statement, retried through dropped connections. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#retrying(async () => {
      const client = await this.pool.connect();
      try {
        const result = await client.query<R>(sql, params);
        client.release();
        return result;
      } catch (error) {
        client.release(isConnectionError(error) ? (error as Error) : undefined);
        throw error;
      }
    });
  }

  /**
   * Runs `work` in one transaction (READ COMMITTED), fenced and retried as the header says.
   * Resolves with what `work` returned (for a `once` write, as stored: plain JSON).
   */
  async write<T>(options: WriteOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const token = options.once ? randomUUID() : undefined;
    let uncertain = false;
    return this.#retrying(async () => {
      // A host that knows its lease is gone does not even try (nor wait for a link that is down).
      const held = options.fence?.();
      if (held?.lost) throw new StoreFencedError(held.host);
      const client = await this.pool.connect();
      let began = false;
      try {
        await client.query('BEGIN');
        began = true;
        if (options.fence) await checkFence(client, options.team, options.fence);
        if (token && uncertain) {
          const done = await client.query<{ result: T }>('SELECT result FROM huddle_ops WHERE team = $1 AND token = $2', [options.team, token]);
          if (done.rows.length) {
            await client.query('COMMIT');
            client.release();
            return done.rows[0]!.result;
          }
        }
        const result = await work(client);
        if (token) await client.query('INSERT INTO huddle_ops (team, token, result) VALUES ($1, $2, $3)', [options.team, token, JSON.stringify(result ?? null)]);
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        if (isConnectionError(error)) {
          uncertain = true;
          client.release(error as Error);
        } else {
          if (began) await client.query('ROLLBACK').catch(() => undefined);
          client.release();
        }
        throw error;
      }
    });
  }

  /** Retries `attempt` through dropped connections and conflicts until the deadline. */
  async #retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.#options.retryForMs;
    let delay = 20;
    for (let tries = 0; ; tries++) {
      if (this.#closed) throw new StoreWriteError("the team's database connection was closed");
      try {
        return await attempt();
      } catch (error) {
        if (isConflict(error) && Date.now() < deadline) {
          await sleep(Math.random() * Math.min(50, 2 + tries * 2));
          continue;
        }
        if (!isConnectionError(error)) throw error;
        if (Date.now() >= deadline) throw unreachable(error, this.connectionString);
        await sleep(delay);
        delay = Math.min(1_000, delay * 2);
      }
    }
  }
}

/**
 * The host row, locked FOR KEY SHARE until the transaction ends: the sweep that marks a host lapsed
 * locks it FOR UPDATE, so it waits for this write to finish (and every later write sees it lapsed),
 * while the host's own renewals (a plain UPDATE of the lease) are never held up by its writes.
 */
async function checkFence(client: pg.ClientBase, team: string, fence: Fence): Promise<void> {
  const held = fence();
  if (!held) return;
  const { rows } = await client.query(
    `SELECT 1 FROM huddle_hosts WHERE team = $1 AND host = $2 AND epoch = $3 AND state = 'live' AND lease_until > now() FOR KEY SHARE`,
    [team, held.host, held.epoch],
  );
  if (rows.length === 0) throw new StoreFencedError(held.host);
}

function unreachable(error: unknown, connectionString: string): StoreError {
  const host = (() => {
    try {
      const url = new URL(connectionString);
      return `${url.hostname}${url.port ? `:${url.port}` : ''}`;
    } catch {
      return 'the database';
    }
  })();
  return new StoreWriteError(`cannot reach the team's database at ${host}: ${(error as Error).message}`);
}

/** A first connection that fails says why in one line (no server there, a wrong password, no such database). */
export function describeConnectError(error: unknown, display: string): StoreUnavailableError {
  const e = error as { code?: string; message?: string };
  const why =
    e.code === 'ECONNREFUSED'
      ? 'nothing listens there (is the server running?)'
      : e.code === '28P01' || e.code === '28000'
        ? 'the server refused the user or password'
        : e.code === '3D000'
          ? 'there is no such database (create it first)'
          : (e.message ?? String(error));
  return new StoreUnavailableError(`cannot open the team on ${display}: ${why}`);
}
