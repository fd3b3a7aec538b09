import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Anthropic, { APIError, APIUserAbortError, AnthropicError, RateLimitError } from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { overloaded, rateLimited, reply, replyText, startFakeApi, text, toolUse } from './fake-api.ts';
import type { FakeApi, Scripted } from './fake-api.ts';

const MODEL = 'claude-fake-model';
const user = (content: string): MessageParam[] => [{ role: 'user', content }];

let fake: FakeApi;
let client: Anthropic;

beforeEach(async () => {
  fake = await startFakeApi();
  client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
});

afterEach(async () => {
  await fake.close();
});

function stream(system?: string | Array<{ type: 'text'; text: string }>, signal?: AbortSignal) {
  return client.messages.stream(
    { model: MODEL, max_tokens: 256, messages: user('hi'), ...(system === undefined ? {} : { system }) },
    signal ? { signal } : undefined,
  );
}

/** Resolves with the error the promise rejects with; fails if it resolves. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the promise to reject');
}

describe('fake Anthropic API with the real SDK', () => {
  it('streams a text reply as several text deltas and a final message', async () => {
    const t = 'Hello there, this reply arrives in several small chunks.';
    fake.enqueue({ kind: 'message', content: [text(t)], textChunk: 5 });
    const s = stream("You are 'alice', a teammate.");
    const deltas: string[] = [];
    s.on('text', (d) => deltas.push(d));
    const msg = await s.finalMessage();

    expect(deltas.length).toBe(Math.ceil(t.length / 5));
    expect(deltas.join('')).toBe(t);
    expect(msg.content).toHaveLength(1);
    expect(msg.content[0]).toMatchObject({ type: 'text', text: t });
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.model).toBe(MODEL);
    expect(msg.id).toMatch(/^msg_fake_\d+$/);
    expect(s.request_id).toMatch(/^req_fake_\d+$/);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBe(Math.ceil(t.length / 4));
    expect(await s.finalText()).toBe(t);
  });

  it('uses the exact SSE framing of the Messages API (event: line, data: line, blank line) on the wire', async () => {
    fake.enqueue(reply(text('Let me check the weather.'), toolUse('get_weather', { location: 'San Francisco, CA' })));
    const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, stream: true, messages: user('weather?') }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('request-id')).toMatch(/^req_fake_\d+$/);
    const raw = await res.text();
    expect(raw.endsWith('\n\n')).toBe(true);
    const frames = raw
      .slice(0, -2)
      .split('\n\n')
      .map((f) => {
        const m = /^event: ([a-z_]+)\ndata: (.*)$/.exec(f);
        expect(m, `bad frame: ${JSON.stringify(f)}`).not.toBeNull();
        const data = JSON.parse(m![2]!);
        expect(data.type).toBe(m![1]);
        return data;
      });
    const types = frames.map((d) => d.type);
    expect(types[0]).toBe('message_start');
    expect(types).toContain('ping');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(2);
    expect(types.filter((t) => t === 'content_block_stop')).toHaveLength(2);
    expect(frames[0].message).toMatchObject({ id: expect.stringMatching(/^msg_fake_/), model: MODEL, content: [], stop_reason: null });
    expect(frames[0].message.usage.input_tokens).toBeGreaterThan(0);
    const jsonPieces = frames.filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json);
    expect(jsonPieces.filter((p) => p !== '').length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(jsonPieces.join(''))).toEqual({ location: 'San Francisco, CA' });
    expect(frames.at(-2).delta.stop_reason).toBe('tool_use');
    expect(fake.requests[0]!.path).toBe('/v1/messages');
  });

  it('assembles a tool_use block and records the tool_result round trip', async () => {
    const input = { location: 'San Francisco, CA', days: 3, units: ['C', 'F'] };
    fake.enqueue(reply(text('Let me check.'), toolUse('get_weather', input)), replyText('Sunny.'));
    const messages: MessageParam[] = user('weather?');

    const s1 = client.messages.stream({ model: MODEL, max_tokens: 256, messages });
    const jsonDeltas: string[] = [];
    s1.on('inputJson', (partial) => jsonDeltas.push(partial));
    const m1 = await s1.finalMessage();
    expect(m1.stop_reason).toBe('tool_use');
    const tu = m1.content.find((b) => b.type === 'tool_use');
    expect(tu).toMatchObject({ type: 'tool_use', name: 'get_weather', input });
    expect(tu!.type === 'tool_use' && tu!.id).toMatch(/^toolu_fake_\d+$/);
    expect(jsonDeltas.filter((d) => d !== '').length).toBeGreaterThanOrEqual(2);
    if (tu?.type !== 'tool_use') throw new Error('no tool_use');

    messages.push({ role: 'assistant', content: m1.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tu.id, content: '18°C, sunny' }] });
    const m2 = await client.messages.stream({ model: MODEL, max_tokens: 256, messages }).finalMessage();
    expect(m2.content[0]).toMatchObject({ type: 'text', text: 'Sunny.' });

    expect(fake.requests).toHaveLength(2);
    const second = fake.requests[1]!;
    expect(second.method).toBe('POST');
    expect(second.headers['authorization']).toBe('Bearer test-key');
    expect(second.body.stream).toBe(true);
    expect(second.body.messages).toHaveLength(3);
    expect(second.body.messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: tu.id, content: '18°C, sunny' });
    expect(second.at).toBeGreaterThanOrEqual(fake.requests[0]!.at);
  });

  it('gives unique default tool ids and keeps explicit ones', async () => {
    fake.enqueue(reply(toolUse('a', {}), toolUse('b', { x: 1 }), toolUse('c', { y: 2 }, 'toolu_mine')));
    const m = await stream().finalMessage();
    const ids = m.content.map((b) => (b.type === 'tool_use' ? b.id : ''));
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe('toolu_mine');
    expect(m.content.map((b) => (b.type === 'tool_use' ? b.input : null))).toEqual([{}, { x: 1 }, { y: 2 }]);
  });

  it('answers non-streaming requests with the same message as JSON, honouring scripted usage', async () => {
    fake.enqueue({
      kind: 'message',
      content: [text('Plain JSON.'), toolUse('read_file', { path: 'a.ts' })],
      stopReason: 'tool_use',
      usage: { input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 50, cache_creation_input_tokens: 3 },
    });
    const res = await client.messages.create({ model: MODEL, max_tokens: 256, messages: user('hi') }).withResponse();
    const m = res.data;
    expect(res.response.headers.get('content-type')).toBe('application/json');
    expect(m.content).toEqual([
      { type: 'text', text: 'Plain JSON.' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_fake_/), name: 'read_file', input: { path: 'a.ts' } },
    ]);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.usage).toMatchObject({ input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 50, cache_creation_input_tokens: 3 });
    expect(fake.requests[0]!.body.stream).toBeUndefined();
  });

  it('routes by the agent name in the system prompt, falls back to the shared queue, then to unscripted', async () => {
    fake.script('alice', replyText('I am alice'));
    fake.script('bob', replyText('I am bob'));
    fake.enqueue(replyText('shared'));

    const [bob, alice, nobody] = await Promise.all([
      stream("You are 'bob', the tester.").finalText(),
      stream([
        { type: 'text', text: "You are 'alice', the lead." },
        { type: 'text', text: 'More rules.' },
      ]).finalText(),
      stream('No agent here.').finalText(),
    ]);
    expect({ bob, alice, nobody }).toEqual({ bob: 'I am bob', alice: 'I am alice', nobody: 'shared' });

    const again = await stream("You are 'alice', the lead.").finalText();
    expect(again).toBe('[fake-api: no scripted response]');
    expect(fake.unscripted).toHaveLength(1);
    expect(fake.unscripted[0]!.agent).toBe('alice');
    expect(fake.requests.map((r) => r.agent).sort()).toEqual(['alice', 'alice', 'bob', undefined].sort());
  });

  it('lets respond() decide first, falling through to the queues when it returns undefined', async () => {
    fake.enqueue(replyText('from queue'));
    fake.respond((req) => (req.agent === 'carol' ? replyText(`echo ${req.body.messages.length}`) : undefined));
    expect(await stream("You are 'carol'").finalText()).toBe('echo 1');
    expect(await stream("You are 'dave'").finalText()).toBe('from queue');
    expect(fake.unscripted).toHaveLength(0);
  });

  it('keeps serving other requests while a slow stream is in progress', async () => {
    fake.script('slow', { kind: 'message', content: [text('x'.repeat(200))], textChunk: 10, delayMs: 10 });
    fake.script('fast', replyText('done fast'));
    const slow = stream("You are 'slow'");
    let slowEnded = false;
    const slowDone = slow.finalText().then((t) => {
      slowEnded = true;
      return t;
    });
    const firstDelta = new Promise<void>((resolve) => slow.once('text', () => resolve()));
    await firstDelta;
    expect(await stream("You are 'fast'").finalText()).toBe('done fast');
    expect(slowEnded).toBe(false);
    expect(await slowDone).toBe('x'.repeat(200));
  });

  it('surfaces 529 overloaded as an APIError with status 529', async () => {
    fake.enqueue(overloaded());
    const err = await rejection(stream().finalMessage());
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    expect(e.status).toBe(529);
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(e.requestID).toMatch(/^req_fake_/);
  });

  it('surfaces 429 as a RateLimitError with the retry-after header', async () => {
    fake.enqueue(rateLimited(7));
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 10, messages: user('hi') }));
    expect(err).toBeInstanceOf(RateLimitError);
    const e = err as RateLimitError;
    expect(e.status).toBe(429);
    expect(e.headers.get('retry-after')).toBe('7');
    expect(e.error).toMatchObject({ error: { type: 'rate_limit_error' } });
  });

  it('answers a custom status with a default Anthropic-style error body', async () => {
    fake.enqueue({ kind: 'status', status: 500 });
    const err = await rejection(stream().finalMessage());
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(500);
    expect((err as APIError).error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('the SDK retries a 529 when allowed, and the retry is recorded', async () => {
    const retrying = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 1, logLevel: 'off' });
    fake.enqueue({ ...overloaded(), headers: { 'retry-after-ms': '1' } } as Scripted, replyText('after retry'));
    const t = await retrying.messages.stream({ model: MODEL, max_tokens: 10, messages: user('hi') }).finalText();
    expect(t).toBe('after retry');
    expect(fake.requests).toHaveLength(2);
  });

  it('cut: the socket dies mid-stream and finalMessage rejects with a connection error', async () => {
    fake.enqueue({ kind: 'cut', content: [text('This text is going to be cut off well before its end.')], afterEvents: 4 });
    const s = stream();
    const deltas: string[] = [];
    s.on('text', (d) => deltas.push(d));
    const err = await rejection(s.finalMessage());
    // The SDK does not wrap a mid-body socket loss in APIConnectionError: it is an
    // AnthropicError whose cause is undici's TypeError('terminated').
    expect(err).toBeInstanceOf(AnthropicError);
    expect(err).not.toBeInstanceOf(APIUserAbortError);
    expect((err as Error).message).toBe('terminated');
    expect((err as Error & { cause?: unknown }).cause).toBeInstanceOf(TypeError);
    expect(deltas).toEqual(['This tex']);
  });

  it('error_event: an `event: error` mid-stream rejects with an APIError without status', async () => {
    fake.enqueue({ kind: 'error_event' }, { kind: 'error_event', errorType: 'api_error', afterEvents: 1 });
    const s = stream();
    const deltas: string[] = [];
    s.on('text', (d) => deltas.push(d));
    const err = await rejection(s.finalMessage());
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBeUndefined();
    expect((err as APIError).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(deltas.length).toBeGreaterThan(0);

    const err2 = await rejection(stream().finalMessage());
    expect((err2 as APIError).error).toMatchObject({ error: { type: 'api_error' } });
  });

  it('malformed: a non-JSON data line rejects finalMessage', async () => {
    fake.enqueue({ kind: 'malformed' });
    const err = await rejection(stream().finalMessage());
    expect(err).toBeInstanceOf(AnthropicError);
    expect((err as Error & { cause?: unknown }).cause).toBeInstanceOf(SyntaxError);
  });

  it('hang: the client can abort a stream that never finishes', async () => {
    fake.enqueue({ kind: 'hang', content: [text('Thinking about it forever')] });
    const ac = new AbortController();
    const s = stream(undefined, ac.signal);
    const firstText = new Promise<string>((resolve) => s.once('text', (d) => resolve(d)));
    expect(await firstText).toBe('Thinking');
    ac.abort();
    const err = await rejection(s.finalMessage());
    expect(err).toBeInstanceOf(APIUserAbortError);
    await fake.close();
    expect(fake.requests).toHaveLength(1);
  });

  it('hang: close() returns even while a hanging stream is still open, and the client sees the loss', async () => {
    fake.enqueue({ kind: 'hang' });
    const s = stream();
    const connected = new Promise<void>((resolve) => s.once('streamEvent', () => resolve()));
    const final = rejection(s.finalMessage());
    await connected;
    await fake.close();
    const err = await final;
    expect(err).toBeInstanceOf(AnthropicError);
    expect((err as Error).message).toBe('terminated');
  });

  it('answers other routes with a 404 Anthropic-style error and records them', async () => {
    const res = await fetch(`${fake.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const res2 = await fetch(`${fake.url}/v1/messages`, { method: 'POST', body: 'not json' });
    expect(res2.status).toBe(400);
    expect(fake.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ['GET', '/v1/models', undefined],
      ['POST', '/v1/messages', 'not json'],
    ]);
    expect(fake.unscripted).toHaveLength(0);
  });

  it('waitForRequests resolves on the real count and times out otherwise', async () => {
    fake.enqueue(replyText('a'), replyText('b'));
    const waiting = fake.waitForRequests(2);
    const done = Promise.all([stream().finalText(), stream().finalText()]);
    await waiting;
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    expect((await done).sort()).toEqual(['a', 'b']);
    await expect(fake.waitForRequests(3, 50)).rejects.toThrow(/timed out/);
  });
});

describe('standalone runner (node test/helpers/fake-api-server.ts)', () => {
  it('prints its url, serves the script file and exits on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-api-'));
    try {
      const scriptPath = join(dir, 'script.json');
      const script = { shared: [replyText('from shared')], agents: { zoe: [replyText('hi from zoe script')] } };
      writeFileSync(scriptPath, JSON.stringify(script));
      const runner = fileURLToPath(new URL('./fake-api-server.ts', import.meta.url));
      const child = spawn(process.execPath, [runner, scriptPath], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const firstLine = await new Promise<string>((resolve, reject) => {
          const rl = createInterface({ input: child.stdout });
          rl.once('line', (l) => {
            rl.close();
            resolve(l);
          });
          child.once('exit', (code) => reject(new Error(`runner exited ${code}: ${stderr}`)));
        });
        const { url } = JSON.parse(firstLine) as { url: string };
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const c = new Anthropic({ apiKey: 'test-key', baseURL: url, maxRetries: 0 });
        const zoe = await c.messages.stream({ model: MODEL, max_tokens: 10, system: "You are 'zoe'", messages: user('hi') }).finalText();
        const other = await c.messages.stream({ model: MODEL, max_tokens: 10, messages: user('hi') }).finalText();
        expect([zoe, other]).toEqual(['hi from zoe script', 'from shared']);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
