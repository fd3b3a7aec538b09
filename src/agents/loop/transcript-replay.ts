// Resume (docs/contract.md#command-line, docs/contract.md#injected-turns): an agent's conversation rebuilt from its logged events (the
// event store: `.team/logs/<name>/session-<stamp>.ndjson` in the file backend), which are
// appended synchronously as things happen. The rule is the live loop's own (transcript.ts); this
// file reads the log into it and writes the one user turn a resumed agent gets.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { parseLoggedEvent } from '../../runtime/events/logged-event.js';
import type { Message } from '../../runtime/store/bus.js';
import type { LoggedEvent } from '../../runtime/store/event-store.js';
import { estimateTokens } from '../../runtime/model/context-window.js';
import { ownedTaskLines, type OwnedTask } from '../prompts/identity-block.js';
import { identityLine, type Identity } from '../prompts/prompts.js';
import { fill } from '../prompts/templates.js';
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
  return fill('turn-resumed', {
    identity: identityLine(identity),
    interrupted: extra.interrupted ?? 0,
    tasks: ownedTaskLines(tasks),
    inbox: extra.inbox ?? '',
  });
}
