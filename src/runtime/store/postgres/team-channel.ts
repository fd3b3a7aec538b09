// What the stores of one team share within one process: the team's NOTIFY channel (one LISTEN
// for all of them) and the in-process fan-out of changes. A change made here is announced to
// this process's listeners at once, after its commit, and to other processes by a NOTIFY sent in
// the same transaction (so it is delivered only if the change committed); this process ignores
// its own NOTIFYs. Every payload is small: it says what changed, the receiver reads the rest.
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

  /** Announces a committed change to this process's listeners. */
  local(change: Change): void {
    this.#dispatch(change, false);
  }

  #receive(payload: string): void {
    let change: Change & { o?: string };
    try {
      change = JSON.parse(payload) as Change & { o?: string };
    } catch {
      return;
    }
    if (change.o === PROCESS_ORIGIN) return;
    this.#dispatch(change, true);
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
