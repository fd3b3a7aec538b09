// The "needs you" queue in the console's store: approval events queue a request with a line in
// its pane and drop it with the decision (the view in a terminal: test/scenarios/console/approvals.pty.test.ts).
import { describe, expect, it } from 'vitest';
import type { HuddleEvent } from '../../../src/runtime/events/events.js';
import { createConsoleStore, type ConsoleState } from '../../../src/tui/state/console-store.js';
import { applyEvent } from '../../../src/tui/state/event-bridge.js';

function ev(agent: string, type: string, fields: object): HuddleEvent {
  return { ts: new Date().toISOString(), agent, type, ...fields } as HuddleEvent;
}

describe('approval events in the store', () => {
  it('queue a request with a line in its pane (the question itself is drawn under the pane), and drop it with the decision when resolved', () => {
    let state: ConsoleState = createConsoleStore({ model: 'm', endpoint: '' }).getState();
    const apply = (event: HuddleEvent) => (state = { ...state, ...applyEvent(state, event) });
    apply(
      ev('alice', 'approval_requested', {
        id: 'approval_1',
        tool: 'bash',
        summary: 'npm install',
        reason: "'npm install' is not on the allow-list",
        prefixes: ['npm install'],
      }),
    );
    apply(ev('lead', 'approval_requested', { id: 'approval_2', tool: 'write_file', summary: '.env', reason: 'secrets', prefixes: [] }));
    expect(state.approvals.map((a) => [a.id, a.agent, a.tool, a.summary, a.prefixes])).toEqual([
      ['approval_1', 'alice', 'bash', 'npm install', ['npm install']],
      ['approval_2', 'lead', 'write_file', '.env', []],
    ]);
    expect(state.agents.alice!.items.at(-1)).toMatchObject({ kind: 'notice', tone: 'warn', text: 'asked you to approve: bash npm install' });
    expect(state.agents.alice!.unread).toBe(true);

    state = { ...state, approvalIndex: 1 };
    apply(ev('lead', 'approval_resolved', { id: 'approval_2', decision: 'deny', by: 'user' }));
    expect(state.approvals.map((a) => a.id)).toEqual(['approval_1']);
    expect(state.approvalIndex).toBe(0); // the selection stays on a request that exists
    expect(state.agents.lead!.items.at(-1)).toMatchObject({ kind: 'notice', text: 'denied: write_file .env' });
    apply(ev('alice', 'approval_resolved', { id: 'approval_1', decision: 'cancelled', note: 'the agent was interrupted' }));
    expect(state.approvals).toEqual([]);
    expect(state.agents.alice!.items.at(-1)).toMatchObject({ text: 'withdrawn: bash npm install (the agent was interrupted)' });
  });
});
