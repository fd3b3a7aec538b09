// Resume (SPEC sections 1 and 5): an agent's conversation rebuilt from its logged events (the
// event store: `.team/logs/<name>/session-<stamp>.ndjson` in the file backend), which are
// appended synchronously as things happen.
// The rebuild follows AgentLoop: a `prompt` is user text (merged into a trailing user turn), a model
// call's `text` and `tool_call`s are one assistant turn, their `tool_result`s one user turn. A
// compaction summary restarts the transcript from the summary. A tool call cut by the crash gets an
// error result, so the rebuilt transcript never holds a dangling tool_use.
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Message } from '../runtime/store/bus.js';
import type { LoggedEvent } from '../runtime/store/event-store.js';
import { estimateTokens } from '../runtime/model/context-window.js';
import { identityBlock, type OwnedTask } from './identity-block.js';
import type { Identity } from './prompts.js';

export const INTERRUPTED_RESULT = 'interrupted by a crash; not known whether it ran';


export interface ReplayedTranscript {
  messages: MessageParam[];
  /** Events read (all session files). */
  events: number;
  /** Ids of tool calls that got the crash error result. */
  interruptedTools: string[];
  /** The highest `next_offset` of a logged delivery: the inbox cursor to re-ack before peeking again. */
  deliveredOffset: number | undefined;
  /** Every message id logged as delivered (for checks; never redelivered). */
  deliveredIds: Set<string>;
  /** Messages logged as delivered whose inbox turn never reached the transcript (crash in between). */
  undelivered: Message[];
  /** Estimated tokens of the rebuilt messages. */
  tokens: number;
}




interface PendingCall {
  text: string;
  uses: Array<{ id: string; name: string; input: unknown }>;
  results: Map<string, ToolResultBlockParam>;
}

/** Rebuilds the messages of an agent from its events (see the file comment). */
export function replayEvents(events: LoggedEvent[], identity?: Identity): ReplayedTranscript {
  let messages: MessageParam[] = [];
  const interruptedTools: string[] = [];
  const deliveredIds = new Set<string>();
  let deliveredOffset: number | undefined;
  let undelivered: Message[] = [];
  let call: PendingCall | undefined;
  let partial = '';

  const pushUser = (blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === 'user') {
      const existing = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
      last.content = [...existing, ...blocks];
    } else {
      messages.push({ role: 'user', content: blocks });
    }
  };
  // Ends the model call being rebuilt: its assistant turn, then a result for each of its tool calls.
  const flush = () => {
    if (!call) return;
    const content: ContentBlockParam[] = [];
    if (call.text) content.push({ type: 'text', text: call.text });
    for (const use of call.uses) content.push({ type: 'tool_use', id: use.id, name: use.name, input: use.input });
    if (content.length) messages.push({ role: 'assistant', content });
    const results = call.uses.map((use) => {
      const result = call!.results.get(use.id);
      if (result) return result;
      interruptedTools.push(use.id);
      return { type: 'tool_result' as const, tool_use_id: use.id, content: INTERRUPTED_RESULT, is_error: true };
    });
    pushUser(results);
    call = undefined;
  };

  for (const event of events) {
    switch (event.type) {
      case 'prompt': {
        flush();
        partial = '';
        const text = String(event.text ?? '');
        pushUser([{ type: 'text', text }]);
        if (event.source === 'inbox' && undelivered.length) undelivered = undelivered.filter((m) => !text.includes(m.id));
        break;
      }
      case 'usage':
        // A model call has returned (the compaction's own call is not part of the conversation).
        if (event.purpose === 'compaction') break;
        flush();
        partial = '';
        call = { text: '', uses: [], results: new Map() };
        break;
      case 'text_delta':
        partial += String(event.text ?? '');
        break;
      case 'retry':
        partial = '';
        break;
      case 'text':
        if (call) call.text += String(event.text ?? '');
        break;
      case 'tool_call':
        if (call) call.uses.push({ id: String(event.id), name: String(event.name), input: event.input ?? {} });
        break;
      case 'tool_result':
        if (call && call.uses.some((use) => use.id === event.id)) {
          call.results.set(String(event.id), {
            type: 'tool_result',
            tool_use_id: String(event.id),
            content: String(event.content ?? ''),
            ...(event.ok === false ? { is_error: true } : {}),
          });
        }
        break;
      case 'error':
        // An interrupted model call keeps the text already shown (AgentLoop does the same).
        if (event.interrupted && !call && partial) messages.push({ role: 'assistant', content: [{ type: 'text', text: partial }] });
        partial = '';
        break;
      case 'message_delivered': {
        const offset = Number(event.next_offset);
        if (Number.isSafeInteger(offset) && offset >= 0) deliveredOffset = Math.max(deliveredOffset ?? 0, offset);
        const delivered = Array.isArray(event.messages) ? (event.messages as Message[]) : [];
        for (const id of Array.isArray(event.ids) ? event.ids : []) deliveredIds.add(String(id));
        undelivered.push(...delivered);
        break;
      }
      case 'compaction':
        if (event.kind === 'summary' && typeof event.summary === 'string') {
          flush();
          // The compacted context: identity block and summary, then (as Compactor keeps them) the
          // inputs of a trailing user turn the model had not answered yet.
          const last = messages.at(-1);
          const kept = last?.role === 'user' && typeof last.content !== 'string' ? last.content.filter((b) => b.type !== 'tool_result') : [];
          const note = 'Your context was compacted: the summary below replaces your earlier conversation.';
          const head = identity ? `${identityBlock(identity, note, [])}\n\n` : '';
          messages = [{ role: 'user', content: [{ type: 'text', text: `${head}<summary>\n${event.summary}\n</summary>` }, ...kept] }];
        }
        break;
      default:
        break;
    }
  }
  flush();
  return {
    messages,
    events: events.length,
    interruptedTools,
    deliveredOffset,
    deliveredIds,
    undelivered,
    tokens: estimateTokens(JSON.stringify(messages).length),
  };
}


/** The one user turn a resumed agent gets (SPEC section 5): its identity block and the open tasks it owns. */
export function resumeTurn(identity: Identity, tasks: OwnedTask[], extra: { interrupted?: number; inbox?: string } = {}): string {
  const cut = extra.interrupted
    ? ` ${extra.interrupted} tool call(s) were cut by the crash: their results say so; check before repeating them.`
    : '';
  const note = `huddle was restarted and you were resumed with your conversation so far.${cut} The open tasks you own:`;
  const block = identityBlock(identity, note, tasks);
  return extra.inbox ? `${block}\n\n${extra.inbox}` : `${block}\n\nContinue from where you left off.`;
}

/** Adds user text as AgentLoop does: merged into a trailing user turn, so roles keep alternating. */
export function appendUserText(messages: MessageParam[], text: string): void {
  const block: ContentBlockParam = { type: 'text', text };
  const last = messages.at(-1);
  if (last?.role === 'user') {
    const existing = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
    last.content = [...existing, block];
  } else {
    messages.push({ role: 'user', content: [block] });
  }
}
