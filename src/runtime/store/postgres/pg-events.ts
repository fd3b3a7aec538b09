// Every event of every agent of the team, kept in PostgreSQL (docs/contract.md#events), from every host:
// resume rebuilds transcripts from it, and the console of the lead shows the agents that run
// elsewhere from it. Events of this process's hub are written in batches (secrets scrubbed), each
// with a unique id so that a batch retried after a dropped connection is not stored twice. One
// agent's events are written by one transaction at a time, in the order they were emitted (its
// sequence numbers grow with them); different agents' writes commit concurrently, so a host's rows
// do not commit in sequence order. Each row says which transaction wrote it (`xid`): a follower
// reads a host's rows by (xid, seq), only those of transactions older than any still running
// (below pg_snapshot_xmin), and so misses none.
//
// A streamed response is thousands of text_delta events: the deltas an agent streams between two
// flushes are stored as one (their texts joined, the first one's time), so the record holds one
// row per agent per flush for them, not one per token. Every reader (resume's transcripts, the
// mirrored console, the run record) joins deltas anyway, so it reads the same text.
//
// A board change (a completion, say) writes its task events in its own transaction, with every
// event its agent emitted before them (`around`): a host cut off right after the change leaves a
// record that still says so. Those events are not stored again when they are emitted. Changes by
// different agents of one process commit concurrently (the server can then flush them together).
//
// Mirroring (the lead's process): events other hosts wrote are emitted on this process's hub with
// their `host`, so the console, `--json` and the run record see remote agents as if they ran
// here. Mirrored events are never written back (they carry `host`) nor counted as spend.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../fs/atomic-file.js';
import type { EventType, HuddleEvent } from '../../events/events.js';
import { scrub } from '../../secrets.js';
import type { EventStore, LoggedEvent } from '../event-store.js';
import { StoreError, StoreWriteError } from '../store-errors.js';
import { type PgContext, write } from './pg-context.js';
import type { Transaction } from './pg-database.js';
import { fromJsonText } from './pg-json.js';
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

// The events as one JSON array (in order): inlined into a write's last message (pg-database.ts), an
// array of texts escaped each JSON quote twice over, and the server parsed it twice.
const INSERT_NEW_EVENTS = `INSERT INTO huddle_events (team, host, uid, agent, body)
  SELECT $1, $2, e.uid, e.agent, e.body FROM jsonb_to_recordset($3::jsonb) AS e(uid text, agent text, body jsonb)`;
// An event is stored once however often it is written (its uid): for rows an earlier attempt may
// have stored. The speculative insertion ON CONFLICT needs costs the server about a quarter more
// per row, and nearly every write is a first one, so it is used only when it can matter.
const INSERT_EVENTS = `${INSERT_NEW_EVENTS}
  ON CONFLICT (uid) DO NOTHING`;
const insertEvents = (tx: Transaction, mayBeStored: boolean): string => (mayBeStored || tx.uncertain ? INSERT_EVENTS : INSERT_NEW_EVENTS);
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
  /** The flushes, one after another. */
  #flushing: Promise<void> = Promise.resolve();
  /** Per agent, the write of its events in flight: its next write starts when that one has ended. */
  readonly #writing = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  /** The write that failed: nothing more is recorded, and settled() says so (nothing is acked unrecorded). */
  #failure: StoreError | undefined;
  #closed = false;
  /** Events stored inside another transaction (`around`), by what identifies them, not to be stored again when emitted. */
  readonly #storedAlready = new Set<string>();
  /** Mirroring: the last row seen per host (its transaction and sequence number), and where mirroring started. */
  readonly #seen = new Map<string, { xid: string; seq: number }>();
  #baseline = 0;
  #mirrorOff: (() => void) | undefined;
  #following = new Map<string, Promise<void>>();
  /** Hosts with a read queued that has not started: a NOTIFY meanwhile needs no second one. */
  readonly #pending = new Set<string>();
  /** Hosts whose rows a running transaction holds back: how many reads in a row found them so, and the next read's timer. */
  readonly #heldBack = new Map<string, { tries: number; timer: NodeJS.Timeout | undefined }>();

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
    this.#timer ??= setTimeout(() => void this.#flushNow(), FLUSH_MS);
  }

  /** See InTransactionRecord (pg-context.ts). */
  around<T>(
    agent: string | string[],
    work: (write: (tx: Transaction, events: Array<{ agent: string; type: string; [field: string]: unknown }>) => void) => Promise<T>,
  ): Promise<T> {
    const agents = typeof agent === 'string' ? [agent] : agent;
    // The agents' events emitted so far are this change's to write (taken now: their later ones come after it).
    const mine = this.#failure || this.#closed ? [] : this.#take((entry) => agents.includes(entry.agent));
    // What the latest attempt of the transaction wrote. Each attempt writes its own rows: a retried one may
    // have made other changes (another updated_at, or none), and its rows, not an earlier attempt's rolled
    // back ones, are those that commit. The agent's earlier events keep their uids (stored once however often).
    let written: { entries: Buffered[]; keys: string[] } | undefined;
    const writeIn = (tx: Transaction, events: Array<{ agent: string; type: string; [field: string]: unknown }>): void => {
      written = undefined;
      if (this.#failure || this.#closed) return;
      const entries = [...mine];
      const keys: string[] = [];
      const ts = new Date().toISOString();
      for (const event of events) {
        const full = { ts, ...event } as unknown as HuddleEvent;
        entries.push({ uid: randomUUID(), agent: event.agent, body: this.#scrubbed(full) });
        if (full.type === 'task') keys.push(inTransactionKey(full));
      }
      if (entries.length) tx.finish(insertEvents(tx, false), this.#insertParams(entries));
      written = { entries, keys };
    };
    return this.#inTurn(agents, async () => {
      try {
        const value = await work(writeIn);
        for (const key of written?.keys ?? []) this.#storedAlready.add(key);
        if (written?.entries.length) this.#ctx.channel.announce(this.#ctx.db, { k: 'e', h: this.#ctx.host });
        // A change that wrote nothing (so no rows of its own) still owes the agent's events it took.
        if (!written && mine.length && !this.#closed) await this.#insert(mine, false);
        return value;
      } catch (error) {
        // Not written with the change (it was refused, or failed): the agent's events go on record
        // by themselves, before its next write (the change's own events were never emitted).
        // An attempt whose outcome stayed unknown may have stored them: the insert skips those.
        if (mine.length && !this.#closed) await this.#insert(mine, true);
        throw error;
      }
    });
  }

  /** Takes the buffered events `wanted` selects, in order (a delta taken is sealed: later ones start a new row). */
  #take(wanted: (entry: Buffered) => boolean, limit = Infinity): Buffered[] {
    const taken: Buffered[] = [];
    const kept: Buffered[] = [];
    for (const entry of this.#buffer) (taken.length < limit && wanted(entry) ? taken : kept).push(entry);
    this.#buffer.splice(0, this.#buffer.length, ...kept);
    for (const entry of taken) {
      if (this.#openDelta.get(entry.agent) === entry) this.#openDelta.delete(entry.agent);
      entry.body ??= this.#scrubbed(entry.delta!);
    }
    return taken;
  }

  /**
   * Runs `write` once every write of `agents`' events in flight has ended, and holds theirs until
   * it ends: one agent's events are stored in the order they were emitted.
   */
  #inTurn<T>(agents: string[], write: () => Promise<T>): Promise<T> {
    agents = [...new Set(agents)];
    const before = agents.flatMap((agent) => this.#writing.get(agent) ?? []);
    const run = Promise.all(before).then(write);
    // Only the order matters to the next write: it starts after this one, however it ended.
    const ended = run.then(
      () => undefined,
      () => undefined,
    );
    for (const agent of agents) this.#writing.set(agent, ended);
    void ended.then(() => {
      for (const agent of agents) if (this.#writing.get(agent) === ended) this.#writing.delete(agent);
      // Events an agent emitted while its write was in flight wait for the next flush.
      if (this.#buffer.length && !this.#closed) this.#timer ??= setTimeout(() => void this.#flushNow(), FLUSH_MS);
    });
    return run;
  }

  #insertParams(entries: Buffered[]): unknown[] {
    const { team, host } = this.#ctx;
    // Each body is already JSON (scrubbed, jsonb-safe: #scrubbed).
    const rows = entries.map((e) => `{"uid":${JSON.stringify(e.uid)},"agent":${JSON.stringify(e.agent)},"body":${e.body!}}`);
    return [team, host, `[${rows.join(',')}]`];
  }

  /**
   * Stores `entries` in a transaction of their own (`mayBeStored`: some may be stored already); a
   * failure stops the record (settled() says so).
   */
  async #insert(entries: Buffered[], mayBeStored: boolean): Promise<void> {
    if (this.#failure) return;
    try {
      await write(this.#ctx, async (_client, _token, tx) => {
        tx.finish(insertEvents(tx, mayBeStored), this.#insertParams(entries));
      });
      // Not a NOTIFY per batch: one, after the commit, for every batch written meanwhile (team-channel.ts).
      this.#ctx.channel.announce(this.#ctx.db, { k: 'e', h: this.#ctx.host });
    } catch (error) {
      this.#failure = error instanceof StoreError ? error : new StoreWriteError(`cannot record events in the team's database: ${(error as Error).message}`);
      this.#options.onFailure?.(this.#failure);
    }
  }

  #scrubbed(event: HuddleEvent): string {
    return fromJsonText(scrub(JSON.stringify(event), this.#secrets));
  }

  /**
   * Writes the buffer. The timer's flush leaves the events of an agent whose write is in flight
   * for the next one (it does not wait); `all` (settled) writes every one, each after its agent's write.
   */
  #flushNow(all = false): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing.then(() => this.#flush(all));
    return this.#flushing;
  }

  async #flush(all: boolean): Promise<void> {
    while (this.#buffer.length && !this.#failure) {
      const batch = this.#take((entry) => all || !this.#writing.has(entry.agent), BATCH);
      if (!batch.length) return;
      await this.#inTurn(
        batch.map((entry) => entry.agent),
        () => this.#insert(batch, false),
      );
    }
  }

  /**
   * Resolves once every event emitted so far is stored. The bus waits for this before it acks a
   * delivery: the delivery is on record before the inbox moves past it (exactly once, docs/contract.md#messages).
   * After a failed write it rejects with that failure: a delivery that is not on record must not
   * be acked (the messages stay unread; --resume delivers them).
   */
  async settled(): Promise<void> {
    await this.#flushNow(true);
    await Promise.all(this.#writing.values());
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

  /**
   * Reads `host`'s events after the last one seen and emits them; one reader per host at a time.
   * Rows are read in the order of the transactions that wrote them, and only those of transactions
   * older than every one still running: a row that commits later always comes after the last one
   * read. A row held back so (an older transaction still running, anywhere on the server) is read
   * again shortly, without waiting for the next NOTIFY.
   */
  #follow(host: string): void {
    if (this.#following.has(host) && this.#pending.has(host)) return; // one more read is already queued
    this.#pending.add(host);
    const previous = this.#following.get(host) ?? Promise.resolve();
    const next = previous.then(async () => {
      this.#pending.delete(host);
      if (this.#closed) return;
      for (;;) {
        const after = this.#seen.get(host) ?? { xid: '0', seq: 0 };
        const { rows } = await this.#ctx.db.query<{ seq: string; xid: string; done: boolean; body: HuddleEvent }>(FOLLOW, [
          this.#ctx.team,
          host,
          this.#baseline,
          after.xid,
          after.seq,
        ]);
        for (const row of rows) {
          if (!row.done) {
            this.#followAgain(host);
            return;
          }
          this.#seen.set(host, { xid: row.xid, seq: Number(row.seq) });
          if (this.#closed) return;
          const { agent, type, ...fields } = row.body;
          this.#ctx.hub.emit(agent, type as EventType, { ...fields, host } as never);
        }
        if (rows.length < FOLLOW_ROWS) {
          this.#heldBack.delete(host);
          return;
        }
      }
    });
    // The queue only orders the work: each caller hears its own failure through the promise it holds.
    const tail = next.catch(() => undefined);
    this.#following.set(host, tail);
  }

  /** Rows held back by a transaction still running: read again soon (sooner the first times). */
  #followAgain(host: string): void {
    const held = this.#heldBack.get(host) ?? { tries: 0, timer: undefined };
    if (held.timer) return;
    held.tries += 1;
    held.timer = setTimeout(
      () => {
        held.timer = undefined;
        this.#follow(host);
      },
      Math.min(500, 2 ** Math.min(held.tries, 9)),
    );
    held.timer.unref();
    this.#heldBack.set(host, held);
  }
}

const FOLLOW_ROWS = 2000;

/**
 * A host's rows after ($4, $5) in (transaction, sequence) order, each saying whether its
 * transaction is older than every one still running (`done`): those rows are final, and every row
 * still to commit comes after them.
 */
const FOLLOW = `WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
  SELECT e.seq, e.xid::text AS xid, e.xid < s.xmin AS done, e.body
    FROM huddle_events e, s
   WHERE e.team = $1 AND e.host = $2 AND e.seq > $3 AND (e.xid, e.seq) > ($4::xid8, $5::bigint)
   ORDER BY e.xid, e.seq
   LIMIT ${FOLLOW_ROWS}`;
