// Context management: old tool results cut to stubs, then the transcript summarised by the model
// and replaced by the identity block, the agent's open tasks and the summary (docs/contract.md#injected-turns);
// /compact on any agent; a failed summary changes nothing. Real team, real tools, the model faked
// at the HTTP boundary (its `usage` says how full the context is).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { trimOldToolResults, restoreToolResults, type ToolResultContent } from '../../../src/agents/loop/context-trim.js';
import { renderTranscript, splitTail } from '../../../src/agents/loop/compaction.js';
import { ConfigError, resolveConfig } from '../../../src/runtime/config.js';
import { contextWindowFor } from '../../../src/runtime/model/context-window.js';
import type { HuddleEvent } from '../../../src/runtime/events/events.js';
import { runCommandLine } from '../../../src/tui/commands/dispatch.js';
import { ConsoleController } from '../../../src/tui/console-controller.js';
import { EventBridge, applyEvent } from '../../../src/tui/state/event-bridge.js';
import { createConsoleStore, emptyAgent } from '../../../src/tui/state/console-store.js';
import { reply, replyText, toolUse, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { openTeamHarness, readEventLogs, turnsOf, type TeamHarness } from '../../helpers/team-harness.js';

const STUB_RE = /^\[tool result of read_file cut to save context: [\d,]+ chars; re-run the tool if needed\]$/;

let h: TeamHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Block = { type: string; text?: string; id?: string; name?: string; tool_use_id?: string; content?: unknown };

function blocks(turn: { content: string | Block[] } | undefined): Block[] {
  if (!turn) return [];
  return typeof turn.content === 'string' ? [{ type: 'text', text: turn.content }] : turn.content;
}

/** A summary request: huddle sends it without tools, the transcript as text. */
const isSummaryRequest = (request: RecordedRequest) => !request.body?.tools;

/** Every tool_use of an assistant turn has its tool_result in the very next (user) turn, and roles alternate. */
function expectPairsIntact(turns: Array<{ role: string; content: string | Block[] }>): void {
  turns.forEach((turn, index) => {
    if (index > 0) expect(turn.role).not.toBe(turns[index - 1]!.role);
    if (turn.role !== 'assistant') return;
    const uses = blocks(turn)
      .filter((b) => b.type === 'tool_use')
      .map((b) => b.id);
    const answered = blocks(turns[index + 1])
      .filter((b) => b.type === 'tool_result')
      .map((b) => b.tool_use_id);
    for (const id of uses) expect(answered).toContain(id);
  });
}

/** `lines` lines of ~100 characters, each saying which file and line it is. */
function bigFile(root: string, name: string, lines = 40): string {
  const text = Array.from({ length: lines }, (_, i) => `${name} line ${i + 1} `.padEnd(100, 'x')).join('\n');
  writeFileSync(path.join(root, name), `${text}\n`);
  return text;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
}

function transcripts(root: string, agent: string): string[] {
  const dir = path.join(root, '.team', 'logs', agent);
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^transcript-.*\.json$/.test(f)) : [];
}

function withUsage(scripted: Scripted, inputTokens: number): Scripted {
  return { ...(scripted as Extract<Scripted, { kind: 'message' }>), usage: { input_tokens: inputTokens, output_tokens: 50 } };
}

describe('compaction in a long session', () => {
  it('cuts old tool results first, then summarises; the next request starts with the identity block and the owned tasks', async () => {
    h = await openTeamHarness();
    const { root, fake, team } = h;
    const files = [1, 2, 3, 4, 5].map((n) => bigFile(root, `big-${n}.txt`));
    const board = team.ctx.board;
    const mine = await board.create({ subject: 'Parse the config file' });
    await board.claim(mine.id, 'alice');
    const done = await board.create({ subject: 'Already finished work' });
    await board.claim(done.id, 'alice');
    await board.update(done.id, { status: 'completed' }, 'alice');
    const theirs = await board.create({ subject: 'Someone else’s task' });
    await board.claim(theirs.id, 'bob');

    const SUMMARY = 'SUMMARY: read big-1.txt … big-5.txt for task #1; next: report to lead.';
    // Tokens the fake says each response's context held: past 60 % (120k) after call 5, past 80 % (160k) after call 6.
    const usage = [20_000, 40_000, 60_000, 80_000, 130_000, 170_000, 9_000];
    let step = 0;
    fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      if (isSummaryRequest(request)) return replyText(SUMMARY);
      step += 1;
      const tokens = usage[step - 1] ?? 1_000;
      if (step <= 5) return withUsage(reply(toolUse('read_file', { path: `big-${step}.txt` })), tokens);
      if (step === 6) return withUsage(reply(toolUse('bash', { command: 'echo checked' })), tokens);
      return withUsage(replyText('Back on task #1.'), tokens);
    });

    await h.spawn('alice', 'Read the five big files, then report.');
    await h.waitFor('the request after the compaction', () => h!.requestsOf('alice').filter((r) => !isSummaryRequest(r)).length >= 7);
    const main = h.requestsOf('alice').filter((r) => !isSummaryRequest(r));
    const summaries = h.requestsOf('alice').filter(isSummaryRequest);
    expect(summaries).toHaveLength(1);

    // Request 6 went out after the trim (context at 130k > 60 %): results of the turns older than
    // the last three are stubs, the rest are whole, and every tool_use still has its result.
    const sixth = turnsOf(main[5]!);
    expectPairsIntact(sixth);
    const readResults = sixth
      .flatMap((turn) => blocks(turn))
      .filter((b) => b.type === 'tool_result')
      .map((b) => resultText(b.content));
    expect(readResults).toHaveLength(5);
    expect(readResults[0]).toMatch(STUB_RE);
    expect(readResults[1]).toMatch(STUB_RE);
    for (const [index, text] of readResults.slice(2).entries()) expect(text).toContain(files[index + 2]!.split('\n')[7]);

    // The trim came first, then the summary (of the whole transcript, as text, without tools).
    const compactions = h.events.filter((e) => e.agent === 'alice' && e.type === 'compaction');
    expect(compactions.map((e) => e.kind)).toEqual(['trim', 'trim', 'summary']);
    const summaryBody = summaries[0]!.body;
    expect(summaryBody.tools).toBeUndefined();
    expect(JSON.stringify(summaryBody.system)).toContain("You are 'alice'");
    expect(summaryBody.messages).toHaveLength(1);
    const summaryPrompt = String(summaryBody.messages[0].content);
    expect(summaryPrompt).toContain('<transcript>');
    expect(summaryPrompt).toContain('[tool result: bash]\nchecked');
    expect(fake.requests.indexOf(summaries[0]!)).toBeGreaterThan(fake.requests.indexOf(main[5]!));
    expect(fake.requests.indexOf(summaries[0]!)).toBeLessThan(fake.requests.indexOf(main[6]!));

    // The next request: one user turn, starting with the identity block, then the open tasks alice owns, then the summary.
    const after = turnsOf(main[6]!);
    expect(after).toHaveLength(1);
    expect(after[0]!.role).toBe('user');
    const first = blocks(after[0])[0]!.text!;
    expect(first.startsWith(`<identity>You are 'alice', role: coder, team: ${team.ctx.teamName}. `)).toBe(true);
    const lines = first.split('\n');
    const identityEnd = lines.findIndex((line) => line.endsWith('</identity>'));
    expect(identityEnd).toBe(0);
    expect(lines[1]).toBe(`Task #${mine.id}: Parse the config file`);
    expect(first).not.toContain(`Task #${done.id}:`);
    expect(first).not.toContain(`Task #${theirs.id}:`);
    expect(first).toContain(`<summary>\n${SUMMARY}\n</summary>`);

    // The full transcript stays on disk: the JSON holds every old message, cut results restored.
    const event = compactions.at(-1)!;
    expect(event).toMatchObject({ before_tokens: 170_050, summary_chars: SUMMARY.length, trigger: 'auto' });
    expect(Number(event.after_tokens)).toBeLessThan(20_000);
    const file = path.join(root, String(event.file));
    expect(path.basename(file)).toMatch(/^transcript-.*\.json$/);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { agent: string; messages: MessageParam[] };
    expect(saved.agent).toBe('alice');
    expect(saved.messages).toHaveLength(sixth.length + 2);
    expect(blocks(saved.messages[0] as never)[0]!.text).toBe('Read the five big files, then report.');
    const savedResults = saved.messages
      .flatMap((m) => blocks(m as never))
      .filter((b) => b.type === 'tool_result')
      .map((b) => resultText(b.content));
    for (const [index, text] of files.entries()) expect(savedResults[index]).toContain(text.split('\n')[39]);
    expect(savedResults[5]).toContain('checked');
    expect(first).toContain(String(event.file));

    // …and the event log on disk has the compaction event.
    await h.waitForStatus('alice', 'idle');
    const logged = readEventLogs(root).filter((e) => e.agent === 'alice' && e.type === 'compaction' && e.kind === 'summary');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ before_tokens: 170_050, file: event.file, summary_chars: SUMMARY.length, summary: SUMMARY });
  });

  it('leaves the transcript untouched and reports an error when the summary call fails', async () => {
    h = await openTeamHarness();
    const { root, fake } = h;
    bigFile(root, 'big.txt');
    let step = 0;
    fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      if (isSummaryRequest(request)) {
        return { kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } } };
      }
      step += 1;
      if (step === 1) return withUsage(reply(toolUse('read_file', { path: 'big.txt' })), 175_000);
      return replyText('Done reading.');
    });
    const alice = await h.spawn('alice', 'Read big.txt.');
    await h.waitForStatus('alice', 'idle');

    const main = h.requestsOf('alice').filter((r) => !isSummaryRequest(r));
    expect(h.requestsOf('alice').filter(isSummaryRequest)).toHaveLength(1);
    expect(main).toHaveLength(2);
    // The call after the failed summary carried the whole conversation, unchanged.
    const second = turnsOf(main[1]!);
    expect(second).toHaveLength(3);
    expect(blocks(second[0])[0]!.text).toBe('Read big.txt.');
    expect(resultText(blocks(second[2]).find((b) => b.type === 'tool_result')!.content)).toContain('big.txt line 40');
    expect(alice.loop.messages).toHaveLength(4);
    const error = h.events.find((e) => e.agent === 'alice' && e.type === 'error');
    expect(error).toMatchObject({ fatal: false, compaction: true });
    expect(String(error!.message)).toMatch(/^compaction failed: .*prompt is too long.*; the context was left as it was$/);
    expect(h.events.some((e) => e.agent === 'alice' && e.type === 'compaction')).toBe(false);
    expect(transcripts(root, 'alice')).toEqual([]);
    expect(h.team.ctx.roster.get('alice')?.status).toBe('idle');
  });
});

describe('/compact', () => {
  it('compacts a teammate that is not in view, with a focus, and its next request starts with the identity block', async () => {
    h = await openTeamHarness();
    const { fake, team, hub } = h;
    const task = await team.ctx.board.create({ subject: 'Write the parser' });
    await team.ctx.board.claim(task.id, 'alice');
    fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      if (isSummaryRequest(request)) return replyText('SUMMARY: alice is writing the parser.');
      return replyText('ok');
    });
    await h.spawn('alice', 'Write the parser.');
    await h.waitForStatus('alice', 'idle');

    const store = createConsoleStore({ model: 'claude-x', endpoint: '' });
    const bridge = new EventBridge(hub, store);
    const controller = new ConsoleController(h.session, store, () => undefined);
    try {
      store.setState((s) => ({ agents: { ...s.agents, alice: emptyAgent('alice', 'coder') }, order: ['lead', 'alice'], focus: 'lead' }));
      const result = await runCommandLine('/compact alice keep the parser decisions', { controller, state: store.getState(), focus: 'lead' });
      expect(result).toMatchObject({
        kind: 'ok',
        message: expect.stringMatching(/^compacted alice: .* → .* tokens \(transcript: \.team\/logs\/alice\/transcript-.*\.json\)$/),
      });

      const summary = h.requestsOf('alice').find(isSummaryRequest)!;
      expect(String(summary.body.messages[0].content)).toContain('focus the summary on: keep the parser decisions');
      const first = blocks(team.teammates.get('alice')!.loop.messages[0] as never)[0]!.text!;
      expect(first).toMatch(
        /^<identity>You are 'alice', role: coder, team: .*<\/identity>\nTask #1: Write the parser\n\n<summary>\nSUMMARY: alice is writing the parser\.\n<\/summary>$/,
      );

      // The pane of alice (not in view) shows it, and gets marked unread.
      bridge.flush();
      const view = store.getState().agents.alice!;
      expect(view.items.some((item) => item.kind === 'notice' && /^context compacted: .* → .* tokens/.test(item.text))).toBe(true);
      expect(view.unread).toBe(true);

      // Her next model call starts from the rebuilt context, with the new message after it.
      await controller.sendTo('alice', 'What is next?');
      await h.waitFor('alice’s next request', () => h!.requestsOf('alice').filter((r) => !isSummaryRequest(r)).length >= 2);
      const next = turnsOf(h.requestsOf('alice').filter((r) => !isSummaryRequest(r))[1]!);
      expect(next).toHaveLength(1);
      const texts = blocks(next[0]).map((b) => b.text ?? '');
      expect(texts[0]!.startsWith("<identity>You are 'alice', role: coder")).toBe(true);
      expect(texts.at(-1)).toContain('What is next?');

      // Bad input: a clear answer, never a throw.
      const empty = await runCommandLine('/compact', { controller, state: store.getState(), focus: 'lead' });
      expect(empty).toEqual({ kind: 'error', message: "nothing to compact: lead's context is empty" });
      await expect(controller.compact('nobody')).rejects.toThrow("no agent named 'nobody'");
    } finally {
      controller.close();
      bridge.close();
    }
  });

  it('mid-turn, waits for the next model call and never disturbs the running turn', async () => {
    h = await openTeamHarness();
    const { root, fake, team } = h;
    let step = 0;
    fake.respond((request) => {
      if (request.agent !== 'lead') return undefined;
      if (isSummaryRequest(request)) return replyText('SUMMARY: the gate opened.');
      step += 1;
      if (step === 1) return reply(toolUse('bash', { command: 'while [ ! -f gate ]; do sleep 0.02; done; echo gate opened' }));
      return replyText('All done.');
    });
    const store = createConsoleStore({ model: 'claude-x', endpoint: '' });
    const controller = new ConsoleController(h.session, store, () => undefined);
    try {
      team.start();
      team.lead.prompt('Wait for the gate.');
      await h.waitForEvent('the bash call to start', (e) => e.agent === 'lead' && e.type === 'tool_call');
      const before = JSON.stringify(team.lead.loop.messages);

      const answer = await controller.compact('lead', 'the gate');
      expect(answer).toBe('lead is in a turn: its context will be compacted before its next model call');
      expect(fake.requests).toHaveLength(1);
      expect(JSON.stringify(team.lead.loop.messages)).toBe(before);

      writeFileSync(path.join(root, 'gate'), '');
      await h.waitForEvent('the turn to end', (e) => e.agent === 'lead' && e.type === 'text' && e.text === 'All done.');
      const requests = h.requestsOf('lead');
      expect(requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn', 'summary', 'turn']);
      // The summary covered the finished tool call; the turn went on from the rebuilt context.
      expect(String(requests[1]!.body.messages[0].content)).toContain('[tool result: bash]\ngate opened');
      expect(String(requests[1]!.body.messages[0].content)).toContain('focus the summary on: the gate');
      const last = turnsOf(requests[2]!);
      expect(last).toHaveLength(1);
      const text = blocks(last[0])[0]!.text!;
      expect(text.startsWith(`<identity>You are 'lead', role: lead, team: ${team.ctx.teamName}. `)).toBe(true);
      expect(text).toContain('(you own no open tasks)');
      expect(text.endsWith('</summary>\n\nContinue from where you left off.')).toBe(true);
      const event = h.events.find((e) => e.agent === 'lead' && e.type === 'compaction')!;
      expect(event).toMatchObject({ kind: 'summary', trigger: 'manual', focus: 'the gate' });
      expect(transcripts(root, 'lead')).toHaveLength(1);
    } finally {
      controller.close();
    }
  });
});

describe('context trimming', () => {
  const use = (id: string, name = 'read_file') => ({ type: 'tool_use' as const, id, name, input: {} });
  const result = (id: string, content: ToolResultContent) => ({ type: 'tool_result' as const, tool_use_id: id, content });

  it('cuts only large results older than the last N assistant turns, parallel calls included, and can restore them', () => {
    const big = 'y'.repeat(2_000);
    const messages: MessageParam[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [use('a'), use('b', 'grep')] },
      { role: 'user', content: [result('a', big), result('b', 'small')] },
      { role: 'assistant', content: [use('c')] },
      { role: 'user', content: [result('c', [{ type: 'text', text: big }])] },
      { role: 'assistant', content: [use('d')] },
      { role: 'user', content: [result('d', big), { type: 'text', text: '<inbox>…</inbox>' }] },
    ];
    const originals = new Map<string, ToolResultContent>();
    const first = trimOldToolResults(messages, 1, originals);
    expect(first).toEqual({ cut: 2, charsBefore: 4_000, charsAfter: expect.any(Number) });
    const flat = messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
    const content = (id: string) => (flat.find((b) => b.type === 'tool_result' && b.tool_use_id === id) as { content: unknown }).content;
    expect(content('a')).toBe('[tool result of read_file cut to save context: 2,000 chars; re-run the tool if needed]');
    expect(content('b')).toBe('small');
    expect(content('c')).toMatch(STUB_RE);
    expect(content('d')).toBe(big);
    expectPairsIntact(messages as never);
    // A second pass finds nothing new; the originals come back for the transcript file.
    expect(trimOldToolResults(messages, 1, originals).cut).toBe(0);
    const restored = restoreToolResults(messages, originals);
    expect(JSON.stringify(restored)).not.toContain('cut to save context');
    expect(JSON.stringify(messages)).toContain('cut to save context');
  });

  it('keeps unanswered input out of the summary and fits the transcript into a budget', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'start' },
      { role: 'assistant', content: [use('a')] },
      { role: 'user', content: [result('a', 'z'.repeat(50_000)), { type: 'text', text: 'new inbox' }] },
    ];
    const { summarised, kept } = splitTail(messages);
    expect(kept).toEqual([{ type: 'text', text: 'new inbox' }]);
    expect(JSON.stringify(summarised)).not.toContain('new inbox');
    const text = renderTranscript(summarised, 3_000);
    expect(text.length).toBeLessThanOrEqual(3_200);
    expect(text.startsWith('[user]\nstart')).toBe(true);
    expect(text).toContain('[tool result: read_file]');
  });
});

describe('settings and display', () => {
  it('reads HUDDLE_COMPACT_AT as a fraction or a percent, and refuses nonsense clearly', () => {
    const at = (value: string) => resolveConfig({ cwd: '/' }, { HUDDLE_COMPACT_AT: value }).compactAt;
    expect(at('0.7')).toBe(0.7);
    expect(at('70')).toBe(0.7);
    expect(at('70%')).toBe(0.7);
    expect(at('off')).toBe(0);
    expect(resolveConfig({ cwd: '/' }, {})).toMatchObject({ compactAt: 0.8, trimAt: 0.6, trimKeepTurns: 3 });
    expect(() => at('most')).toThrow(ConfigError);
    expect(() => at('150%')).toThrow(/HUDDLE_COMPACT_AT must be a share of the context window, as a fraction \(0\.8\) or a percent \(80%\)/);
  });

  it('knows 1M-token models and defaults to 200k', () => {
    expect(contextWindowFor('claude-sonnet-4-5[1m]')).toBe(1_000_000);
    expect(contextWindowFor('claude-sonnet-4-6')).toBe(200_000);
    expect(contextWindowFor(undefined)).toBe(200_000);
  });

  it('shows a compaction in the pane', () => {
    const state = createConsoleStore({ model: 'm', endpoint: '' }).getState();
    const event = {
      ts: new Date().toISOString(),
      agent: 'lead',
      type: 'compaction',
      kind: 'summary',
      before_tokens: 150_000,
      after_tokens: 8_000,
      file: '.team/logs/lead/transcript-x.json',
    } as HuddleEvent;
    const next = { ...state, ...applyEvent(state, event) };
    const items = next.agents.lead!.items;
    expect(items.at(-1)).toMatchObject({ kind: 'notice', text: 'context compacted: 150k → 8.0k tokens (full transcript: .team/logs/lead/transcript-x.json)' });
    expect(next.agents.lead!.contextTokens).toBe(8_000);
  });
});
