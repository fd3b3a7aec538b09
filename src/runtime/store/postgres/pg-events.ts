// Every event of every agent of the team, kept in PostgreSQL (docs/contract.md#events), from every host:
// resume rebuilds transcripts from it, and the console of the lead shows the agents that run
// elsewhere from it. Events of this process's hub are written in batches (secrets scrubbed), each
// with a unique id so that a batch retried after a dropped connection is not stored twice. Each
// host's batches are written one after another, so its sequence numbers grow in commit order:
// a follower reads "this host's events after the last one I saw" and misses none.
//
// A streamed response is thousands of text_delta events: the deltas an agent streams between two
// flushes are stored as one (their texts joined, the first one's time), so the record holds one
// row per agent per flush for them, not one per token. Every reader (resume's transcripts, the
// mirrored console, the run record) joins deltas anyway, so it reads the same text.
//
// A board change (a completion, say) writes its task events in its own transaction, with every
// event of this host buffered before them (`around`): a host cut off right after the change
// leaves a record that still says so. Those events are not stored again when they are emitted.
//
// Mirroring (the lead's process): events other hosts wrote are emitted on this process's hub with
// their `host`, so the console, `--json` and the run record see remote agents as if they ran
// here. Mirrored events are never written back (they carry `host`) nor counted as spend.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../fs/atomic-file.js';
import type pg from 'pg';
import type { EventHub, EventType, HuddleEvent } from '../../events/events.js';
import { scrub } from '../../secrets.js';
import type { EventStore, LoggedEvent } from '../event-store.js';
import { StoreError, StoreWriteError } from '../store-errors.js';
import { type PgContext, write } from './pg-context.js';
import { fromJsonText } from './pg-json.js';
import { PROCESS_ORIGIN } from './team-channel.js';
import { PRIVATE_DIR_MODE } from '../../fs/private-modes.js';

export interface PgEventStoreOptions {
  secrets: string[];
  /** Where run records are written for the person (the workspace's `.team/logs/`). */
  logsDir: string;
  /** Emit other hosts' events on this hub. */
  mirror: boolean;
  onFailure?: (error: StoreError) => void;
}

/** What tells a task event written in a change's transaction from the one emitted after it. */
function inTransactionKey(event: HuddleEvent): string {
  const { action, task } = event as { action?: unknown; task?: { id?: unknown; updated_at?: unknown } };
  return `${event.agent}\0${String(action)}\0${String(task?.id)}\0${String(task?.updated_at)}`;
}

/** Events with `host` came from another process: not ours to record. */
export function isMirrored(event: HuddleEvent): boolean {
  return (event as { host?: unknown }).host !== undefined;
}

interface Buffered {
  uid: string;
  agent: string;
  /** The scrubbed JSON; for a text_delta, made when it is flushed (a secret split across deltas is scrubbed too). */
  body?: string;
  delta?: HuddleEvent & { text: string };
}

const BATCH = 500;
/** Events are written in batches at most this far apart (a streamed response is a few writes, not thousands). */
const FLUSH_MS = 50;

export class PgEventStore implements EventStore {
  readonly #ctx: PgContext;
  readonly #options: PgEventStoreOptions;
  readonly #secrets: string[];
  readonly #buffer: Buffered[] = [];
  /** Per agent, its text_delta still in the buffer that its next deltas join (until it is flushed or another event of the agent comes). */
  readonly #openDelta = new Map<string, Buffered>();
  readonly #unsubscribe: () => void;
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  /** The write that failed: nothing more is recorded, and settled() says so (nothing is acked unrecorded). */
  #failure: StoreError | undefined;
  #closed = false;
  /** Events stored inside another transaction (`around`), by what identifies them, not to be stored again when emitted. */
  readonly #storedAlready = new Set<string>();
  /** Mirroring: the last sequence number seen per host, and where mirroring started. */
  readonly #seen = new Map<string, number>();
  #baseline = 0;
  #mirrorOff: (() => void) | undefined;
  #following = new Map<string, Promise<void>>();

  private constructor(ctx: PgContext, options: PgEventStoreOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#secrets = options.secrets.filter((s) => s.length >= 8);
    this.#unsubscribe = ctx.hub.subscribe((event) => this.#record(event));
  }

  static async open(ctx: PgContext, options: PgEventStoreOptions): Promise<PgEventStore> {
    const store = new PgEventStore(ctx, options);
    if (options.mirror) await store.#startMirror();
    return store;
  }

  // ---- recording ------------------------------------------------------------------------

  #record(event: HuddleEvent): void {
    if (this.#failure || this.#closed || isMirrored(event)) return;
    if (event.type === 'task' && this.#storedAlready.delete(inTransactionKey(event))) return;
    if (event.type === 'text_delta' && typeof event.text === 'string') {
      const open = this.#openDelta.get(event.agent);
      if (open?.delta) open.delta.text += event.text;
      else {
        const entry: Buffered = { uid: randomUUID(), agent: event.agent, delta: { ...event } };
        this.#openDelta.set(event.agent, entry);
        this.#buffer.push(entry);
      }
    } else {
      this.#openDelta.delete(event.agent);
      this.#buffer.push({ uid: randomUUID(), agent: event.agent, body: this.#scrubbed(event) });
    }
    this.#timer ??= setTimeout(() => this.#flushNow(), FLUSH_MS);
  }

  /** See InTransactionRecord (pg-context.ts). */
  around<T>(
    work: (write: (client: pg.ClientBase, events: Array<{ agent: string; type: string; [field: string]: unknown }>) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    let taken: Buffered[] | undefined;
    let buffered = 0;
    let keys: string[] = [];
    const writeIn = async (client: pg.ClientBase, events: Array<{ agent: string; type: string; [field: string]: unknown }>): Promise<void> => {
      if (this.#failure || this.#closed) return;
      // A retried transaction writes the same rows again (same uids: stored once).
      if (!taken) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        taken = this.#buffer.splice(0);
        buffered = taken.length;
        this.#openDelta.clear();
        for (const entry of taken) entry.body ??= this.#scrubbed(entry.delta!);
        const ts = new Date().toISOString();
        for (const event of events) {
          const full = { ts, ...event } as unknown as HuddleEvent;
          taken.push({ uid: randomUUID(), agent: event.agent, body: this.#scrubbed(full) });
          if (full.type === 'task') keys.push(inTransactionKey(full));
        }
      }
      if (!taken.length) return;
      const { team, host } = this.#ctx;
      await client.query(
        `INSERT INTO huddle_events (team, host, uid, agent, body)
         SELECT $1, $2, uid, agent, body::jsonb FROM unnest($3::text[], $4::text[], $5::text[]) AS e(uid, agent, body)
         ON CONFLICT (uid) DO NOTHING`,
        [team, host, taken.map((e) => e.uid), taken.map((e) => e.agent), taken.map((e) => e.body!)],
      );
    };
    const run = this.#flushing.then(async () => {
      try {
        const value = await work(writeIn);
        for (const key of keys) this.#storedAlready.add(key);
        if (taken?.length) this.#ctx.channel.announce(this.#ctx.db, { k: 'e', h: this.#ctx.host });
        return value;
      } catch (error) {
        // Not written: what was taken from the buffer goes back (the change's own events were never emitted).
        if (taken) this.#buffer.unshift(...taken.slice(0, buffered));
        keys = [];
        if (this.#buffer.length) this.#timer ??= setTimeout(() => this.#flushNow(), FLUSH_MS);
        throw error;
      }
    });
    this.#flushing = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  #scrubbed(event: HuddleEvent): string {
    return fromJsonText(scrub(JSON.stringify(event), this.#secrets));
  }

  #flushNow(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing.then(() => this.#flush());
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    while (this.#buffer.length && !this.#failure) {
      const batch = this.#buffer.splice(0, BATCH);
      for (const entry of batch) {
        // Sealed: later deltas start a new row (this one is on its way).
        if (this.#openDelta.get(entry.agent) === entry) this.#openDelta.delete(entry.agent);
        entry.body ??= this.#scrubbed(entry.delta!);
      }
      const { team, host, channel } = this.#ctx;
      try {
        await write(this.#ctx, async (_client, _token, tx) => {
          tx.finish(
            `INSERT INTO huddle_events (team, host, uid, agent, body)
             SELECT $1, $2, uid, agent, body::jsonb FROM unnest($3::text[], $4::text[], $5::text[]) AS e(uid, agent, body)
             ON CONFLICT (uid) DO NOTHING`,
            [team, host, batch.map((e) => e.uid), batch.map((e) => e.agent), batch.map((e) => e.body!)],
          );
        });
        // Not a NOTIFY per batch: one, after the commit, for every batch written meanwhile (team-channel.ts).
        channel.announce(this.#ctx.db, { k: 'e', h: host });
      } catch (error) {
        this.#failure = error instanceof StoreError ? error : new StoreWriteError(`cannot record events in the team's database: ${(error as Error).message}`);
        this.#options.onFailure?.(this.#failure);
      }
    }
  }

  /**
   * Resolves once every event emitted so far is stored. The bus waits for this before it acks a
   * delivery: the delivery is on record before the inbox moves past it (exactly once, docs/contract.md#messages).
   * After a failed write it rejects with that failure: a delivery that is not on record must not
   * be acked (the messages stay unread; --resume delivers them).
   */
  async settled(): Promise<void> {
    await (this.#timer ? this.#flushNow() : this.#flushing);
    if (this.#failure) throw this.#failure;
  }

  // ---- reading --------------------------------------------------------------------------

  async agents(): Promise<string[]> {
    await this.settled();
    const { rows } = await this.#ctx.db.query<{ agent: string }>('SELECT DISTINCT agent FROM huddle_events WHERE team = $1', [this.#ctx.team]);
    return rows.map((row) => row.agent);
  }

  async read(agent: string): Promise<LoggedEvent[]> {
    await this.settled();
    const { rows } = await this.#ctx.db.query<{ body: LoggedEvent }>('SELECT body FROM huddle_events WHERE team = $1 AND agent = $2 ORDER BY seq', [
      this.#ctx.team,
      agent,
    ]);
    return rows.map((row) => row.body).filter((event) => event && typeof event.type === 'string');
  }

  async saveTranscript(agent: string, record: Record<string, unknown>): Promise<string> {
    const body = fromJsonText(scrub(JSON.stringify(record), this.#secrets));
    const { rows } = await write(this.#ctx, (client) =>
      client.query<{ id: string }>('INSERT INTO huddle_transcripts (team, agent, body) VALUES ($1, $2, $3::jsonb) RETURNING id', [this.#ctx.team, agent, body]),
    );
    return `postgres:transcript/${agent}/${rows[0]!.id}`;
  }

  async readTranscript(location: string): Promise<Record<string, unknown> | undefined> {
    const match = /^postgres:transcript\/([a-z][a-z0-9_-]{0,31})\/([0-9]{1,18})$/.exec(location);
    if (!match) return undefined;
    const { rows } = await this.#ctx.db.query<{ body: Record<string, unknown> }>(
      'SELECT body FROM huddle_transcripts WHERE team = $1 AND agent = $2 AND id = $3',
      [this.#ctx.team, match[1], match[2]],
    );
    return rows[0]?.body;
  }

  async saveRunRecord(record: Record<string, unknown>): Promise<string> {
    const body = fromJsonText(scrub(JSON.stringify(record), this.#secrets));
    await write(this.#ctx, (client) => client.query('INSERT INTO huddle_run_records (team, body) VALUES ($1, $2::jsonb)', [this.#ctx.team, body]));
    // Also beside the workspace it ran in, where the person looks (`run record: …`).
    mkdirSync(this.#options.logsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const file = path.join(this.#options.logsDir, `run-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeJsonAtomic(file, JSON.parse(body));
    return file;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#unsubscribe();
    this.#mirrorOff?.();
  }

  /** Stops recording once what was emitted so far is stored. */
  async closeAndFlush(): Promise<void> {
    this.#unsubscribe();
    // A failed write was reported when it happened (onFailure); closing goes on regardless.
    await this.settled().catch(() => undefined);
    this.close();
  }

  // ---- mirroring ------------------------------------------------------------------------

  async #startMirror(): Promise<void> {
    const { rows } = await this.#ctx.db.query<{ seq: string | null }>('SELECT max(seq) AS seq FROM huddle_events WHERE team = $1', [this.#ctx.team]);
    this.#baseline = Number(rows[0]?.seq ?? 0);
    const offChange = this.#ctx.channel.on('e', (change, remote) => {
      if (remote && typeof change.h === 'string' && change.h !== this.#ctx.host) this.#follow(change.h);
    });
    const offResync = this.#ctx.channel.onResync(() => void this.#catchUp());
    this.#mirrorOff = () => {
      offChange();
      offResync();
    };
  }

  /** After a reconnect: every host that wrote since mirroring began. */
  async #catchUp(): Promise<void> {
    const { rows } = await this.#ctx.db
      .query<{ host: string }>('SELECT DISTINCT host FROM huddle_events WHERE team = $1 AND seq > $2 AND host <> $3', [
        this.#ctx.team,
        this.#baseline,
        this.#ctx.host,
      ])
      .catch(() => ({ rows: [] as Array<{ host: string }> }));
    for (const { host } of rows) this.#follow(host);
  }

  /** Reads `host`'s events after the last one seen and emits them; one reader per host at a time. */
  #follow(host: string): void {
    const previous = this.#following.get(host) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (this.#closed) return;
      for (;;) {
        const after = this.#seen.get(host) ?? this.#baseline;
        const { rows } = await this.#ctx.db.query<{ seq: string; body: HuddleEvent }>(
          'SELECT seq, body FROM huddle_events WHERE team = $1 AND host = $2 AND seq > $3 ORDER BY seq LIMIT 2000',
          [this.#ctx.team, host, after],
        );
        for (const row of rows) {
          this.#seen.set(host, Number(row.seq));
          if (this.#closed) return;
          const { agent, type, ...fields } = row.body;
          this.#ctx.hub.emit(agent, type as EventType, { ...fields, host } as never);
        }
        if (rows.length < 2000) return;
      }
    });
    const tail = next.catch(() => undefined);
    this.#following.set(host, tail);
  }
}
