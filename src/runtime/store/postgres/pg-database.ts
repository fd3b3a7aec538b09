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
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { StoreError, StoreUnavailableError, StoreWriteError } from '../store-errors.js';
import { isCurrent, migrate } from './migrations.js';
import { toJsonb } from './pg-json.js';
import { Reachability } from './pg-reachability.js';

/** The host a store writes for, the lease epoch it holds, and whether it knows it lost it; undefined: not fenced. */
export type Fence = () => { host: string; epoch: number; lost?: boolean } | undefined;

/** This host's lease lapsed: nothing it writes is accepted any more. */
export class StoreFencedError extends StoreError {
  constructor(
    readonly host: string,
    why = 'it did not renew it in time',
  ) {
    super(`this process (host ${host}) lost its lease on the team: ${why}, so its teammates were handed back; nothing more is written from here`);
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

export interface WriteOptions<T = unknown> {
  /** The team whose ops table records the token, and whose host row fences the write. */
  team: string;
  fence?: Fence;
  /** Must not happen twice: recorded with a token so a retry after an unknown outcome returns the first result. */
  once?: boolean;
  /**
   * `once`, but the work records the result under its token itself (in its own statement, saving a
   * round trip) or leaves a mark `recover` finds: after an unknown outcome, `recover` says what the
   * first attempt did (undefined: it did not happen).
   */
  recover?: (client: pg.ClientBase, token: string) => Promise<T | undefined>;
  /** An advisory lock taken first, in the same statement as the fence check: [class, key]. */
  lock?: { shared: boolean; key: [number, string] };
  /** The work's first statement, sent with BEGIN, the fence check and the lock (its result is `tx.first`). */
  first?: { sql: string; params: unknown[] };
}

/**
 * node-postgres writes each message of a statement (parse, bind, describe, execute, sync) to the
 * socket on its own: four or five system calls per statement, which profiled as the largest part
 * of a board change's CPU time in this process. Corking the socket until the end of the tick sends
 * them in one. Relies on the client's `connection._send` and `connection.stream` (pg 8); without
 * them it changes nothing.
 */
export function coalesceWrites(client: pg.ClientBase): void {
  const connection = (client as unknown as { connection?: { _send?: (buffer: Buffer) => boolean; stream?: { cork?(): void; uncork?(): void } } }).connection;
  const stream = connection?.stream;
  const send = connection?._send;
  if (!connection || !send || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
  let corked = false;
  connection._send = (buffer: Buffer) => {
    if (!corked) {
      corked = true;
      stream.cork!();
      process.nextTick(() => {
        corked = false;
        stream.uncork!();
      });
    }
    return send.call(connection, buffer);
  };
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
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended|not queryable/i.test(
    message,
  );
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
  /** Connections in the pool (each process has one pool per database, plus the listener's and the lease's). */
  poolSize?: number;
  /**
   * What sits between this process and the server. A pooler refuses startup parameters it does not
   * know (PgBouncer): none are sent through one. One that hands out a server connection per
   * transaction (PgBouncer pool_mode=transaction) also gets no named prepared statements (the next
   * transaction may run on another server connection). The timeouts are set per transaction either way.
   */
  pooler?: Pooler;
}

/** What sits between huddle and the server (the `postgres.pooler` setting). */
export type Pooler = 'none' | 'session' | 'transaction';

/** How many connections a pool holds unless the settings say otherwise. */
export const DEFAULT_POOL_SIZE = 12;

const pools = new Map<string, { db: Database; opening: Promise<Database>; users: number }>();

export class Database {
  readonly pool: pg.Pool;
  readonly connectionString: string;
  readonly #options: DatabaseOptions;
  #closed = false;

  private constructor(connectionString: string, options: DatabaseOptions) {
    this.connectionString = connectionString;
    this.#options = options;
    this.reachability = Reachability.of(connectionString);
    this.pool = new pg.Pool({
      connectionString,
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: Math.min(10_000, options.queryTimeoutMs),
      // TCP keepalives: a connection left half open by a cut link fails within a minute or so
      // instead of the kernel's two hours (the server's side: askServerKeepalives).
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      query_timeout: options.queryTimeoutMs,
      // Where startup parameters pass, the timeouts hold for the whole session too (the single
      // statements outside a write transaction, such as the sweep's); a pooler refuses them, and
      // the writes set them per transaction either way (fenceAndLock). The URL's own `options`
      // (a search_path, say) pass through untouched.
      ...(options.pooler && options.pooler !== 'none'
        ? {}
        : { idle_in_transaction_session_timeout: options.idleInTransactionMs, lock_timeout: options.lockTimeoutMs }),
      application_name: 'huddle',
    });
    // A client whose connection drops must not crash the process, idle or checked out between two
    // statements: the next statement on it fails (a connection error), and the pool replaces it.
    // (Not a sign the server is away by itself: one connection may be ended on purpose. What is
    // tried next and fails says that.)
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => {
      client.on('error', () => undefined);
      coalesceWrites(client);
      if (options.pooler === 'transaction') unnameStatements(client);
      else if (!options.pooler || options.pooler === 'none') askServerKeepalives(client);
    });
  }

  /** Whether this process reaches the database now (the status a person reads while it does not). */
  readonly reachability: Reachability;

  /**
   * The process's pool for this database (migrated on first use); release it with close(). A
   * second caller while the first migrates waits for the same migration (the map holds the
   * promise); a failed one is forgotten, so the next caller tries afresh.
   */
  static async open(connectionString: string, options: DatabaseOptions): Promise<Database> {
    let entry = pools.get(connectionString);
    if (!entry) {
      const db = new Database(connectionString, options);
      const opening = db.#migrate().then(
        () => db,
        async (error: unknown) => {
          if (pools.get(connectionString)?.db === db) pools.delete(connectionString);
          // Closing: a connection that already failed has nothing more to tell us.
          await db.pool.end().catch(() => undefined);
          throw error;
        },
      );
      entry = { db, opening, users: 0 };
      pools.set(connectionString, entry);
    }
    entry.users += 1;
    return entry.opening;
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
    // Closing: a connection that already failed has nothing more to tell us.
    await this.pool.end().catch(() => undefined);
  }

  async #migrate(): Promise<void> {
    const pooled = await this.pool.connect();
    try {
      const current = await isCurrent(pooled);
      pooled.release();
      if (current) return;
    } catch (error) {
      pooled.release(error as Error);
      throw error;
    }
    // Migrating waits on the advisory lock while another process migrates: a connection of its own,
    // without the pool's client-side query timeout (the server-side ones are lifted in migrate()).
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: Math.min(10_000, this.#options.queryTimeoutMs),
      application_name: 'huddle-migrate',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await migrate(client);
    } finally {
      // Closing: a connection that already failed has nothing more to tell us.
      await client.end().catch(() => undefined);
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
  async write<T>(options: WriteOptions<T>, work: (client: pg.PoolClient, token: string, tx: Transaction) => Promise<T>): Promise<T> {
    const token = options.once || options.recover ? randomUUID() : undefined;
    let uncertain = false;
    return this.#retrying(async () => {
      // A host that knows its lease is gone does not even try (nor wait for a link that is down).
      const held = options.fence?.();
      if (held?.lost) throw new StoreFencedError(held.host);
      const client = await this.pool.connect();
      let began = false;
      try {
        // BEGIN travels with the fence check and the lock: one round trip.
        began = true;
        const first = await fenceAndLock(client, options, this.#options);
        if (token && uncertain) {
          const done = options.recover
            ? await options.recover(client, token)
            : (await client.query<{ result: T }>('SELECT result FROM huddle_ops WHERE team = $1 AND token = $2', [options.team, token])).rows[0]?.result;
          if (done !== undefined) {
            await client.query('COMMIT');
            client.release();
            return done;
          }
        }
        const last: Array<{ sql: string; params: unknown[] }> = [];
        const result = await work(client, token ?? '', { first, uncertain, finish: (sql, params) => void last.push({ sql, params }) });
        if (token && !options.recover)
          await client.query('INSERT INTO huddle_ops (team, token, result) VALUES ($1, $2, $3)', [options.team, token, toJsonb(result ?? null)]);
        // The last statements travel with COMMIT: one round trip (and so one wake-up of each side) fewer per write.
        const tail: string[] = [];
        for (const { sql, params } of last) tail.push(await executable(client, sql, params, this.#options.pooler));
        await client.query([...tail, 'COMMIT'].join('; '));
        client.release();
        return result;
      } catch (error) {
        if (isConnectionError(error)) {
          uncertain = true;
          client.release(error as Error);
        } else {
          // The transaction's own error is what the caller hears; a ROLLBACK that fails dies with its connection.
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
        const result = await attempt();
        this.reachability.up();
        return result;
      } catch (error) {
        if (isConflict(error) && Date.now() < deadline) {
          await sleep(Math.random() * Math.min(50, 2 + tries * 2));
          continue;
        }
        if (!isConnectionError(error)) throw error;
        this.reachability.down(error);
        if (Date.now() >= deadline) throw unreachable(error, this.connectionString);
        await sleep(delay);
        delay = Math.min(1_000, delay * 2);
      }
    }
  }
}

/** What a write's work may ask of its transaction. */
export interface Transaction {
  /** The result of `options.first`, run in this transaction before the work. */
  first: pg.QueryResult | undefined;
  /**
   * An earlier attempt of this write lost its connection with its outcome unknown: what it wrote
   * may have committed. False: every earlier attempt rolled back, so nothing it wrote is stored.
   */
  uncertain: boolean;
  /** A last statement of the work, run (prepared) just before COMMIT and sent with it; called again, it adds one. */
  finish(sql: string, params: unknown[]): void;
}

/** `sql` with $n replaced by the literals of `params`, for a multi-statement query. */
function inline(sql: string, params: unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n) - 1];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number' || typeof value === 'bigint') return String(value);
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    if (Array.isArray(value))
      return literal(`{${value.map((item) => (typeof item === 'number' ? String(item) : `"${String(item).replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`);
    return literal(typeof value === 'string' ? value : JSON.stringify(value));
  });
}

/**
 * The string literal node-postgres's escapeLiteral makes of `text` (quotes and backslashes
 * doubled, E'' when there is a backslash), made by one regular expression instead of a
 * character at a time: with a batch's JSON inlined, that loop cost a claimer more than any statement.
 */
export function literal(text: string): string {
  const escaped = text.replace(/['\\]/g, '$&$&');
  return text.includes('\\') ? ` E'${escaped}'` : `'${escaped}'`;
}

/**
 * BEGIN, the fence check, the advisory lock and the work's first statement (EXECUTE of a prepared
 * one): one round trip (a simple query of several statements, the values inlined). The host row stays locked FOR KEY SHARE until the
 * transaction ends: the sweep that marks a host lapsed locks it FOR UPDATE, so it waits for this
 * write to finish (and every later write sees the host lapsed), while the host's own renewals (a
 * plain UPDATE of the lease) are never held up by its writes.
 */
async function fenceAndLock(client: pg.ClientBase, options: WriteOptions<unknown>, database: DatabaseOptions): Promise<pg.QueryResult | undefined> {
  const held = options.fence?.();
  const lock = options.lock;
  const fn = lock?.shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  // The timeouts hold for this transaction whatever sits in between: a pooler passes no startup
  // parameters on (and a session-mode PgBouncer with ignore_startup_parameters drops them silently).
  const statements = ['BEGIN', ...transactionSettings(database)];
  if (held) {
    const select = lock ? `${fn}($4, hashtext($5))` : '1';
    // A lead's writes are fenced by its state alone: a lead whose lease lapsed in an outage still holds the
    // team until another lead takes it (and marks it gone); its first write back may come before its renewal.
    const sql = `SELECT ${select} FROM huddle_hosts WHERE team = $1 AND host = $2 AND epoch = $3 AND state = 'live' AND (lease_until > now() OR kind = 'lead') FOR KEY SHARE`;
    // Prepared too: planning it cost more server time than running it, twice per claimed and completed task.
    statements.push(await executable(client, sql, [options.team, held.host, held.epoch, ...(lock?.key ?? [])], database.pooler));
  } else if (lock) {
    statements.push(await executable(client, `SELECT ${fn}($1, hashtext($2))`, lock.key, database.pooler));
  }
  // The work's first statement comes in the same round trip (prepared beforehand, outside the transaction).
  if (options.first) statements.push(await executable(client, options.first.sql, options.first.params, database.pooler));
  const answer = await client.query(statements.join('; '));
  const results = (Array.isArray(answer) ? answer : [answer]) as pg.QueryResult[];
  const fenced = results.at(options.first ? -2 : -1);
  if (held && (fenced?.rows.length ?? 0) === 0) throw new StoreFencedError(held.host);
  return options.first ? results.at(-1) : undefined;
}

/**
 * `sql` as a statement that can travel in a simple query with others: EXECUTE of a statement
 * prepared once per connection (PREPARE, on first use: its plan is kept), or, behind a
 * transaction pooler (where the next transaction may find another server connection), the
 * statement with its values inlined.
 */
async function executable(client: pg.ClientBase, sql: string, params: unknown[], pooler: Pooler | undefined): Promise<string> {
  if (pooler === 'transaction') return inline(sql, params);
  let names = preparedOn.get(client);
  if (!names) preparedOn.set(client, (names = new Set()));
  let name = executableNames.get(sql);
  if (!name) executableNames.set(sql, (name = `huddle_x_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`));
  if (!names.has(name)) {
    // Prepared statements outlive a transaction that rolls back: made once, kept with the connection.
    await client.query(`PREPARE ${name} AS ${sql}`);
    names.add(name);
  }
  return params.length ? `EXECUTE ${name}(${params.map((value) => inline('$1', [value])).join(', ')})` : `EXECUTE ${name}`;
}

/** The statements PREPAREd on each connection (by name). */
const preparedOn = new WeakMap<pg.ClientBase, Set<string>>();

/** Each statement's name, hashed once per process (a write asks for two or three). */
const executableNames = new Map<string, string>();

/**
 * The server's side of a connection keeps TCP keepalives too (tcp_keepalives_* are per session):
 * the backend of a client that vanished behind a cut link ends within a minute and a half instead
 * of the kernel's two hours, and frees what it held. Sent ahead of the connection's first
 * statement (the client queues it first); not through a pooler, whose server connections are its own.
 */
export function askServerKeepalives(client: pg.ClientBase): void {
  // Keepalives are an improvement, not a requirement: a server that refuses them still works.
  void client.query('SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 6').catch(() => undefined);
}

/** The SET LOCAL statements every write transaction starts with. */
function transactionSettings(options: DatabaseOptions): string[] {
  return [
    `SET LOCAL lock_timeout = ${Math.floor(options.lockTimeoutMs)}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.floor(options.idleInTransactionMs)}`,
    // Prepared statements (only writes use them) keep one plan: every statement here is keyed by
    // team and id, and planning a board change cost more than running it.
    'SET LOCAL plan_cache_mode = force_generic_plan',
  ];
}

/**
 * Behind a transaction pooler a named statement prepared on one server connection is unknown on
 * the next: every statement of this client is sent unnamed (parsed each time, as any query).
 */
function unnameStatements(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
    if (config && typeof config === 'object' && 'name' in config) {
      const { name: _name, ...unnamed } = config as pg.QueryConfig;
      return query(unnamed, ...rest);
    }
    return query(config, ...rest);
  };
}

/**
 * A statement prepared once per connection (named after its text): the large statements of the
 * board and the event record cost more to plan than to run.
 */
export function prepared(sql: string, values: unknown[]): pg.QueryConfig {
  let name = preparedNames.get(sql);
  if (!name) preparedNames.set(sql, (name = `huddle_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`));
  return { name, text: sql, values };
}

const preparedNames = new Map<string, string>();

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

/** What Node's TLS says of a certificate no CA it was given vouches for. */
const TLS_UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
]);

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
          : TLS_UNTRUSTED.has(e.code ?? '')
            ? `the server's certificate is not trusted (${e.message}): name the CA that signed it with sslrootcert=FILE (sslmode=verify-full), or add uselibpqcompat=true to sslmode=require to encrypt without verifying`
            : e.code === 'ERR_TLS_CERT_ALTNAME_INVALID'
              ? `the server's certificate is for another name (${e.message}): connect by the name it was made for`
              : /does not support SSL/i.test(e.message ?? '')
                ? 'the server does not speak TLS: remove sslmode from the URL, or turn ssl on at the server'
                : /unsupported startup parameter/i.test(e.message ?? '')
                  ? `a connection pooler sits in between and refuses huddle's startup parameters (${e.message}): set postgres.pooler to "session" or "transaction" in the settings, as its pool mode is`
                  : e.code === 'ENOENT' && /ssl|\.pem|\.crt|\.key/i.test(e.message ?? '')
                    ? `a certificate file the URL names is not there (${e.message})`
                    : (e.message ?? String(error));
  return new StoreUnavailableError(`cannot open the team on ${display}: ${why}`);
}
