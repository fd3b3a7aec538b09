// The turn loop with real tools and the real ModelClient, against the fake Messages API, in a
// temporary workspace: tool calls and their results, order, errors, limits, interrupts, events.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AgentLoop } from '../../../src/agents/loop/agent-loop.js';
import { agentEmitter, EventHub, type EventRecord as HuddleEvent } from '../../../src/runtime/events/events.js';
import { ModelClient } from '../../../src/runtime/model/model-client.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { defineTool, type Tool } from '../../../src/runtime/tools/types.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { type FakeApi, overloaded, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, type Workspace as TempDir } from '../../helpers/run-cli.js';

// Event types this test may see (docs/contract.md#events lists them all).
const SPEC_EVENT_TYPES = [
  'text_delta',
  'text',
  'tool_call',
  'tool_result',
  'status',
  'message_sent',
  'message_delivered',
  'task',
  'usage',
  'compaction',
  'error',
  'done',
  'retry',
  'warning',
  'prompt',
];

let fake: FakeApi;
let temp: TempDir;
let ws: string;
let hub: EventHub;
let events: HuddleEvent[];

beforeEach(async () => {
  fake = await startFakeApi();
  temp = makeWorkspace('huddle-loop-');
  // The workspace is a subdirectory, so that "outside" can be a sibling inside the temp dir.
  ws = path.join(temp.dir, 'ws');
  mkdirSync(ws);
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
});
afterEach(async () => {
  await fake.close();
  temp.cleanup();
});

function makeLoop(options: { maxTurns?: number; tools?: Tool[] } = {}): AgentLoop {
  return new AgentLoop({
    name: 'lead',
    model: 'claude-sonnet-4-6',
    system: "You are 'lead', role: lead, team: test.",
    tools: new ToolRegistry([...coreTools(), ...(options.tools ?? [])]),
    backend: new ModelClient({ apiKey: 'sk-test-key-1234567890', baseURL: fake.url, maxRetries: 3, retryBaseMs: 1, timeoutMs: 10_000 }),
    events: agentEmitter(hub, 'lead'),
    workspace: new Workspace(ws),
    maxTokens: 1024,
    maxTurns: options.maxTurns ?? 10,
  });
}

interface ToolResultParam {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** The tool results in the last message of a recorded request (the user turn that answers the tools). */
function lastToolResults(requestIndex: number): ToolResultParam[] {
  const messages = fake.requests[requestIndex]!.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  expect(last.role).toBe('user');
  return (last.content as Array<{ type: string }>).filter((b): b is ToolResultParam => b.type === 'tool_result');
}

function toolResultsOf(message: MessageParam): ToolResultParam[] {
  if (typeof message.content === 'string') return [];
  return message.content.filter((b) => b.type === 'tool_result') as unknown as ToolResultParam[];
}

/**
 * Every tool_use in an assistant message is answered, in order, by a tool_result in the very
 * next (user) message, and roles alternate.
 */
function expectConsistentTranscript(messages: MessageParam[]): void {
  expect(messages[0]?.role).toBe('user');
  messages.forEach((message, i) => {
    if (i > 0) expect(message.role).not.toBe(messages[i - 1]!.role);
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    const uses = message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (uses.length === 0) return;
    const next = messages[i + 1];
    expect(next, `tool_use ${uses.join(', ')} has no tool_result`).toBeDefined();
    expect(next!.role).toBe('user');
    expect(toolResultsOf(next!).map((r) => r.tool_use_id)).toEqual(uses);
  });
}

function ofType(type: string): HuddleEvent[] {
  return events.filter((e) => e.type === type);
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('AgentLoop: tools', () => {
  it('writes, edits and runs a file; each tool result goes back in the next request', async () => {
    fake.enqueue(
      reply(text('Writing the file.'), toolUse('write_file', { path: 'notes/hello.txt', content: 'hello world\nsecond line\n' }, 'toolu_w')),
      reply(toolUse('edit_file', { path: 'notes/hello.txt', old_text: 'world', new_text: 'huddle' }, 'toolu_e')),
      reply(toolUse('bash', { command: 'cat notes/hello.txt && echo "lines: $(wc -l < notes/hello.txt)"' }, 'toolu_b')),
      replyText('All done.'),
    );
    const loop = makeLoop();
    const outcome = await loop.runTurn('make a file');

    expect(outcome).toEqual({ kind: 'end_turn', text: 'All done.' });
    expect(readFileSync(path.join(ws, 'notes/hello.txt'), 'utf8')).toBe('hello huddle\nsecond line\n');
    expect(fake.requests).toHaveLength(4);
    expect(fake.unscripted).toHaveLength(0);

    const write = lastToolResults(1);
    expect(write).toHaveLength(1);
    expect(write[0]!.tool_use_id).toBe('toolu_w');
    expect(write[0]!.is_error).toBeUndefined();

    const edit = lastToolResults(2);
    expect(edit.map((r) => r.tool_use_id)).toEqual(['toolu_e']);
    expect(edit[0]!.is_error).toBeUndefined();

    const run = lastToolResults(3);
    expect(run.map((r) => r.tool_use_id)).toEqual(['toolu_b']);
    expect(run[0]!.is_error).toBeUndefined();
    expect(run[0]!.content).toContain('hello huddle');
    expect(run[0]!.content).toContain('lines: 2');
    expect(run[0]!.content).not.toContain('[exit code');

    // The request also carried the assistant's tool_use before each result.
    const sent = fake.requests[3]!.body.messages as MessageParam[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expectConsistentTranscript(sent);
    expectConsistentTranscript(loop.messages);
    expect(loop.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'All done.' }] });
    expect(loop.totals.modelCalls).toBe(4);
  });

  it('runs the tool calls of one response in the order given', async () => {
    fake.enqueue(
      reply(
        toolUse('write_file', { path: 'order.txt', content: 'first\n' }, 'toolu_1'),
        toolUse('bash', { command: 'echo second >> order.txt' }, 'toolu_2'),
        toolUse('edit_file', { path: 'order.txt', old_text: 'second', new_text: 'third' }, 'toolu_3'),
        toolUse('read_file', { path: 'order.txt' }, 'toolu_4'),
      ),
      replyText('ok'),
    );
    const outcome = await makeLoop().runTurn('go');

    expect(outcome.kind).toBe('end_turn');
    expect(readFileSync(path.join(ws, 'order.txt'), 'utf8')).toBe('first\nthird\n');
    const results = lastToolResults(1);
    expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']);
    expect(results.every((r) => r.is_error === undefined)).toBe(true);
    expect(results[3]!.content).toMatch(/1\tfirst\n\s*2\tthird/);
    expect(ofType('tool_call').map((e) => e.id)).toEqual(['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']);
    expect(ofType('tool_result').map((e) => e.id)).toEqual(['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']);
  });

  it('lets every call of a response start its setup before the first runs (Tool.prepare), with the context it will run in', async () => {
    const log: string[] = [];
    const recording = (name: string, prepare: (agent: string) => void): Tool =>
      defineTool({
        name,
        description: `records when it is prepared and run`,
        effects: ['read'],
        input: z.object({ n: z.number() }),
        prepare: (input, context) => {
          log.push(`prepare ${name} ${input.n} for ${context.agent}`);
          prepare(context.agent);
        },
        run: async (input) => {
          log.push(`run ${name} ${input.n}`);
          return 'done';
        },
      });
    const tools = [
      recording('first', () => undefined),
      // A prepare that throws is a head start lost, not a failed call.
      recording('second', () => {
        throw new Error('no head start');
      }),
    ];
    fake.enqueue(
      reply(toolUse('first', { n: 1 }, 'toolu_1'), toolUse('second', { n: 2 }, 'toolu_2'), toolUse('second', { n: 'bad' }, 'toolu_3')),
      replyText('ok'),
    );
    expect((await makeLoop({ tools }).runTurn('go')).kind).toBe('end_turn');
    // Input the run would refuse is not prepared; the run reports it.
    expect(log).toEqual(['prepare first 1 for lead', 'prepare second 2 for lead', 'run first 1', 'run second 2']);
    expect(lastToolResults(1).map((r) => [r.content, r.is_error ?? false])).toEqual([
      ['done', false],
      ['done', false],
      [expect.stringMatching(/^invalid input for second/), true],
    ]);
  });

  it('an unknown tool is an error result and the loop goes on', async () => {
    fake.enqueue(reply(toolUse('launch_rockets', { count: 3 }, 'toolu_x')), replyText('I will do without.'));
    const loop = makeLoop();
    const outcome = await loop.runTurn('go');

    expect(outcome).toEqual({ kind: 'end_turn', text: 'I will do without.' });
    const [result] = lastToolResults(1);
    expect(result).toMatchObject({ tool_use_id: 'toolu_x', is_error: true });
    expect(result!.content).toMatch(/unknown tool 'launch_rockets'/);
    expect(result!.content).toMatch(/read_file/);
    expect(ofType('tool_result')[0]).toMatchObject({ id: 'toolu_x', ok: false });
    expectConsistentTranscript(loop.messages);
  });

  it('invalid input is an error result and the loop goes on', async () => {
    fake.enqueue(reply(toolUse('write_file', { path: 42 }, 'toolu_bad'), toolUse('read_file', {}, 'toolu_bad2')), replyText('fixed'));
    const outcome = await makeLoop().runTurn('go');

    expect(outcome.kind).toBe('end_turn');
    const results = lastToolResults(1);
    expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_bad', 'toolu_bad2']);
    for (const result of results) {
      expect(result.is_error).toBe(true);
      expect(result.content).toMatch(/invalid input/);
    }
    expect(results[0]!.content).toMatch(/path/);
    expect(existsSync(path.join(ws, '42'))).toBe(false);
  });

  it('a bash command that hangs is killed at its timeout and the loop goes on', async () => {
    // Longer than the test may run: the turn ends only because the timeout kills it.
    fake.enqueue(reply(toolUse('bash', { command: 'sleep 300', timeout_ms: 300 }, 'toolu_sleep')), replyText('moving on'));
    const outcome = await makeLoop().runTurn('go');

    expect(outcome).toEqual({ kind: 'end_turn', text: 'moving on' });
    const [result] = lastToolResults(1);
    expect(result).toMatchObject({ tool_use_id: 'toolu_sleep', is_error: true });
    expect(result!.content).toMatch(/killed after 300 ms timeout/);
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses paths that escape the workspace through .. or a symlink', async () => {
    const outside = path.join(temp.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET-CONTENT\n');
    writeFileSync(path.join(temp.dir, 'x'), 'PARENT-CONTENT\n');
    symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'link.txt'));
    symlinkSync(outside, path.join(ws, 'outdir'));

    fake.enqueue(
      reply(
        toolUse('read_file', { path: '../x' }, 'toolu_dotdot'),
        toolUse('read_file', { path: 'link.txt' }, 'toolu_link'),
        toolUse('read_file', { path: 'outdir/secret.txt' }, 'toolu_linkdir'),
        toolUse('write_file', { path: 'outdir/planted.txt', content: 'gotcha' }, 'toolu_write'),
        toolUse('edit_file', { path: 'link.txt', old_text: 'TOP', new_text: 'LOW' }, 'toolu_edit'),
      ),
      replyText('understood'),
    );
    const outcome = await makeLoop().runTurn('go');

    expect(outcome.kind).toBe('end_turn');
    const results = lastToolResults(1);
    expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_dotdot', 'toolu_link', 'toolu_linkdir', 'toolu_write', 'toolu_edit']);
    for (const result of results) {
      expect(result.is_error, result.tool_use_id).toBe(true);
      expect(result.content).toMatch(/outside the workspace/);
      expect(result.content).not.toMatch(/SECRET-CONTENT|PARENT-CONTENT/);
    }
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET-CONTENT\n');
  });
});

describe('AgentLoop: limits and failures', () => {
  it('stops at the turn limit when the model keeps calling tools', async () => {
    let calls = 0;
    fake.respond(() => reply(toolUse('bash', { command: `echo call ${++calls}` })));
    const loop = makeLoop({ maxTurns: 2 });
    const outcome = await loop.runTurn('loop forever');

    expect(outcome).toEqual({ kind: 'turn_limit', limit: 2 });
    expect(fake.requests).toHaveLength(2);
    expect(ofType('tool_result')).toHaveLength(2);
    expect(ofType('error').at(-1)).toMatchObject({ fatal: false, message: expect.stringMatching(/turn limit/) });
    // Both tool calls were answered: the transcript can be sent again.
    expectConsistentTranscript(loop.messages);
    expect(loop.messages.at(-1)!.role).toBe('user');
  });

  it('a model error after the retries ends the turn as failed, and the next turn works', async () => {
    fake.enqueue(overloaded(), overloaded(), overloaded(), overloaded(), replyText('back again'));
    const loop = makeLoop();
    const outcome = await loop.runTurn('hello');

    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && outcome.error).toMatch(/after 4 attempts/);
    expect(ofType('retry')).toHaveLength(3);
    expect(ofType('error').at(-1)).toMatchObject({ fatal: true, status: 529 });

    const next = await loop.runTurn('try again');
    expect(next).toEqual({ kind: 'end_turn', text: 'back again' });
  });
});

describe('AgentLoop: interrupts', () => {
  it('an interrupt during a slow stream ends the turn, keeps a consistent transcript, and the next turn works', async () => {
    fake.enqueue({
      kind: 'message',
      content: [text('This is a long and slow answer that will be interrupted well before its end.'), toolUse('bash', { command: 'touch never.txt' })],
      delayMs: 40,
      textChunk: 4,
    });
    const loop = makeLoop();
    const stop = hub.subscribe((event) => {
      if (event.type === 'text_delta') loop.interrupt();
    });
    const outcome = await loop.runTurn('talk');
    stop();

    expect(outcome).toEqual({ kind: 'interrupted' });
    expect(loop.running).toBe(false);
    expect(existsSync(path.join(ws, 'never.txt'))).toBe(false);
    expect(ofType('tool_call')).toHaveLength(0);
    expect(ofType('error').at(-1)).toMatchObject({ interrupted: true, fatal: false });
    // What was seen is kept as the assistant's partial text, with no tool_use.
    const last = loop.messages.at(-1)!;
    expect(last.role).toBe('assistant');
    expect(JSON.stringify(last.content)).not.toContain('tool_use');
    expect(JSON.stringify(last.content)).toContain('This');
    expectConsistentTranscript(loop.messages);

    fake.enqueue(replyText('second turn'));
    const next = await loop.runTurn('again');
    expect(next).toEqual({ kind: 'end_turn', text: 'second turn' });
    const sent = fake.requests.at(-1)!.body.messages as MessageParam[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expectConsistentTranscript(sent);
  });

  it('an interrupt during a long bash command kills it; every tool_use gets a result', async () => {
    const marker = path.join(ws, 'started.txt');
    fake.enqueue(
      reply(
        toolUse('bash', { command: 'echo started > started.txt; sleep 300; echo finished > finished.txt' }, 'toolu_long'),
        toolUse('write_file', { path: 'after.txt', content: 'should not be written' }, 'toolu_after'),
      ),
    );
    const loop = makeLoop();
    const turn = loop.runTurn('run it');
    await waitFor(() => existsSync(marker), 'the command to start');
    // The command sleeps longer than the test may run: the turn ends only because the interrupt kills it.
    loop.interrupt();
    const outcome = await turn;

    expect(outcome).toEqual({ kind: 'interrupted' });
    expect(existsSync(path.join(ws, 'finished.txt'))).toBe(false);
    expect(existsSync(path.join(ws, 'after.txt'))).toBe(false);

    const results = toolResultsOf(loop.messages.at(-1)!);
    expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_long', 'toolu_after']);
    expect(results[0]).toMatchObject({ is_error: true, content: expect.stringContaining('[interrupted]') });
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/not run: .*interrupted/) });
    expectConsistentTranscript(loop.messages);
    expect(fake.requests).toHaveLength(1);

    fake.enqueue(replyText('ok, stopped'));
    expect(await loop.runTurn('what happened?')).toEqual({ kind: 'end_turn', text: 'ok, stopped' });
    expectConsistentTranscript(fake.requests.at(-1)!.body.messages as MessageParam[]);
  });
});

describe('AgentLoop: events', () => {
  it('emits events {ts, agent, type} (docs/contract.md#events) for text, tools, usage and retries', async () => {
    fake.enqueue(
      overloaded(),
      { kind: 'message', content: [text('Let me look.'), toolUse('bash', { command: 'echo hi' }, 'toolu_ev')], usage: { input_tokens: 50, output_tokens: 10 } },
      { kind: 'message', content: [text('Said hi.')], usage: { input_tokens: 70, output_tokens: 5 } },
    );
    const loop = makeLoop();
    const outcome = await loop.runTurn('say hi');
    expect(outcome).toEqual({ kind: 'end_turn', text: 'Said hi.' });

    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(typeof event.ts).toBe('string');
      expect(new Date(event.ts).toISOString()).toBe(event.ts);
      expect(event.agent).toBe('lead');
      expect(SPEC_EVENT_TYPES).toContain(event.type);
      // One JSON object per line in logs and --json: every event must survive JSON.
      expect(JSON.parse(JSON.stringify(event))).toEqual(event);
    }
    const types = new Set(events.map((e) => e.type));
    for (const type of ['text_delta', 'text', 'tool_call', 'tool_result', 'usage', 'retry']) expect(types, type).toContain(type);

    expect(ofType('retry')).toHaveLength(1);
    expect(ofType('retry')[0]).toMatchObject({ attempt: 1, status: 529, delayMs: expect.any(Number), reason: expect.any(String) });
    expect(ofType('text').map((e) => e.text)).toEqual(['Let me look.', 'Said hi.']);
    expect(
      ofType('text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Let me look.Said hi.');
    expect(ofType('tool_call')[0]).toMatchObject({ id: 'toolu_ev', name: 'bash', input: { command: 'echo hi' }, summary: 'echo hi' });
    expect(ofType('tool_result')[0]).toMatchObject({ id: 'toolu_ev', name: 'bash', ok: true, duration_ms: expect.any(Number) });
    expect(String(ofType('tool_result')[0]!.content)).toContain('hi');

    const usage = ofType('usage');
    expect(usage).toHaveLength(2);
    expect(usage[0]).toMatchObject({ input_tokens: 50, output_tokens: 10, cost_usd: expect.any(Number) });
    expect(usage[1]).toMatchObject({ input_tokens: 70, output_tokens: 5, total_input_tokens: 120, total_output_tokens: 15 });
    expect(Number(usage[1]!.total_cost_usd)).toBeGreaterThan(0);
    expect(loop.totals.usage.input_tokens).toBe(120);
    expect(loop.totals.usage.output_tokens).toBe(15);

    // Order: the tool call follows the text of its response and precedes its result.
    const order = events.map((e) => e.type).filter((t) => t !== 'text_delta');
    expect(order.indexOf('retry')).toBeLessThan(order.indexOf('usage'));
    expect(order.indexOf('text')).toBeLessThan(order.indexOf('tool_call'));
    expect(order.indexOf('tool_call')).toBeLessThan(order.indexOf('tool_result'));
  });
});
