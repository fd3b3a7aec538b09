// The message bus (docs/contract.md#messages): one inbox per agent, every message delivered to its recipient's
// model exactly once. This is the contract every backend keeps (store/file/file-bus.ts today);
// the agents and tools know only this interface.
//
// Exactly once, for every backend: `peek` returns the unread messages and a position just past
// them; the consumer records the delivery together with that position in its own durable log,
// then `ack`s it. `ack` is monotonic and idempotent, so after a crash re-acking the recorded
// position makes "recorded" and "acked" agree whichever happened last.
import { randomBytes } from 'node:crypto';

export const MESSAGE_TYPES = ['message', 'broadcast', 'shutdown_request', 'shutdown_response', 'plan_approval_request', 'plan_approval_response'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface Message {
  id: string;
  type: MessageType;
  from: string;
  to: string;
  content: string;
  ts: string;
  request_id?: string;
  approve?: boolean;
  plan?: string;
  feedback?: string;
  reason?: string;
  [extra: string]: unknown;
}

/**
 * What a sender supplies. `ts` is assigned by the bus; `id` too unless the sender made one
 * (newMessageId): a send retried with the same id (after a cut connection, say) is then a no-op.
 */
export interface OutgoingMessage {
  id?: string;
  type?: MessageType;
  from: string;
  to: string;
  content: string;
  request_id?: string;
  approve?: boolean;
  plan?: string;
  feedback?: string;
  reason?: string;
  [extra: string]: unknown;
}

export interface PeekResult {
  /** Unread messages, oldest first. */
  messages: Message[];
  /**
   * Where the reader stands after these messages: pass it to `ack`. Opaque to callers (a byte
   * offset in the file backend, a sequence number in a database), but a number that only grows,
   * so a consumer can record it with the delivery and re-ack it after a crash.
   */
  nextOffset: number;
}

/** One agent's inbox, everything in it, delivered or not (resume and the console read it). */
export interface Bus {
  /**
   * Appends one message to the recipient's inbox. Refuses unknown recipients (UnknownRecipientError).
   * With a caller-made `id` the recipient's inbox already holds (a retry after a crash or a cut
   * connection, from any instance), nothing is stored or announced again: the stored message is returned.
   */
  send(message: OutgoingMessage): Promise<Message>;
  /** Sends a `broadcast` copy to every known name except the sender and `exclude`. */
  broadcast(from: string, content: string, exclude?: Iterable<string>): Promise<Message[]>;
  /** The unread messages of `name`, without marking them read. */
  peek(name: string, options?: { limit?: number }): Promise<PeekResult>;
  /** Marks everything before `nextOffset` (from `peek`) as delivered. Monotonic and idempotent. */
  ack(name: string, nextOffset: number): Promise<void>;
  /** peek + ack, for callers that deliver at once. Concurrent takes never return the same message. */
  take(name: string): Promise<Message[]>;
  unreadCount(name: string): Promise<number>;
  /** Every message ever sent to `name`, delivered or not, oldest first (unreadable entries skipped). */
  history(name: string): Promise<Message[]>;
  /** Resolves as soon as `name` has an unread message; rejects when aborted or closed (BusClosedError). */
  waitForMessage(name: string, signal?: AbortSignal): Promise<void>;
  close(): void;
}

export class UnknownRecipientError extends Error {
  constructor(
    readonly recipient: string,
    readonly knownNames: string[],
  ) {
    super(`no teammate named '${recipient}'; known names: ${knownNames.length ? knownNames.join(', ') : '(none)'}`);
    this.name = 'UnknownRecipientError';
  }
}

export class BusClosedError extends Error {
  constructor() {
    super('the message bus was closed');
    this.name = 'BusClosedError';
  }
}

let lastIdTime = 0;
let idSequence = 0;

/** `msg_` + milliseconds (base 36, sortable) + a per-process sequence + 64 random bits. */
export function newMessageId(): string {
  const now = Date.now();
  if (now === lastIdTime) idSequence += 1;
  else {
    lastIdTime = now;
    idSequence = 0;
  }
  const time = now.toString(36).padStart(9, '0');
  const sequence = idSequence.toString(36).padStart(3, '0');
  return `msg_${time}${sequence}${randomBytes(8).toString('hex')}`;
}
