// What the stores of one team share within one process: the team's NOTIFY channel (one LISTEN
// for all of them) and the in-process fan-out of changes. A change made here is announced to
// this process's listeners at once, after its commit, and to other processes by a NOTIFY: sent in
// the same transaction (`publish`: delivered only if the change committed) for what must wake
// someone at once and rarely happens (a message, an approval), or after the commit, coalesced
// (`announce`) for the frequent ones (board changes, event batches, spend, roster). A NOTIFYing
// commit holds an instance-wide lock through its WAL flush, so one NOTIFY per write serialises
// every writer of every team on the server; `announce` sends at most one statement at a time per
// process, carrying every change made meanwhile. This process ignores its own NOTIFYs. Every
// payload is small: it says what changed, the receiver reads the rest.
//
// A payload is one change (`{k, o, …}`), or several (`{k: '*', o, c: [change, …]}`).
//
// NOTIFY is a hint, never the only wake-up: every `pollMs` the channel has every store re-read
// (as after a reconnect), so a notification that was lost (or never sent: no LISTEN behind a
// transaction pooler) costs that much latency, never a hang.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { channelOf, Listener } from './pg-listener.js';

/** Kinds of change: a message (m), the board (b), the roster (r), spend (s), events (e), approvals (a), hosts and placements (h); and a request to interrupt an agent (x). */
export type ChangeKind = 'm' | 'b' | 'r' | 's' | 'e' | 'a' | 'h' | 'x';

export interface Change {
  k: ChangeKind;
  [field: string]: unknown;
}

type Handler = (change: Change, remote: boolean) => void;

/** What `announce` sends its NOTIFYs through (the team's pool). */
export interface Notifier {
  query(sql: string, params: unknown[]): Promise<unknown>;
}

/**
 * A change waits this long for others to join its NOTIFY: a completion's board change and its
 * events go out as one, and a busy process sends at most one NOTIFY per this interval.
 */
const GATHER_MS = 5;
/** NOTIFY payloads must stay under 8000 bytes. */
const PAYLOAD_BYTES = 7000;
/** Board changes name at most this many tasks; more say "re-read" (no ids). */
const MAX_IDS = 200;

/** Tells this process's NOTIFYs from other processes'. */
export const PROCESS_ORIGIN = randomBytes(6).toString('hex');

const channels = new Map<string, TeamChannel>();

export interface ChannelOptions {
  /** How often the listener's connection is pinged. */
  pingMs: number;
  /** How often every store re-reads whatever a notification could have said. */
  pollMs: number;
  /** False: no LISTEN at all (a transaction pooler cannot), the polls alone wake the stores. */
  listen: boolean;
}

export class TeamChannel {
  readonly team: string;
  readonly channel: string;
  readonly #handlers = new Map<ChangeKind, Set<Handler>>();
  readonly #resyncs = new Set<() => void>();
  /** Per-process state of the team's stores (the roster's copy, say), by key. */
  readonly shared = new Map<string, unknown>();
  #users = 0;
  #unlisten: (() => void) | undefined;
  #listening: Promise<void> | undefined;
  #poll: NodeJS.Timeout | undefined;
  readonly #key: string;
  /** Changes waiting for `announce`'s next NOTIFY, coalesced by what they are about. */
  readonly #outbox = new Map<string, Change>();
  #sending: Promise<void> | undefined;

  private constructor(key: string, team: string) {
    this.#key = key;
    this.team = team;
    this.channel = channelOf(team);
  }

  /** The process's channel for `team` on this database, listening once the promise resolves. */
  static async acquire(connectionString: string, team: string, options: ChannelOptions): Promise<TeamChannel> {
    const key = `${connectionString}\0${team}`;
    let channel = channels.get(key);
    if (!channel) {
      channel = new TeamChannel(key, team);
      channels.set(key, channel);
      const created = channel;
      created.#listening = options.listen
        ? Listener.for(connectionString, options.pingMs)
            .subscribe(created.channel, {
              notify: (payload) => created.#receive(payload),
              resync: () => created.#resync(),
            })
            .then((unlisten) => {
              created.#unlisten = unlisten;
            })
        : Promise.resolve();
      created.#poll = setInterval(() => created.#resync(), Math.max(100, options.pollMs));
      // The open session holds the process (pg-store.ts), not this.
      created.#poll.unref();
    }
    channel.#users += 1;
    try {
      await channel.#listening;
    } catch (error) {
      channel.release();
      throw error;
    }
    return channel;
  }

  release(): void {
    this.#users -= 1;
    if (this.#users > 0) return;
    channels.delete(this.#key);
    clearInterval(this.#poll);
    this.#unlisten?.();
  }

  on(kind: ChangeKind, handler: Handler): () => void {
    let set = this.#handlers.get(kind);
    if (!set) this.#handlers.set(kind, (set = new Set()));
    set.add(handler);
    return () => set!.delete(handler);
  }

  onResync(listener: () => void): () => void {
    this.#resyncs.add(listener);
    return () => this.#resyncs.delete(listener);
  }

  /** Sends the change to other processes when the transaction of `client` commits. */
  async publish(client: pg.ClientBase, change: Change): Promise<void> {
    await client.query('SELECT pg_notify($1, $2)', [this.channel, JSON.stringify({ ...change, o: PROCESS_ORIGIN })]);
  }

  /**
   * Sends a committed change to other processes soon (within a few milliseconds, GATHER_MS), with
   * everything else announced meanwhile: one NOTIFY statement at a time per process. A process that dies
   * in between loses it, as a listener that reconnects loses what was sent meanwhile: nothing
   * depends on a NOTIFY alone (every reader also re-reads on resync).
   */
  announce(db: Notifier, change: Change): void {
    const key = outboxKey(change);
    const earlier = this.#outbox.get(key);
    this.#outbox.set(key, earlier ? merge(earlier, change) : change);
    this.#sending ??= this.#pump(db).finally(() => (this.#sending = undefined));
  }

  /** Resolves once every change announced so far is sent (or failed to be). */
  async drained(): Promise<void> {
    await this.#sending;
  }

  async #pump(db: Notifier): Promise<void> {
    while (this.#outbox.size) {
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      const changes = [...this.#outbox.values()];
      this.#outbox.clear();
      // One statement, one commit, however many payloads.
      await db.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [this.channel, pack(changes)]).catch(() => undefined);
    }
  }

  /** Announces a committed change to this process's listeners. */
  local(change: Change): void {
    this.#dispatch(change, false);
  }

  #receive(payload: string): void {
    let change: Change & { o?: string; c?: unknown };
    try {
      change = JSON.parse(payload) as Change & { o?: string };
    } catch {
      return;
    }
    if (!change || typeof change !== 'object' || change.o === PROCESS_ORIGIN) return;
    if ((change.k as string) !== '*') return this.#dispatch(change, true);
    if (!Array.isArray(change.c)) return;
    for (const one of change.c as Change[]) if (one && typeof one === 'object' && typeof one.k === 'string') this.#dispatch(one, true);
  }

  #dispatch(change: Change, remote: boolean): void {
    for (const handler of [...(this.#handlers.get(change.k) ?? [])]) {
      try {
        handler(change, remote);
      } catch {
        // A broken listener must not break the others.
      }
    }
  }

  #resync(): void {
    for (const listener of [...this.#resyncs]) {
      try {
        listener();
      } catch {
        // as above
      }
    }
  }
}

/** Changes about the same thing are sent once: one per kind, per host for events, per recipient for messages. */
function outboxKey(change: Change): string {
  if (change.k === 'e') return `e\0${String(change.h)}`;
  if (change.k === 'm') return `m\0${String(change.to)}`;
  if (change.k === 'b' || change.k === 's' || change.k === 'r') return change.k;
  return `${change.k}\0${JSON.stringify(change)}`;
}

function merge(earlier: Change, later: Change): Change {
  if (later.k === 'b') {
    // No ids means "re-read": it stays so; otherwise the union, up to a point.
    const a = earlier.ids as number[] | undefined;
    const b = later.ids as number[] | undefined;
    if (!a?.length || !b?.length) return { k: 'b', ids: [] };
    const ids = [...new Set([...a, ...b])];
    return { k: 'b', ids: ids.length > MAX_IDS ? [] : ids };
  }
  if (later.k === 's') return { k: 's', rows: mergeSpendRows([...((earlier.rows as unknown[][]) ?? []), ...((later.rows as unknown[][]) ?? [])]) };
  if (later.k === 'r') {
    const names = [...new Set([...((earlier.names as string[]) ?? []), ...((later.names as string[]) ?? [])])];
    return { k: 'r', names };
  }
  return later;
}

/** Spend rows ([agent, task, subject, cost, calls, input, output], absolute): the one with the most calls per agent and task is the newest. */
export function mergeSpendRows(rows: unknown[][]): unknown[][] {
  const byKey = new Map<string, unknown[]>();
  for (const row of rows) {
    const key = `${String(row[0])}\0${String(row[1])}`;
    const known = byKey.get(key);
    if (!known || Number(row[4]) > Number(known[4])) byKey.set(key, row);
  }
  return [...byKey.values()];
}

/** The payloads that carry `changes`: as few as fit under the size limit. */
function pack(changes: Change[]): string[] {
  const payloads: string[] = [];
  let batch: string[] = [];
  let size = 0;
  const flush = () => {
    if (batch.length === 1) payloads.push(`${batch[0]!.slice(0, -1)},"o":${JSON.stringify(PROCESS_ORIGIN)}}`);
    else if (batch.length) payloads.push(`{"k":"*","o":${JSON.stringify(PROCESS_ORIGIN)},"c":[${batch.join(',')}]}`);
    batch = [];
    size = 0;
  };
  for (const change of changes) {
    let text = JSON.stringify(change);
    // Too long to say in full: say only what changed (the receivers re-read it all).
    if (Buffer.byteLength(text) > PAYLOAD_BYTES / 2)
      text = JSON.stringify(change.k === 'b' ? { k: 'b', ids: [] } : { k: change.k, ...(typeof change.h === 'string' ? { h: change.h } : {}) });
    const bytes = Buffer.byteLength(text) + 1;
    if (size + bytes > PAYLOAD_BYTES) flush();
    batch.push(text);
    size += bytes;
  }
  flush();
  return payloads;
}
