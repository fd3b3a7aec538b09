// One agent's inbox, as its agent reads it (docs/contract.md#messages). The bus (store/bus.ts) keeps the
// messages; this is the reader's side, the same for the lead and every teammate:
//
//   1. peek      the unread messages and the position just past them: the one look at the inbox a
//                delivery takes (Bus.peek);
//   2. record    a `message_delivered` event with the messages and that position, logged before the
//                cursor moves, so a crash in between is found on resume rather than losing them;
//   3. advance   the cursor to that position (Bus.ack: monotonic, so a resume may re-ack it);
//   4. format    the `<inbox>` user turn the model reads.
//
// And the wait between deliveries: one race between a message arriving, whatever else may wake
// the agent (a prompt for the lead, a board change for a teammate), a deadline and a stop.
import type { AgentEmitter } from './events/events.js';
import type { Bus, Message, PeekResult } from './store/bus.js';
import { HUDDLE_SENDER, PERSON_SENDER } from './vocabulary.js';

// ---- the <inbox> turn ---------------------------------------------------------------------

/** Who wrote a message, as the model reads it: the person, huddle itself, or an agent (docs/trust.md#authority). */
export type SenderKind = 'person' | 'huddle' | 'agent';

/** `user` and `huddle` are names no agent may take (roster-rules.ts), so `from` alone tells them apart. */
export function senderKind(from: string): SenderKind {
  return from === PERSON_SENDER ? 'person' : from === HUDDLE_SENDER ? 'huddle' : 'agent';
}

/**
 * The user turn that carries delivered messages (docs/contract.md#messages): `<inbox>`, one JSON line each,
 * `</inbox>`. Each line starts with `sender` (person, huddle or agent), set here and never taken from
 * the stored message: an agent's message must never read as the person's. The message's `id` is left
 * out: no tool takes it (protocol answers cite `request_id`), and its ~20 random characters cost every
 * reader ~20 tokens a message (a lead reading reports most of all).
 */
export function formatInbox(messages: readonly Message[]): string {
  return ['<inbox>', ...messages.map(inboxLine), '</inbox>'].join('\n');
}

/**
 * One message's line in an `<inbox>` turn. Without its id, this line is how a resume tells a delivered
 * message that reached the model (its line is in a logged turn) from one that did not (agents/loop/transcript.ts).
 */
export function inboxLine({ sender: _stored, id: _id, ...message }: Message): string {
  return JSON.stringify({ sender: senderKind(message.from), ...message });
}

// ---- delivery -----------------------------------------------------------------------------

/** Messages taken from the inbox: recorded, acked, and the turn that carries them. */
export interface Delivery {
  messages: Message[];
  nextOffset: number;
  text: string;
}

/**
 * Something besides a message that ends a wait (a prompt queued for the lead, a board change for a
 * teammate, or a polling floor for a backend whose wake-ups can be lost): it calls `wake`, and
 * returns how to stop listening.
 */
export type WakeSource = (wake: () => void) => () => void;

export interface InboxWait {
  /** A stop or a close: the wait ends at once (also when it was aborted before the wait began). */
  signal?: AbortSignal;
  /** Ends the wait after this long (absent or Infinity: never). */
  timeoutMs?: number;
  wakeOn?: readonly WakeSource[];
}

export class Inbox {
  /** The last position acked: an empty look past it (skipped lines) moves the cursor, one at it does not. */
  #acked: number | undefined;

  constructor(
    /** The agent whose inbox this is. */
    readonly owner: string,
    readonly bus: Bus,
    /** The owner's events: the delivery record goes into its log. */
    readonly events: AgentEmitter,
  ) {}

  /**
   * The four steps: peek, then (when there is something) `beforeTaking` (the owner says it is
   * working before a message leaves its inbox), record, advance, format. Undefined: nothing unread.
   */
  async deliver(beforeTaking?: () => void | Promise<void>): Promise<Delivery | undefined> {
    const peeked = await this.peek();
    if (peeked.messages.length === 0) {
      await this.advance(peeked);
      return undefined;
    }
    await beforeTaking?.();
    this.record(peeked);
    await this.advance(peeked);
    return { messages: peeked.messages, nextOffset: peeked.nextOffset, text: formatInbox(peeked.messages) };
  }

  /** Step 1: the unread messages, oldest first, and the position just past them. */
  peek(): Promise<PeekResult> {
    return this.bus.peek(this.owner);
  }

  /** Step 2: the delivery, logged (synchronously) with its position before the cursor moves. */
  record(peeked: PeekResult): void {
    const { messages, nextOffset } = peeked;
    this.events.emit('message_delivered', { ids: messages.map((message) => message.id), messages, next_offset: nextOffset });
  }

  /** Step 3: the cursor past what was peeked. An empty look that moved nothing writes nothing. */
  async advance(peeked: PeekResult): Promise<void> {
    if (peeked.messages.length === 0 && peeked.nextOffset === this.#acked) return;
    await this.bus.ack(this.owner, peeked.nextOffset);
    this.#acked = peeked.nextOffset;
  }

  /**
   * Waits for the first of: a message in the inbox (the bus wakes it), a wake source, the timeout,
   * the signal. Says nothing of which: the caller looks again (a delivery first). A closed bus does
   * not end the wait (it would only be asked again at once): the signal or a deadline does.
   */
  wait(options: InboxWait = {}): Promise<void> {
    const { signal, timeoutMs = Infinity, wakeOn = [] } = options;
    return new Promise((resolve) => {
      const local = new AbortController();
      const stops: Array<() => void> = [];
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        if (local.signal.aborted) return;
        local.abort();
        clearTimeout(timer);
        for (const stop of stops.splice(0)) stop();
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      // Aborted before the wait began (while a delivery was being taken, say): its event has fired already.
      if (signal?.aborted) return finish();
      for (const source of wakeOn) {
        const stop = source(finish);
        if (local.signal.aborted)
          stop(); // it woke while being listened to
        else stops.push(stop);
      }
      if (local.signal.aborted) return;
      if (Number.isFinite(timeoutMs)) timer = setTimeout(finish, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', finish, { once: true });
      this.bus.waitForMessage(this.owner, local.signal).then(finish, () => undefined);
    });
  }
}
