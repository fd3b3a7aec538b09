// A logged event read back (resume) as a typed event. Logs are written by huddle, but also by
// older versions, cut by a crash, or edited by hand: the fields a transcript is rebuilt from are
// checked here, at the boundary, so the transcript code can trust the union's types.
import type { LoggedEvent } from '../store/event-store.js';
import { isEventType, PROMPT_SOURCES, type HuddleEvent } from './event-types.js';

const isString = (value: unknown): value is string => typeof value === 'string';
const text = (value: unknown): string => (isString(value) ? value : value === undefined || value === null ? '' : String(value));

/**
 * The event as its typed form, or undefined when its type is unknown or a field a transcript needs
 * is unusable. Missing fields that only describe (a tool result's name, a usage's totals) get
 * neutral values; the fields a transcript is built from are checked.
 */
export function parseLoggedEvent(raw: LoggedEvent): HuddleEvent | undefined {
  if (!raw || !isEventType(raw.type)) return undefined;
  const envelope = { ts: text(raw.ts), agent: text(raw.agent) };
  switch (raw.type) {
    case 'prompt': {
      const source = (PROMPT_SOURCES as readonly unknown[]).includes(raw.source) ? (raw.source as (typeof PROMPT_SOURCES)[number]) : 'user';
      return { ...raw, ...envelope, type: 'prompt', text: text(raw.text), source };
    }
    case 'text':
    case 'text_delta':
      return { ...raw, ...envelope, type: raw.type, text: text(raw.text) };
    case 'tool_call':
      if (!isString(raw.id)) return undefined;
      return { ...raw, ...envelope, type: 'tool_call', id: raw.id, name: text(raw.name), input: raw.input ?? {}, summary: text(raw.summary) };
    case 'tool_result':
      if (!isString(raw.id)) return undefined;
      return {
        ...raw,
        ...envelope,
        type: 'tool_result',
        id: raw.id,
        name: text(raw.name),
        ok: raw.ok !== false,
        content: text(raw.content),
        duration_ms: Number(raw.duration_ms) || 0,
        ...(raw.skipped === true ? { skipped: true as const, input: raw.input ?? {} } : {}),
      };
    case 'message_delivered': {
      const ids = Array.isArray(raw.ids) ? raw.ids.map(text) : [];
      const messages = Array.isArray(raw.messages) ? (raw.messages as Array<{ id?: unknown }>).filter((m) => m && isString(m.id)) : undefined;
      const offset = Number(raw.next_offset);
      const { messages: _m, next_offset: _o, ...rest } = raw;
      return {
        ...rest,
        ...envelope,
        type: 'message_delivered',
        ids,
        ...(messages ? { messages: messages as never } : {}),
        ...(Number.isSafeInteger(offset) && offset >= 0 ? { next_offset: offset } : {}),
      };
    }
    case 'compaction':
      if (raw.kind === 'summary') {
        if (!isString(raw.summary)) return undefined;
        const { first_turn, messages_before, ...rest } = raw;
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
          ...(Number.isSafeInteger(messages_before) && (messages_before as number) >= 0 ? { messages_before: messages_before as number } : {}),
        };
      }
      if (raw.kind === 'trim') {
        const { keep_turns, ...rest } = raw;
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
          ...(Number.isSafeInteger(keep_turns) && (keep_turns as number) >= 0 ? { keep_turns: keep_turns as number } : {}),
        };
      }
      return undefined;
    case 'context_reset': {
      const { first_turn, ...rest } = raw;
      return {
        ...rest,
        ...envelope,
        type: 'context_reset',
        reason: raw.reason === 'clear' ? 'clear' : 'restart',
        ...(isString(first_turn) ? { first_turn } : {}),
      };
    }
    case 'error':
      return { ...raw, ...envelope, type: 'error', message: text(raw.message), interrupted: raw.interrupted === true };
    default:
      // Events a transcript does not read: as logged.
      return { ...raw, ...envelope } as HuddleEvent;
  }
}
