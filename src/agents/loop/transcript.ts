// The one rule that turns an agent's events into its conversation (the `messages` of its model
// requests). The live loop feeds it every event it emits (AgentLoop.events) and sends what it
// builds; resume feeds it the same events read back from the log. One rule, so a resumed agent
// continues from exactly the transcript it had.
//
//   prompt                    user text, merged into a trailing user turn (roles alternate)
//   usage (not a compaction's) a model call returned: a new assistant turn begins
//   text, tool_call           that turn's text and tool uses
//   tool_result               their results, one user turn after the assistant turn (a skipped
//                             call's result also brings the call: it has no tool_call event)
//   text_delta, retry, error  the partial text of a call; an interrupted call keeps it
//   compaction trim           old tool results cut to stubs (context-trim.ts), replayed exactly
//   compaction summary        the context restarts from its first turn (+ unanswered input)
//   context_reset             the context restarts from its first turn, or empty
//   message_delivered         bookkeeping for resume: the inbox position, deliveries not yet in a turn
//
// A model call is committed (its assistant turn and results appended) by the next event that
// changes the transcript, or by commit(); a tool call left without a result then gets an error
// result, so the transcript never holds a dangling tool_use (a crash cut it).
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { HuddleEvent, EventOf } from '../../runtime/events/events.js';
import type { Message } from '../../runtime/store/bus.js';
import { inboxLine } from '../../runtime/inbox.js';
import { trimOldToolResults, type ToolResultContent } from './context-trim.js';
import { identityBlock } from '../prompts/identity-block.js';
import type { Identity } from '../prompts/prompts.js';

export const INTERRUPTED_RESULT = 'interrupted by a crash; not known whether it ran';

interface PendingCall {
  text: string;
  uses: Array<{ id: string; name: string; input: unknown }>;
  results: Map<string, ToolResultBlockParam>;
}

export class Transcript {
  /** The conversation, as the next model request sends it. Change it only through apply(). */
  readonly messages: MessageParam[] = [];
  /** Tool results cut to stubs since the last compaction, by tool_use_id (the saved transcript restores them). */
  readonly cutResults = new Map<string, ToolResultContent>();
  /** Ids of tool calls that got the crash error result. */
  readonly interruptedTools: string[] = [];
  /** The highest `next_offset` of a logged delivery: the inbox cursor to re-ack before peeking again. */
  deliveredOffset: number | undefined;
  /** Every message id logged as delivered. */
  readonly deliveredIds = new Set<string>();
  /** Messages logged as delivered whose inbox turn has not reached the transcript (yet). */
  undelivered: Message[] = [];
  /** Who the agent is: only for compactions logged before `first_turn` was (their context is rebuilt from it). */
  identity: Identity | undefined;
  #call: PendingCall | undefined;
  #partial = '';

  constructor(identity?: Identity) {
    this.identity = identity;
  }

  /** Applies one event of this agent (see the file comment); events that do not touch the transcript are ignored. */
  apply(event: HuddleEvent): void {
    // A subagent's events (and its usage, counted in this agent's totals) are not this conversation.
    if (event.subagent !== undefined) return;
    switch (event.type) {
      case 'prompt':
        this.commit();
        this.#partial = '';
        this.#pushUser([{ type: 'text', text: event.text }]);
        // Delivered messages reach the model in an inbox turn, or in a resume turn (source system): each as its
        // line (the turn leaves ids out, so the line is what tells one message that reached the model).
        if (event.source !== 'user' && this.undelivered.length) this.undelivered = this.undelivered.filter((m) => !event.text.includes(inboxLine(m)));
        return;
      case 'usage':
        // The compaction's (or a restart's) own summary call is not part of the conversation.
        // Nor is a billed attempt that brought no message (what it streamed stays as the screen showed it).
        if (event.purpose === 'compaction' || event.partial) return;
        this.commit();
        this.#partial = '';
        this.#call = { text: '', uses: [], results: new Map() };
        return;
      case 'text_delta':
        this.#partial += event.text;
        return;
      case 'retry':
        this.#partial = '';
        return;
      case 'text':
        if (this.#call) this.#call.text += event.text;
        return;
      case 'tool_call':
        this.#call?.uses.push({ id: event.id, name: event.name, input: event.input ?? {} });
        return;
      case 'tool_result':
        this.#toolResult(event);
        return;
      case 'error':
        this.commit();
        // An interrupted model call keeps the text the person already saw.
        if (event.interrupted && this.#partial) this.messages.push({ role: 'assistant', content: [{ type: 'text', text: this.#partial }] });
        this.#partial = '';
        return;
      case 'message_delivered':
        this.#delivered(event);
        return;
      case 'compaction':
        this.commit();
        if (event.kind === 'trim') {
          // Logs written before keep_turns say only how many were cut: nothing to replay.
          if (event.keep_turns !== undefined) trimOldToolResults(this.messages, event.keep_turns, this.cutResults);
          return;
        }
        this.#replace(
          event.first_turn !== undefined
            ? compactedContext(this.messages, event.first_turn, event.messages_before ?? this.messages.length)
            : this.#legacyCompacted(event.summary),
        );
        this.cutResults.clear();
        return;
      case 'context_reset':
        this.commit();
        this.#partial = '';
        this.#replace(event.first_turn !== undefined ? [{ role: 'user', content: [{ type: 'text', text: event.first_turn }] }] : []);
        this.cutResults.clear();
        return;
      default:
        return;
    }
  }

  /** Applies logged events in order and commits the last model call (resume). */
  replay(events: Iterable<HuddleEvent>): void {
    for (const event of events) this.apply(event);
    this.commit();
  }

  /** Ends the model call being built: its assistant turn, then a result for each of its tool calls. */
  commit(): void {
    const call = this.#call;
    if (!call) return;
    this.#call = undefined;
    const content: ContentBlockParam[] = [];
    if (call.text) content.push({ type: 'text', text: call.text });
    for (const use of call.uses) content.push({ type: 'tool_use', id: use.id, name: use.name, input: use.input });
    if (content.length) this.messages.push({ role: 'assistant', content });
    this.#pushUser(
      call.uses.map((use) => {
        const result = call.results.get(use.id);
        if (result) return result;
        this.interruptedTools.push(use.id);
        return { type: 'tool_result', tool_use_id: use.id, content: INTERRUPTED_RESULT, is_error: true };
      }),
    );
  }

  #toolResult(event: EventOf<'tool_result'>): void {
    const call = this.#call;
    if (!call) return;
    // A skipped call has no tool_call event: its result brings it.
    if (event.skipped && !call.uses.some((use) => use.id === event.id)) call.uses.push({ id: event.id, name: event.name, input: event.input ?? {} });
    if (!call.uses.some((use) => use.id === event.id)) return;
    // Richer content (an MCP tool's images) goes to the model as it came; `content` is its text.
    const content = event.blocks?.length ? event.blocks : event.content;
    call.results.set(event.id, { type: 'tool_result', tool_use_id: event.id, content, ...(event.ok ? {} : { is_error: true }) });
  }

  #delivered(event: EventOf<'message_delivered'>): void {
    if (event.next_offset !== undefined) this.deliveredOffset = Math.max(this.deliveredOffset ?? 0, event.next_offset);
    for (const id of event.ids) this.deliveredIds.add(id);
    if (event.messages) this.undelivered.push(...event.messages);
  }

  /** The compacted context as resume rebuilt it before compaction events carried their first turn. */
  #legacyCompacted(summary: string): MessageParam[] {
    const last = this.messages.at(-1);
    const kept = last?.role === 'user' && typeof last.content !== 'string' ? last.content.filter((b) => b.type !== 'tool_result') : [];
    const note = 'Your context was compacted: the summary below replaces your earlier conversation.';
    const head = this.identity ? `${identityBlock(this.identity, note, [])}\n\n` : '';
    return [{ role: 'user', content: [{ type: 'text', text: `${head}<summary>\n${summary}\n</summary>` }, ...kept] }];
  }

  #replace(messages: MessageParam[]): void {
    this.messages.splice(0, this.messages.length, ...messages);
  }

  /** Appends user content, merging with a trailing user message (tool results) to keep roles alternating. */
  #pushUser(blocks: ContentBlockParam[]): void {
    if (blocks.length === 0) return;
    const last = this.messages.at(-1);
    if (last?.role === 'user') {
      last.content = [...blocksOf(last), ...blocks];
    } else {
      this.messages.push({ role: 'user', content: blocks });
    }
  }
}

export function blocksOf(message: MessageParam | undefined): ContentBlockParam[] {
  if (!message) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/**
 * The context after a compaction (docs/contract.md#injected-turns): one user turn of `firstTurn` (identity, open
 * tasks, summary), then the input of the last summarised message the model had not answered (its
 * text, not its tool results: the calls they answer were summarised away), then whatever came
 * after the first `summarised` messages (input that arrived while the summary was written).
 * Compaction computes the new context with it, and the transcript applies it: the same function.
 */
export function compactedContext(messages: MessageParam[], firstTurn: string, summarised: number): MessageParam[] {
  const last = messages[summarised - 1];
  const kept = last?.role === 'user' ? blocksOf(last).filter((block) => block.type !== 'tool_result') : [];
  const tail = messages.slice(summarised);
  const first: ContentBlockParam[] = [{ type: 'text', text: firstTurn }, ...kept];
  if (tail[0]?.role === 'user') first.push(...blocksOf(tail.shift()));
  return [{ role: 'user', content: first }, ...tail];
}
