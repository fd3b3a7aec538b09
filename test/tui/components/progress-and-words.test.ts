// The console's bookkeeping without a screen: word-at-a-time streams coalesced before the store,
// turn progress from events (phase, estimate, "done in"), a scrolled view anchored while the agent
// writes, and protocol messages and internal turns in words.
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { createConsoleStore, type ConsoleState } from '../../../src/tui/state/console-store.js';
import { EventBridge, applyEvent } from '../../../src/tui/state/event-bridge.js';
import { activity, liveOutputTokens } from '../../../src/tui/components/progress.js';
import { paneWindow, rowAnchor, rowIndex } from '../../../src/tui/render/pane-window.js';
import { describeInboxMessage, describePrompt, describeToolCall } from '../../../src/tui/render/human-words.js';
import { freshTaskTurn, rememberWork } from '../../../src/agents/prompts/task-memory.js';
import { itemId, type TranscriptItem } from '../../../src/tui/render/transcript-items.js';
import { askLines } from '../../../src/tui/components/ask-box.js';
import { askChoices } from '../../../src/tui/state/ask-choices.js';
import type { ApprovalView } from '../../../src/tui/state/console-store.js';
import { stripVTControlCharacters } from 'node:util';

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, seconds)).toISOString();
const ev = (agent: string, type: string, fields: object, seconds = 0) => ({ ts: at(seconds), agent, type, ...fields }) as never;

describe('streams into the store', () => {
  it('coalesces a word-at-a-time stream of each agent into one transcript update per flush, in order', () => {
    const hub = new EventHub();
    const store = createConsoleStore({ model: 'm', endpoint: '' });
    const bridge = new EventBridge(hub, store);
    let updates = 0;
    store.subscribe(() => updates++);
    for (let i = 0; i < 200; i++) {
      hub.emit('t1', 'text_delta', { text: `a${i} ` });
      hub.emit('t2', 'text_delta', { text: `b${i} ` });
      if (i === 100) hub.emit('t1', 'tool_call', { id: 'x', name: 'glob', input: {}, summary: '*.ts' });
    }
    bridge.flush();
    expect(updates).toBe(1);
    const t1 = store.getState().agents.t1!.items;
    expect(t1.map((item) => item.kind)).toEqual(['assistant', 'tool', 'assistant']);
    expect((t1[0] as { text: string }).text).toBe(Array.from({ length: 101 }, (_, i) => `a${i} `).join(''));
    expect((t1[2] as { text: string }).text).toBe(Array.from({ length: 99 }, (_, i) => `a${i + 101} `).join(''));
    expect((store.getState().agents.t2!.items[0] as { text: string }).text).toBe(Array.from({ length: 200 }, (_, i) => `b${i} `).join(''));
    bridge.close();
  });
});

describe('turn progress', () => {
  it('follows a turn through its phases, estimates tokens while streaming, and times it', () => {
    let state: ConsoleState = createConsoleStore({ model: 'claude-sonnet-4-6', endpoint: '' }).getState();
    const apply = (event: never) => (state = { ...state, ...applyEvent(state, event) });
    apply(ev('lead', 'status', { status: 'working', role: 'lead' }, 0));
    expect(activity(state.agents.lead!, Date.parse(at(3)))).toBe('thinking · 3 s');
    apply(ev('lead', 'tool_call', { id: 't', name: 'bash', summary: 'npm test' }, 4));
    expect(activity(state.agents.lead!, Date.parse(at(9)))).toBe('running bash · 9 s');
    apply(ev('lead', 'tool_result', { id: 't', name: 'bash', ok: true, content: 'ok', duration_ms: 5000 }, 9));
    apply(ev('lead', 'text_delta', { text: 'x'.repeat(400) }, 10));
    expect(activity(state.agents.lead!, Date.parse(at(11)))).toBe('writing · 11 s');
    expect(liveOutputTokens(state.agents.lead!)).toEqual({ tokens: 100, estimated: true });
    apply(ev('lead', 'usage', { input_tokens: 50, output_tokens: 90, total_cost_usd: 0.01 }, 12));
    expect(liveOutputTokens(state.agents.lead!)).toEqual({ tokens: 90, estimated: false });
    apply(ev('lead', 'status', { status: 'waiting', role: 'lead', reason: 'waiting for your approval' }, 13));
    expect(activity(state.agents.lead!, Date.parse(at(14)))).toBe('waiting for your approval · 14 s');
    apply(ev('lead', 'status', { status: 'working', role: 'lead' }, 15));
    apply(ev('lead', 'status', { status: 'idle', role: 'lead' }, 17));
    expect(activity(state.agents.lead!, Date.parse(at(30)))).toBe('done in 17 s');
  });
});

describe('a scrolled pane', () => {
  const notice = (text: string): TranscriptItem => ({ kind: 'notice', id: itemId(), text, tone: 'info' });

  it('stays on the rows it shows while the agent writes below, and counts the rows around it exactly', () => {
    const items = Array.from({ length: 30 }, (_, i) => notice(`row ${i}`));
    const geometry = { width: 40, rows: 5, expanded: false };
    const anchor = rowAnchor(items, rowIndex(items, 40, false), 20)!;
    const before = paneWindow(items, geometry, anchor);
    expect(before).toMatchObject({ top: 20, above: 20, total: 59, below: 34 });
    const more = [...items, ...Array.from({ length: 10 }, (_, i) => notice(`new ${i}`))];
    const after = paneWindow(more, geometry, anchor);
    expect(after.lines).toEqual(before.lines);
    expect(after).toMatchObject({ top: 20, above: 20, below: 54 });
    // Anchored past the last page (the transcript got shorter), it shows the last page.
    expect(paneWindow(items.slice(0, 12), geometry, anchor)).toMatchObject({ top: 18, below: 0 });
  });
});

describe('human words', () => {
  it('says protocol messages as people would, and drops the instructions meant for the model', () => {
    expect(
      describeInboxMessage(
        {
          from: 'lead',
          type: 'shutdown_request',
          content: 'Please shut down (the work is done). Answer with shutdown_response {request_id: "shutdown_1", approve}.',
        },
        'alice',
      ),
    ).toEqual({
      from: 'lead',
      text: 'lead asked alice to shut down (the work is done)',
      protocol: true,
    });
    expect(describeInboxMessage({ from: 'alice', type: 'shutdown_response', content: 'alice is shutting down.', approve: true }, 'lead').text).toBe(
      'alice agreed to shut down',
    );
    expect(
      describeInboxMessage({ from: 'bob', type: 'shutdown_response', content: 'bob declined', approve: false, reason: 'tests are red' }, 'lead').text,
    ).toBe('bob declined to shut down: tests are red');
    expect(describeInboxMessage({ from: 'user', type: 'message', content: 'hi' }, 'alice')).toMatchObject({ from: 'you', text: 'hi' });
    expect(describeToolCall('shutdown_request', 'alice').name).toBe('asked alice to shut down');
    expect(describeToolCall('shutdown_response', 'shutdown_1 approve').name).toBe('agreed to shut down');
  });

  it('never shows an internal block as a prompt, and says who spawned an agent', () => {
    const resumed =
      "<identity>You are 'alice', role: coder, team: t. huddle was restarted and you were resumed with your conversation so far. The open tasks you own:</identity>\nTask #1: Write the parser\n\nContinue from where you left off.";
    expect(describePrompt(resumed, 'system', undefined)).toEqual({
      kind: 'internal',
      text: 'resumed after huddle restarted, with its conversation so far; its open tasks: #1 Write the parser',
    });
    expect(describePrompt('Write the docs', 'spawn', 'user')).toEqual({ kind: 'prompt', text: 'Write the docs', label: 'spawned by you' });
    // A claimed task's fresh context (its assignment and memory, for the model) reads as one line.
    const claimed = freshTaskTurn(
      'You are alice, the coder.',
      [rememberWork('#1 Write greet.js', []), rememberWork('#2 Write its tests', [])],
      '<auto-claimed>Task #3: Write README.md</auto-claimed>',
    );
    expect(describePrompt(claimed, 'auto_claim', undefined)).toEqual({
      kind: 'claim',
      text: 'Task #3: Write README.md\n↺ a fresh context for this task, with its memory of 2 earlier tasks',
    });
    expect(describePrompt(freshTaskTurn('', [], 'Task #4: Lint'), 'auto_claim', undefined).text).toBe('Task #4: Lint\n↺ a fresh context for this task');
    expect(describePrompt('Write the docs', 'spawn', undefined)).toMatchObject({ label: 'spawned by the lead' });
  });
});

describe('a question in the pane', () => {
  const request = (patch: Partial<ApprovalView> = {}): ApprovalView => ({
    id: 'a1',
    agent: 'alice',
    tool: 'bash',
    summary: 'npm install left-pad',
    reason: "'npm install left-pad' is not on the allow-list",
    prefixes: ['npm install'],
    ...patch,
  });
  const plain = (lines: string[]) => lines.map((line) => stripVTControlCharacters(line));

  it('offers yes, yes-from-now-on (when the call can be allow-listed) and no-with-a-reason, by what is asked', () => {
    expect(askChoices(request()).map((c) => `${c.key} ${c.label}`)).toEqual([
      '1 yes',
      "2 yes, and don't ask again for 'npm install'",
      '3 no, and tell alice why',
    ]);
    // Numbered without gaps: no is 2 where nothing can be allow-listed.
    expect(askChoices(request({ tool: 'write_file', summary: '.env', prefixes: [] })).map((c) => `${c.key} ${c.answer}`)).toEqual(['1 approve', '2 deny']);
    expect(askChoices(request({ tool: 'failed', summary: 'alice failed: boom' })).map((c) => `${c.key} ${c.label}`)).toEqual(['1 restart alice', '2 dismiss']);
    expect(askChoices(request({ tool: 'budget' })).find((c) => c.key === '2')).toMatchObject({ label: 'stop alice' });
    expect(askChoices(request({ tool: 'plan' })).find((c) => c.key === '2')).toMatchObject({ withReason: true });
  });

  it('shows the command, why it asks, an edit as a diff, and the choices, within the rows it gets', () => {
    const lines = plain(
      askLines(request({ tool: 'edit_file', summary: 'a.txt', prefixes: [], detail: '--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+uno' }), 1, 60, 12, false),
    );
    expect(lines[0]).toBe('╭ alice wants to use edit_file a.txt');
    expect(lines).toContain('│ -one');
    expect(lines).toContain('│ +uno');
    expect(lines.at(-1)).toBe('╰ 1 yes   2 no, and tell alice why');
    expect(plain(askLines(request(), 2, 60, 3, false))).toHaveLength(3); // a long diff or reason is cut to fit
    expect(plain(askLines(request(), 1, 60, 6, true)).at(-1)).toMatch(/^╰ why not\?/);
  });

  it("says the person's own shutdown request as theirs", () => {
    expect(describeInboxMessage({ from: 'user', type: 'shutdown_request', content: 'Please shut down (the person asked for it).' }, 'carol').text).toBe(
      'you asked carol to shut down',
    );
  });
});
