// The console's state logic without a screen: events into the store, the input buffer, history.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import { EventBridge, applyEvent } from '../../../src/tui/state/event-bridge.js';
import * as edit from '../../../src/tui/state/input-buffer.js';
import { InputHistory } from '../../../src/tui/state/input-history.js';
import { visibleLines } from '../../../src/tui/render/transcript-lines.js';

const plain = (lines: string[]) => lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));

describe('event bridge', () => {
  it('batches a burst of deltas into one store update and one streaming item', () => {
    const hub = new EventHub();
    const store = createConsoleStore({ model: 'm', endpoint: '' });
    const bridge = new EventBridge(hub, store);
    let updates = 0;
    store.subscribe(() => updates++);
    for (let i = 0; i < 100; i++) hub.emit('lead', 'text_delta', { text: 'ab' });
    expect(store.getState().agents.lead!.items).toHaveLength(0); // nothing applied before the flush
    bridge.flush();
    expect(updates).toBe(1);
    const items = store.getState().agents.lead!.items;
    expect(items).toEqual([expect.objectContaining({ kind: 'assistant', text: 'ab'.repeat(100), streaming: true })]);
    hub.emit('lead', 'text', { text: 'final text' });
    bridge.close();
    expect(store.getState().agents.lead!.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'final text', streaming: false });
  });

  it('drops the partial text of a retried attempt and says why', () => {
    const store = createConsoleStore({ model: 'm', endpoint: '' });
    let state = store.getState();
    const ev = (type: string, fields: object) => ({ ts: new Date().toISOString(), agent: 'lead', type, ...fields }) as never;
    state = { ...state, ...applyEvent(state, ev('text_delta', { text: 'half an ans' })) };
    state = { ...state, ...applyEvent(state, ev('retry', { reason: 'overloaded (529)', delayMs: 1500, attempt: 1 })) };
    const items = state.agents.lead!.items;
    expect(items.some((i) => i.kind === 'assistant')).toBe(false);
    expect(items.at(-1)).toMatchObject({ kind: 'notice', tone: 'warn', text: 'overloaded (529); retrying in 1.5 s' });
  });

  it('pairs tool results with their calls, and marks unread output in other panes', () => {
    const store = createConsoleStore({ model: 'm', endpoint: '' });
    let state = store.getState();
    const ev = (agent: string, type: string, fields: object) => ({ ts: new Date().toISOString(), agent, type, ...fields }) as never;
    state = { ...state, ...applyEvent(state, ev('alice', 'status', { status: 'working', role: 'coder' })) };
    state = { ...state, ...applyEvent(state, ev('alice', 'tool_call', { id: 't1', name: 'bash', summary: 'ls' })) };
    state = { ...state, ...applyEvent(state, ev('alice', 'tool_result', { id: 't1', name: 'bash', ok: false, content: 'boom', duration_ms: 12 })) };
    const alice = state.agents.alice!;
    expect(state.order).toEqual(['lead', 'alice']);
    expect(alice.role).toBe('coder');
    expect(alice.items).toEqual([expect.objectContaining({ kind: 'tool', state: 'error', result: 'boom', durationMs: 12 })]);
    expect(alice.unread).toBe(true);
    expect(state.agents.lead!.unread).toBe(false);
  });
});

describe('transcript lines', () => {
  it('shows only the rows that fit, from the bottom, and scrolls up', () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ kind: 'notice' as const, id: i, text: `line ${i}`, tone: 'info' as const }));
    const bottom = plain(visibleLines(items, 40, 5, 0, false).lines);
    expect(bottom.at(-1)).toContain('line 49');
    expect(bottom).toHaveLength(5);
    const up = plain(visibleLines(items, 40, 5, 10, false).lines);
    expect(up.at(-1)).toContain('line 44');
  });

  it('collapses a tool call to one line and expands it to its result', () => {
    const tool = {
      kind: 'tool' as const,
      id: 1,
      toolUseId: 'x',
      name: 'bash',
      summary: 'npm test',
      state: 'ok' as const,
      durationMs: 1200,
      result: 'all good\n[exit code 0]',
    };
    const collapsed = plain(visibleLines([tool], 60, 10, 0, false).lines);
    // A command's output shows by default (its first lines), without the exit code the ✓ says.
    expect(collapsed).toEqual([expect.stringMatching(/⏺ bash npm test\s+✓ 1\.2 s/), '    all good']);
    const expanded = plain(visibleLines([tool], 60, 10, 0, true).lines);
    expect(expanded.slice(1)).toEqual(['    all good', '    [exit code 0]']);
  });
});

describe('input buffer', () => {
  it('edits at the cursor, including wide characters', () => {
    let b = edit.insert(edit.EMPTY_INPUT, 'héllo 👋');
    b = edit.backspace(b);
    expect(b.text).toBe('héllo ');
    b = edit.home(b);
    b = edit.insert(b, '> ');
    expect(b).toEqual({ text: '> héllo ', cursor: 2 });
    b = edit.deleteWordBack(edit.end(b));
    expect(b.text).toBe('> ');
    expect(edit.insert(edit.EMPTY_INPUT, 'a\r\nb\rc').text).toBe('a\nb\nc');
  });
});

describe('input history', () => {
  it('walks back and forth, keeps the draft, and persists per workspace', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-history-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const history = InputHistory.forTeamDir(dir);
    history.add('first');
    history.add('second');
    expect(history.previous('draft')).toBe('second');
    expect(history.previous('second')).toBe('first');
    expect(history.previous('first')).toBeUndefined();
    expect(history.next()).toBe('second');
    expect(history.next()).toBe('draft');
    expect(JSON.parse(readFileSync(path.join(dir, 'input-history.json'), 'utf8'))).toEqual(['first', 'second']);
    expect(InputHistory.forTeamDir(dir).entries).toEqual(['first', 'second']);
  });
});
