// LISTEN/NOTIFY: one dedicated connection per database per process that listens on the channel
// of every team open here. It is pinged (a dropped link gives no error on an idle socket for
// minutes), and on any failure it reconnects, listens again and tells every team to re-read
// (`resync`): a NOTIFY sent while it was away is lost, so nothing may depend on it alone.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { askServerKeepalives } from './pg-database.js';
import { Reachability } from './pg-reachability.js';

export interface ChannelHandler {
  notify(payload: string): void;
  /** The connection was (re)established: re-read everything a lost notification could have said. */
  resync(): void;
}

/** The NOTIFY channel of a team: an identifier (63 bytes at most) made from its name. */
export function channelOf(team: string): string {
  return `huddle_${createHash('sha1').update(team).digest('hex').slice(0, 24)}`;
}

const listeners = new Map<string, Listener>();

export class Listener {
  readonly #connectionString: string;
  readonly #handlers = new Map<string, Set<ChannelHandler>>();
  readonly #pingMs: number;
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #pingTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #retryDelay = 50;

  private constructor(connectionString: string, pingMs: number) {
    this.#connectionString = connectionString;
    this.#pingMs = pingMs;
  }

  /** The process's listener for this database. */
  static for(connectionString: string, pingMs: number): Listener {
    let listener = listeners.get(connectionString);
    if (!listener || listener.#closed) {
      listener = new Listener(connectionString, pingMs);
      listeners.set(connectionString, listener);
    }
    return listener;
  }

  /**
   * Listens on `channel` for `handler` until the returned function is called; resolves once
   * listening. When the first connection fails, the handler is not kept (and a listener left with
   * none stops retrying).
   */
  async subscribe(channel: string, handler: ChannelHandler): Promise<() => void> {
    let set = this.#handlers.get(channel);
    const fresh = !set;
    if (!set) this.#handlers.set(channel, (set = new Set()));
    set.add(handler);
    const mine = set;
    let subscribed = true;
    const unsubscribe = () => {
      if (!subscribed) return;
      subscribed = false;
      mine.delete(handler);
      if (mine.size > 0 || this.#handlers.get(channel) !== mine) return;
      this.#handlers.delete(channel);
      if (this.#handlers.size === 0) this.#close();
      else void this.#client?.query(`UNLISTEN ${channel}`).catch(() => undefined);
    };
    try {
      await this.#ensure();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    if (fresh && this.#client) await this.#client.query(`LISTEN ${channel}`).catch((error: unknown) => this.#fail(undefined, error));
    return unsubscribe;
  }

  async #ensure(): Promise<void> {
    if (this.#client) return;
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    await this.#connecting;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      connectionTimeoutMillis: Math.max(2_000, this.#pingMs * 2),
      application_name: 'huddle-listen',
    });
    client.on('error', (error) => this.#fail(client, error));
    client.on('end', () => this.#fail(client, new Error('the connection ended')));
    client.on('notification', (message) => {
      const set = this.#handlers.get(message.channel);
      if (!set || message.payload === undefined) return;
      for (const handler of [...set]) handler.notify(message.payload);
    });
    try {
      await client.connect();
      askServerKeepalives(client);
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      Reachability.of(this.#connectionString).down(error);
      this.#scheduleRetry();
      throw error;
    }
    Reachability.of(this.#connectionString).up();
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#retryDelay = 50;
    this.#schedulePing();
  }

  #schedulePing(): void {
    clearTimeout(this.#pingTimer);
    this.#pingTimer = setTimeout(() => void this.#ping(), this.#pingMs);
    this.#pingTimer.unref();
  }

  async #ping(): Promise<void> {
    const client = this.#client;
    if (!client || this.#closed) return;
    const answered = client.query('SELECT 1').then(
      () => true,
      () => false,
    );
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), Math.max(1_000, this.#pingMs)).unref());
    if (await Promise.race([answered, timeout])) this.#schedulePing();
    else this.#fail(client);
  }

  /** The connection is gone (or must be dropped): reconnect, listen again, and have everyone re-read. */
  #fail(client?: pg.Client, error: unknown = new Error('the listening connection stopped answering')): void {
    if (client && client !== this.#client) return;
    if (!this.#closed) Reachability.of(this.#connectionString).down(error);
    const old = this.#client;
    this.#client = undefined;
    clearTimeout(this.#pingTimer);
    if (old) {
      old.removeAllListeners('end');
      old.removeAllListeners('notification');
      // A dead socket may never finish ending: do not wait for it.
      void old.end().catch(() => undefined);
      (old as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
    if (!this.#closed) this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#retryTimer || this.#closed) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#ensure().then(
        () => this.#resyncAll(),
        () => undefined,
      );
    }, this.#retryDelay);
    // Retrying through an outage must not keep a process that is otherwise done from exiting (an
    // open team session holds the process for as long as it is open: pg-store.ts).
    this.#retryTimer.unref();
    this.#retryDelay = Math.min(1_000, this.#retryDelay * 2);
  }

  #resyncAll(): void {
    for (const set of this.#handlers.values()) for (const handler of [...set]) handler.resync();
  }

  #close(): void {
    this.#closed = true;
    listeners.delete(this.#connectionString);
    clearTimeout(this.#pingTimer);
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    if (client) {
      client.removeAllListeners('end');
      void client.end().catch(() => undefined);
    }
  }
}
