// Resume (docs/contract.md#command-line, docs/contract.md#injected-turns): an agent's conversation rebuilt from its logged events (the
// event store: `.team/logs/<name>/session-<stamp>.ndjson` in the file backend), which are
// appended synchronously as things happen. The rule is the live loop's own (transcript.ts); this
// file reads the log into it and writes the one user turn a resumed agent gets.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { parseLoggedEvent } from '../../runtime/events/logged-event.js';
import type { Message } from '../../runtime/store/bus.js';
import type { LoggedEvent } from '../../runtime/store/event-store.js';
import { estimateTokens } from '../../runtime/model/context-window.js';
import { identityBlock, type OwnedTask } from '../prompts/identity-block.js';
import type { Identity } from '../prompts/prompts.js';
import { Transcript } from './transcript.js';

export { INTERRUPTED_RESULT } from './transcript.js';

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

/**
 * Rebuilds an agent's conversation from its logged events into `transcript` (a fresh one by
 * default; resume passes the agent's own, so the loop continues from it).
 */
export function replayEvents(events: LoggedEvent[], identity?: Identity, transcript = new Transcript(identity)): ReplayedTranscript {
  transcript.identity ??= identity;
  for (const raw of events) {
    const event = parseLoggedEvent(raw);
    if (event) transcript.apply(event);
  }
  transcript.commit();
  return {
    messages: transcript.messages,
    events: events.length,
    interruptedTools: transcript.interruptedTools,
    deliveredOffset: transcript.deliveredOffset,
    deliveredIds: transcript.deliveredIds,
    undelivered: transcript.undelivered,
    tokens: estimateTokens(JSON.stringify(transcript.messages).length),
  };
}

/** The one user turn a resumed agent gets (docs/contract.md#injected-turns): its identity block and the open tasks it owns. */
export function resumeTurn(identity: Identity, tasks: OwnedTask[], extra: { interrupted?: number; inbox?: string } = {}): string {
  const cut = extra.interrupted ? ` ${extra.interrupted} tool call(s) were cut by the crash: their results say so; check before repeating them.` : '';
  const note = `huddle was restarted and you were resumed with your conversation so far.${cut} The open tasks you own:`;
  const block = identityBlock(identity, note, tasks);
  return extra.inbox ? `${block}\n\n${extra.inbox}` : `${block}\n\nContinue from where you left off.`;
}
