// A logged event read back (resume) as a typed event. Logs are written by huddle, but also by
// older versions, cut by a crash, or edited by hand: the fields a transcript is rebuilt from are
// checked here, at the boundary, so the transcript code can trust the union's types. An event
// that checks out is used as read (no copy: resume reads thousands); one that does not is
// repaired where a neutral value is safe, and dropped where it is not.
import type { LoggedEvent } from '../store/event-store.js';
import { isEventType, PROMPT_SOURCES, type HuddleEvent, type PromptSource } from './event-types.js';

const isString = (value: unknown): value is string => typeof value === 'string';
const text = (value: unknown): string => (isString(value) ? value : value === undefined || value === null ? '' : String(value));
const count = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined);
const isSource = (value: unknown): value is PromptSource => (PROMPT_SOURCES as readonly unknown[]).includes(value);

/** The event as its typed form, or undefined when its type is unknown or a field a transcript needs is unusable. */
export function parseLoggedEvent(raw: LoggedEvent): HuddleEvent | undefined {
  if (!raw || !isEventType(raw.type)) return undefined;
  if (isSound(raw)) return raw as HuddleEvent;
  return repaired(raw);
}

/** True when every field a transcript reads has its type (the common case: a log huddle wrote). */
function isSound(raw: LoggedEvent): boolean {
  switch (raw.type) {
    case 'prompt':
      return isString(raw.text) && isSource(raw.source);
    case 'text':
    case 'text_delta':
      return isString(raw.text);
    case 'tool_call':
      return isString(raw.id) && isString(raw.name);
    case 'tool_result':
      return (
        isString(raw.id) && isString(raw.name) && typeof raw.ok === 'boolean' && isString(raw.content) && (raw.skipped === undefined || raw.skipped === true)
      );
    case 'message_delivered':
      return (
        Array.isArray(raw.ids) &&
        raw.ids.every(isString) &&
        (raw.next_offset === undefined || count(raw.next_offset) !== undefined) &&
        (raw.messages === undefined || Array.isArray(raw.messages))
      );
    case 'compaction':
      if (raw.kind === 'trim') return raw.keep_turns === undefined || count(raw.keep_turns) !== undefined;
      return (
        raw.kind === 'summary' &&
        isString(raw.summary) &&
        (raw.first_turn === undefined || isString(raw.first_turn)) &&
        (raw.messages_before === undefined || count(raw.messages_before) !== undefined)
      );
    case 'context_reset':
      return (raw.reason === 'restart' || raw.reason === 'clear') && (raw.first_turn === undefined || isString(raw.first_turn));
    case 'error':
      return raw.interrupted === undefined || typeof raw.interrupted === 'boolean';
    default:
      // Events a transcript does not read: as logged.
      return true;
  }
}

function repaired(raw: LoggedEvent): HuddleEvent | undefined {
  const envelope = { ts: text(raw.ts), agent: text(raw.agent) };
  switch (raw.type) {
    case 'prompt':
      return { ...raw, ...envelope, type: 'prompt', text: text(raw.text), source: isSource(raw.source) ? raw.source : 'user' };
    case 'text':
    case 'text_delta':
      return { ...raw, ...envelope, type: raw.type, text: text(raw.text) };
    case 'tool_call':
      if (!isString(raw.id)) return undefined;
      return { ...raw, ...envelope, type: 'tool_call', id: raw.id, name: text(raw.name), input: raw.input ?? {}, summary: text(raw.summary) };
    case 'tool_result': {
      if (!isString(raw.id)) return undefined;
      const { skipped, ...rest } = raw;
      return {
        ...rest,
        ...envelope,
        type: 'tool_result',
        id: raw.id,
        name: text(raw.name),
        ok: raw.ok !== false,
        content: text(raw.content),
        duration_ms: Number(raw.duration_ms) || 0,
        ...(skipped === true ? { skipped: true as const, input: raw.input ?? {} } : {}),
      };
    }
    case 'message_delivered': {
      const { messages, next_offset, ...rest } = raw;
      const delivered = Array.isArray(messages) ? (messages as Array<{ id?: unknown }>).filter((m) => m && isString(m.id)) : undefined;
      const offset = count(next_offset);
      return {
        ...rest,
        ...envelope,
        type: 'message_delivered',
        ids: Array.isArray(raw.ids) ? raw.ids.map(text) : [],
        ...(delivered ? { messages: delivered as never } : {}),
        ...(offset !== undefined ? { next_offset: offset } : {}),
      };
    }
    case 'compaction': {
      const { first_turn, messages_before, keep_turns, ...rest } = raw;
      if (raw.kind === 'trim') {
        const keep = count(keep_turns);
        return {
          ...rest,
          ...envelope,
          type: 'compaction',
          kind: 'trim',
          cut: Number(raw.cut) || 0,
          chars_before: Number(raw.chars_before) || 0,
          chars_after: Number(raw.chars_after) || 0,
          before_tokens: Number(raw.before_tokens) || 0,
          after_tokens: Number(raw.after_tokens) || 0,
          ...(keep !== undefined ? { keep_turns: keep } : {}),
        };
      }
      if (raw.kind !== 'summary' || !isString(raw.summary)) return undefined;
      const before = count(messages_before);
      return {
        ...rest,
        ...envelope,
        type: 'compaction',
        kind: 'summary',
        trigger: raw.trigger === 'auto' || raw.trigger === 'restart' ? raw.trigger : 'manual',
        before_tokens: Number(raw.before_tokens) || 0,
        after_tokens: Number(raw.after_tokens) || 0,
        summary_chars: Number(raw.summary_chars) || raw.summary.length,
        summary: raw.summary,
        ...(isString(first_turn) ? { first_turn } : {}),
        ...(before !== undefined ? { messages_before: before } : {}),
      };
    }
    case 'context_reset': {
      const { first_turn, ...rest } = raw;
      return {
        ...rest,
        ...envelope,
        type: 'context_reset',
        reason: raw.reason === 'clear' || raw.reason === 'new_task' ? raw.reason : 'restart',
        ...(isString(first_turn) ? { first_turn } : {}),
      };
    }
    case 'error':
      return { ...raw, ...envelope, type: 'error', message: text(raw.message), interrupted: raw.interrupted === true };
    default:
      return { ...raw, ...envelope } as HuddleEvent;
  }
}
