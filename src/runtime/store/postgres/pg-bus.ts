// The message bus in PostgreSQL (docs/contract.md#messages). Each inbox has a row with the last sequence
// number given out and the one acked up to; each message is a row numbered in its inbox. The
// consumer's position (`nextOffset`) is a sequence number: peek returns the messages after the
// acked one, the consumer logs the delivery with the position, then acks it (monotonic and
// idempotent), exactly as with the file bus.
//
// A send is one statement: the inbox row's counter goes up (which also orders concurrent
// senders), the message goes in unless its client-made id is already there (a retry: nothing is
// stored or announced again), and the NOTIFY that wakes the recipient is sent with the commit.
import type { EventHub } from '../../events/events.js';
import { type Bus, BusClosedError, type Message, type OutgoingMessage, type PeekResult } from '../bus.js';
import { type PgContext, write } from './pg-context.js';
import { toJsonb } from './pg-json.js';
import { PROCESS_ORIGIN } from './team-channel.js';
import { abortReason, assertAgentName, broadcastTo, composeMessage, messageSentFields } from '../bus-rules.js';

export interface PgBusOptions {
  /** The names a message may be sent to, as this process knows them. */
  knownNames: () => string[];
  /** The names as stored now (a member another host added a moment ago). */
  freshNames: () => Promise<string[]>;
  /** Resolves once the event record holds everything emitted so far (a delivery is logged before its ack). */
  recorded?: () => Promise<void>;
}

interface Waiter {
  fail(error: Error): void;
}

export class PgBus implements Bus {
  readonly #ctx: PgContext;
  readonly #options: PgBusOptions;
  readonly #events: EventHub;
  readonly #waiters = new Set<Waiter>();
  #closed = false;

  constructor(ctx: PgContext, options: PgBusOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#events = ctx.hub;
  }

  async send(input: OutgoingMessage): Promise<Message> {
    let known = this.#options.knownNames();
    // A name another process just added: the roster's copy here may not have it yet.
    if (typeof input.to === 'string' && !known.includes(input.to)) known = await this.#options.freshNames();
    const message = composeMessage(input, known);
    const { to } = message;

    const { team, channel } = this.#ctx;
    const notice = JSON.stringify({ k: 'm', to, o: PROCESS_ORIGIN });
    const earlier = await write(this.#ctx, async (client) => {
      const inserted = await client.query(
        `WITH inbox AS (
           INSERT INTO huddle_inboxes (team, name, last_seq) VALUES ($1, $2, 1)
           ON CONFLICT (team, name) DO UPDATE SET last_seq = huddle_inboxes.last_seq + 1
           RETURNING last_seq
         ), stored AS (
           INSERT INTO huddle_messages (team, recipient, seq, id, body)
           SELECT $1, $2, last_seq, $3, $4 FROM inbox
           ON CONFLICT (team, recipient, id) DO NOTHING
           RETURNING seq
         )
         SELECT seq, pg_notify($5, $6) FROM stored`,
        [team, to, message.id, toJsonb(message), channel.channel, notice],
      );
      if (inserted.rows.length > 0) return undefined;
      // Only a caller-made id can be there already: a retry gets the stored message back.
      const { rows } = await client.query<{ body: Message }>('SELECT body FROM huddle_messages WHERE team = $1 AND recipient = $2 AND id = $3', [
        team,
        to,
        message.id,
      ]);
      return rows[0]?.body ?? null;
    });
    if (earlier) return earlier;
    channel.local({ k: 'm', to });
    this.#events.emit(message.from, 'message_sent', messageSentFields(message));
    return message;
  }

  async broadcast(from: string, content: string, exclude: Iterable<string> = []): Promise<Message[]> {
    return broadcastTo((message) => this.send(message), this.#options.knownNames(), from, content, exclude);
  }

  async peek(name: string, options: { limit?: number } = {}): Promise<PeekResult> {
    assertAgentName(name);
    const limit = options.limit !== undefined && Number.isFinite(options.limit) ? Math.max(0, Math.floor(options.limit)) : null;
    const { rows } = await this.#ctx.db.query<{ seq: string; body: Message | null; acked: string }>(
      `SELECT m.seq, m.body, i.acked_seq AS acked
         FROM huddle_inboxes i
         LEFT JOIN LATERAL (
           SELECT seq, body FROM huddle_messages
            WHERE team = i.team AND recipient = i.name AND seq > i.acked_seq
            ORDER BY seq LIMIT $3
         ) m ON true
        WHERE i.team = $1 AND i.name = $2`,
      [this.#ctx.team, name, limit],
    );
    if (rows.length === 0) return { messages: [], nextOffset: 0 };
    const messages = rows.filter((row) => row.body !== null).map((row) => row.body!);
    const last = rows.at(-1)!;
    return { messages, nextOffset: Number(last.body !== null ? last.seq : last.acked) };
  }

  async ack(name: string, nextOffset: number): Promise<void> {
    assertAgentName(name);
    if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
      throw new Error(`cannot ack ${name}'s inbox to offset ${String(nextOffset)}: not a position in it`);
    }
    if (nextOffset === 0) return;
    // The consumer logged the delivery (a message_delivered event) before this ack: it is stored first.
    await this.#options.recorded?.();
    const { team } = this.#ctx;
    await write(this.#ctx, async (client) => {
      const { rows } = await client.query<{ last_seq: string }>(
        `UPDATE huddle_inboxes SET acked_seq = GREATEST(acked_seq, $3) WHERE team = $1 AND name = $2 RETURNING last_seq`,
        [team, name, nextOffset],
      );
      const stored = rows.length ? Number(rows[0]!.last_seq) : 0;
      // Past the end: refused, and (the transaction rolls back) nothing moves.
      if (nextOffset > stored) throw new Error(`cannot ack ${name}'s inbox to offset ${nextOffset}: it holds only ${stored} messages`);
    });
  }

  async take(name: string): Promise<Message[]> {
    assertAgentName(name);
    const { team } = this.#ctx;
    return write(this.#ctx, async (client) => {
      const inbox = await client.query<{ acked_seq: string }>('SELECT acked_seq FROM huddle_inboxes WHERE team = $1 AND name = $2 FOR UPDATE', [team, name]);
      if (inbox.rows.length === 0) return [];
      const { rows } = await client.query<{ seq: string; body: Message }>(
        'SELECT seq, body FROM huddle_messages WHERE team = $1 AND recipient = $2 AND seq > $3 ORDER BY seq',
        [team, name, inbox.rows[0]!.acked_seq],
      );
      if (rows.length) await client.query('UPDATE huddle_inboxes SET acked_seq = $3 WHERE team = $1 AND name = $2', [team, name, rows.at(-1)!.seq]);
      return rows.map((row) => row.body);
    });
  }

  async unreadCount(name: string): Promise<number> {
    assertAgentName(name);
    const { rows } = await this.#ctx.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM huddle_messages m JOIN huddle_inboxes i ON i.team = m.team AND i.name = m.recipient
        WHERE m.team = $1 AND m.recipient = $2 AND m.seq > i.acked_seq`,
      [this.#ctx.team, name],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async history(name: string): Promise<Message[]> {
    assertAgentName(name);
    const { rows } = await this.#ctx.db.query<{ body: Message }>('SELECT body FROM huddle_messages WHERE team = $1 AND recipient = $2 ORDER BY seq', [
      this.#ctx.team,
      name,
    ]);
    return rows.map((row) => row.body);
  }

  /**
   * Resolves as soon as `name` has an unread message: woken by a send in this process, a NOTIFY
   * from another, or a reconnect of the listener (which re-reads: a NOTIFY sent meanwhile is lost).
   */
  waitForMessage(name: string, signal?: AbortSignal): Promise<void> {
    assertAgentName(name);
    if (this.#closed) return Promise.reject(new BusClosedError());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const { channel } = this.#ctx;
    return new Promise<void>((resolve, reject) => {
      let done = false;
      let checking = false;
      let again = false;
      const finish = (error?: Error): void => {
        if (done) return;
        done = true;
        offMessage();
        offResync();
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(waiter);
        if (error) reject(error);
        else resolve();
      };
      const check = async (): Promise<void> => {
        if (done) return;
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            if ((await this.unreadCount(name)) > 0) return finish();
          } while (again && !done);
        } catch (error) {
          finish(error as Error);
        } finally {
          checking = false;
        }
      };
      const onAbort = (): void => finish(abortReason(signal!));
      const waiter: Waiter = { fail: finish };
      // Listen first, then look: a message that lands in between still wakes us.
      this.#waiters.add(waiter);
      const offMessage = channel.on('m', (change) => {
        if (change.to === name) void check();
      });
      const offResync = channel.onResync(() => void check());
      signal?.addEventListener('abort', onAbort, { once: true });
      void check();
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const waiter of [...this.#waiters]) waiter.fail(new BusClosedError());
  }
}
