// Transcript replay (resume): messages rebuilt from an agent's logged events as AgentLoop built them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT, replayEvents, resumeTurn } from '../../../src/agents/loop/transcript-replay.js';
import type { LoggedEvent } from '../../../src/runtime/store/event-store.js';
import { readAgentEvents } from '../../../src/runtime/store/file/event-log.js';
import { formatInbox } from '../../../src/runtime/inbox.js';

const identity = { name: 'alice', role: 'coder', team: 'demo' };
const usage = (): LoggedEvent => ({ type: 'usage', input_tokens: 10, output_tokens: 5 });

describe('replayEvents', () => {
  it('rebuilds prompts, assistant turns and tool results, merging consecutive user texts like the loop', () => {
    const { messages } = replayEvents([
      { type: 'prompt', text: 'do it', source: 'spawn' },
      { type: 'prompt', text: '<inbox>\n{"id":"m1"}\n</inbox>', source: 'inbox' },
      usage(),
      { type: 'text', text: 'on it' },
      { type: 'tool_call', id: 't1', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_result', id: 't1', name: 'bash', ok: true, content: 'a.txt' },
      { type: 'tool_call', id: 't2', name: 'read_file', input: { path: 'x' } },
      { type: 'tool_result', id: 't2', name: 'read_file', ok: false, content: 'no such file' },
      { type: 'prompt', text: 'late input', source: 'inbox' },
      usage(),
      { type: 'text', text: 'done' },
    ]);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'do it' },
          { type: 'text', text: '<inbox>\n{"id":"m1"}\n</inbox>' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'on it' },
          { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 't2', name: 'read_file', input: { path: 'x' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'a.txt' },
          { type: 'tool_result', tool_use_id: 't2', content: 'no such file', is_error: true },
          { type: 'text', text: 'late input' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ]);
  });

  it('gives a tool call cut by the crash an error result: never a dangling tool_use', () => {
    const replayed = replayEvents([
      { type: 'prompt', text: 'go', source: 'user' },
      usage(),
      { type: 'tool_call', id: 't1', name: 'write_file', input: { path: 'a', content: 'x' } },
      { type: 'tool_result', id: 't1', ok: true, content: 'wrote a' },
      { type: 'tool_call', id: 't2', name: 'bash', input: { command: 'make' } },
    ]);
    expect(replayed.interruptedTools).toEqual(['t2']);
    const last = replayed.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'wrote a' },
      { type: 'tool_result', tool_use_id: 't2', content: INTERRUPTED_RESULT, is_error: true },
    ]);
    // Every tool_use of the rebuilt transcript has its result.
    const uses = replayed.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use');
    const results = replayed.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    expect(uses.length).toBe(results.length);
  });

  it('restarts from a compaction summary, keeping unanswered input and what came after it', () => {
    const { messages } = replayEvents(
      [
        { type: 'prompt', text: 'old request', source: 'user' },
        usage(),
        { type: 'text', text: 'old answer' },
        { type: 'prompt', text: 'not answered yet', source: 'inbox' },
        { type: 'usage', purpose: 'compaction', input_tokens: 1, output_tokens: 1 },
        { type: 'compaction', kind: 'trim', cut: 1 },
        { type: 'compaction', kind: 'summary', summary: 'We built X.' },
        { type: 'prompt', text: 'new request', source: 'user' },
      ],
      identity,
    );
    expect(messages).toHaveLength(1);
    const texts = (messages[0]!.content as Array<{ type: string; text: string }>).map((b) => b.text);
    expect(texts[0]).toContain("<identity>You are 'alice', role: coder, team: demo.");
    expect(texts[0]).toContain('<summary>\nWe built X.\n</summary>');
    expect(texts[0]).not.toContain('old request');
    // The input the model had not answered stays after the summary, as the Compactor keeps it.
    expect(texts.slice(1)).toEqual(['not answered yet', 'new request']);
  });

  it('keeps the partial text of an interrupted model call, as the loop does', () => {
    const { messages } = replayEvents([
      { type: 'prompt', text: 'go', source: 'user' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'error', message: 'interrupted', interrupted: true },
    ]);
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Hello' }] });
  });

  it('records the highest delivered offset and the messages whose inbox turn never reached the model', () => {
    const m = (id: string, content: string) => ({ id, type: 'message' as const, from: 'lead', to: 'alice', content, ts: '2026-11-27T01:52:29.961Z' });
    const [a, b] = [m('msg_7f3a9c', 'plan approved'), m('msg_2b81de', 'take task 2')];
    const replayed = replayEvents([
      { type: 'message_delivered', ids: [a.id], messages: [a], next_offset: 120 },
      // The turn the model read, as the loop logs it: formatInbox leaves the ids out.
      { type: 'prompt', text: formatInbox([a]), source: 'inbox' },
      { type: 'message_delivered', ids: [b.id], messages: [b], next_offset: 240 },
    ]);
    expect(replayed.deliveredOffset).toBe(240);
    expect([...replayed.deliveredIds]).toEqual([a.id, b.id]);
    // Only b is put before the model again on resume: a reached it already.
    expect(replayed.undelivered.map((x) => x.id)).toEqual([b.id]);
  });
});

describe('replaying the file event log', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads every session file in order and skips a line cut by the kill', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'huddle-replay-'));
    const agentDir = path.join(dir, 'alice');
    mkdirSync(agentDir, { recursive: true });
    const line = (e: object) => `${JSON.stringify({ ts: '', agent: 'alice', ...e })}\n`;
    writeFileSync(path.join(agentDir, 'session-2026-01-02T00-00-00-000Z.ndjson'), line({ type: 'prompt', text: 'second', source: 'user' }) + '{"type":"tex');
    writeFileSync(
      path.join(agentDir, 'session-2026-01-01T00-00-00-000Z.ndjson'),
      line({ type: 'prompt', text: 'first', source: 'user' }) + line({ type: 'usage' }) + line({ type: 'text', text: 'ok' }),
    );
    const { messages, events } = replayEvents(readAgentEvents(dir, 'alice'));
    expect(events).toBe(4);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
    ]);
  });

  it('the resume turn carries the identity block and the owned tasks', () => {
    const turn = resumeTurn(identity, [{ id: 3, subject: 'Write the farewell' }], { interrupted: 1 });
    expect(turn).toMatch(/^<identity>You are 'alice', role: coder, team: demo\. huddle was restarted/);
    expect(turn).toContain('\nTask #3: Write the farewell');
    expect(turn).toContain('1 tool call(s) were cut by the crash');
  });
});
