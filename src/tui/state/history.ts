// The earlier conversation in the panes: on reopening a workspace (a resume, `--continue`, or a
// new team where an earlier one worked), each agent's pane shows what it said and did before, from
// the team's event record, laid out by the same rule as live events (event-bridge.ts).
import type { LoggedEvent } from '../../runtime/store/event-store.js';
import type { HuddleEvent } from '../../runtime/events/events.js';
import { applyEvent } from './event-bridge.js';
import { patchAgent, type ConsoleState, type ConsoleStore } from './console-store.js';
import { appendItem, itemId } from '../render/transcript-items.js';

/** Events of a record that say nothing a pane shows from the record (the whole text follows each stream). */
const SKIPPED = new Set(['text_delta', 'done']);

export function replayHistory(store: ConsoleStore, histories: Array<{ agent: string; events: LoggedEvent[] }>, continued: boolean): void {
  if (!histories.some((history) => history.events.length > 0)) return;
  store.setState((start) => {
    let state: ConsoleState = start;
    for (const { agent, events } of histories) {
      const shown = events.filter((event) => !SKIPPED.has(event.type));
      if (shown.length === 0) continue;
      for (const event of shown) state = { ...state, ...applyEvent(state, { ...event, agent } as unknown as HuddleEvent) };
      const when = typeof events[0]?.ts === 'string' ? ` (from ${events[0].ts.slice(0, 16).replace('T', ' ')})` : '';
      const note = continued
        ? 'the conversation so far, from the team record: it goes on below'
        : `an earlier session${when}, from the team record; huddle --continue picks it up, a new prompt starts afresh`;
      state = {
        ...state,
        ...patchAgent(state, agent, (view) => ({
          // Nothing in the record is in progress now: no spinner, no stream, no running tool.
          items: appendItem(
            view.items.map((item) =>
              item.kind === 'assistant' && item.streaming
                ? { ...item, streaming: false }
                : item.kind === 'tool' && item.state === 'running'
                  ? { ...item, state: 'error' as const, result: item.result ?? 'cut off when huddle stopped' }
                  : item,
            ),
            { kind: 'notice', id: itemId(), text: `─── above: ${note}`, tone: 'info' },
          ),
          turn: undefined,
          activeTool: undefined,
          unread: false,
          queued: undefined,
        })),
      };
    }
    // Questions of the past are not waiting any more.
    return { ...state, approvals: [], approvalIndex: 0, flash: undefined };
  });
}
