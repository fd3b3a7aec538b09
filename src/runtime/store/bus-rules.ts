// What every backend's bus does the same way (docs/contract.md#messages): which names and ids it accepts, the
// message it stores for an outgoing one, the event that announces a send, and how a broadcast
// fans out. A backend adds only where and how messages are kept.
import type { EventFields } from '../events/event-types.js';
import { AGENT_NAME_PATTERN } from '../vocabulary.js';
import { scrubStrings } from '../secrets.js';
import { type Message, MESSAGE_TYPES, newMessageId, type OutgoingMessage, UnknownRecipientError } from './bus.js';

/** Caller-made message ids: a retry after a crash or a cut connection sends the same one. */
const MESSAGE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function assertAgentName(name: string): void {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name)) {
    throw new Error(`'${String(name)}' is not an agent name (expected ${AGENT_NAME_PATTERN.source})`);
  }
}

/**
 * The message to store for `input`, checked: a known recipient (UnknownRecipientError naming the
 * known ones), a message type, a sender, text content, a well-formed caller-made id.
 */
export function composeMessage(outgoing: OutgoingMessage, known: readonly string[]): Message {
  // Any agent may write a message, an external one whose tools huddle never saw: stored scrubbed (docs/trust.md).
  const input = scrubStrings(outgoing);
  const { id: callerId, ts: _ts, type = 'message', from, to, content, ...extra } = input;
  if (typeof to !== 'string' || !known.includes(to)) throw new UnknownRecipientError(String(to), [...known]);
  assertAgentName(to);
  if (!MESSAGE_TYPES.includes(type)) throw new Error(`unknown message type '${String(type)}'; use one of ${MESSAGE_TYPES.join(', ')}`);
  if (typeof from !== 'string' || from === '') throw new Error('a message needs a sender (from)');
  if (typeof content !== 'string') throw new Error('a message needs text content');
  if (callerId !== undefined && (typeof callerId !== 'string' || !MESSAGE_ID.test(callerId))) {
    throw new Error(`'${String(callerId)}' is not a message id (letters, digits, _ . : -; up to 128; newMessageId() makes one)`);
  }
  const message: Message = { id: callerId ?? newMessageId(), type, from, to, content, ts: new Date().toISOString() };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) message[key] = value;
  return message;
}

/** The `message_sent` event of a stored message (emitted by its sender). */
export function messageSentFields(message: Message): EventFields['message_sent'] {
  return {
    id: message.id,
    from: message.from,
    to: message.to,
    message_type: message.type,
    content: message.content,
    ...(message.request_id !== undefined ? { request_id: message.request_id } : {}),
  };
}

/** A `broadcast` copy to every name in `names` except the sender and `exclude`, one send each. */
export async function broadcastTo(
  send: (message: OutgoingMessage) => Promise<Message>,
  names: readonly string[],
  from: string,
  content: string,
  exclude: Iterable<string>,
): Promise<Message[]> {
  const skip = new Set(exclude);
  skip.add(from);
  const sent: Message[] = [];
  for (const to of names) {
    if (skip.has(to)) continue;
    sent.push(await send({ type: 'broadcast', from, to, content }));
  }
  return sent;
}

/** The error an aborted wait rejects with: the signal's reason, or an AbortError. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'aborted');
  error.name = 'AbortError';
  return error;
}
