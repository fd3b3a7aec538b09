// A subagent's events in the console (docs/console.md#panes): not the parent's conversation, a line
// of progress per helper under the parent's explore call, and their spend in the parent's totals.
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createConsoleStore, type ConsoleState } from '../../../src/tui/state/console-store.js';
import { applyEvent } from '../../../src/tui/state/event-bridge.js';
import { itemLines } from '../../../src/tui/render/transcript-lines.js';

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, seconds)).toISOString();
const ev = (agent: string, type: string, fields: object, seconds = 0) => ({ ts: at(seconds), agent, type, ...fields }) as never;
const helper = (n: number) => ({ subagent: `lead/explore-${n}`, parent_tool_use_id: 'toolu_ex' });

describe("explore's helpers in the parent's pane", () => {
  it('shows what each helper does under the call, keeps their turns out of the pane, and counts their spend', () => {
    let state: ConsoleState = createConsoleStore({ model: 'claude-sonnet-4-6', endpoint: '' }).getState();
    const apply = (event: never) => (state = { ...state, ...applyEvent(state, event) });
    apply(ev('lead', 'status', { status: 'working', role: 'lead' }, 0));
    apply(ev('lead', 'tool_call', { id: 'toolu_ex', name: 'explore', input: {}, summary: '2 helpers' }, 1));
    apply(ev('lead', 'prompt', { text: 'find the readme', source: 'system', by: 'lead', ...helper(1) }, 2));
    apply(ev('lead', 'prompt', { text: 'list the sources', source: 'system', by: 'lead', ...helper(2) }, 2));
    apply(ev('lead', 'text_delta', { text: 'Looking…', ...helper(1) }, 3));
    apply(ev('lead', 'tool_call', { id: 'g1', name: 'grep', input: {}, summary: 'TODO', ...helper(2) }, 3));
    apply(ev('lead', 'usage', { input_tokens: 10, output_tokens: 5, total_cost_usd: 0.25, ...helper(1) }, 4));

    const items = state.agents.lead!.items;
    expect(items.map((item) => item.kind)).toEqual(['tool']);
    const lines = itemLines(items[0]!, 80, false).map((line) => stripVTControlCharacters(line));
    expect(lines[0]).toContain('explore');
    expect(lines[0]).toContain('2 helpers');
    expect(lines.slice(1)).toEqual(['    ⎿ explore-1: started', '    ⎿ explore-2: grep TODO']);
    expect(state.agents.lead!.costUsd).toBe(0.25);

    apply(ev('lead', 'tool_result', { id: 'toolu_ex', name: 'explore', ok: true, content: '## lead/explore-1\nfound', duration_ms: 4000 }, 5));
    expect(itemLines(state.agents.lead!.items[0]!, 80, false)).toHaveLength(1);
  });
});
