// The real ModelClient (through @anthropic-ai/sdk) against the fake Messages API: streaming,
// huddle's own retry loop (status codes, retry-after, faults mid-stream), interrupts, and
// what every request carries.
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InterruptedError,
  ModelClient,
  ModelError,
  type ModelClientOptions,
  type ModelRequest,
  type RetryNotice,
} from '../../../src/runtime/model/model-client.js';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { countBreakpoints } from '../../../src/runtime/model/cache-breakpoints.js';
import { type FakeApi, overloaded, rateLimited, replyText, startFakeApi, text } from '../../helpers/fake-api.js';

const API_KEY = 'sk-ant-test-secret-0123456789abcdef';

let fake: FakeApi;

// A fresh server per test: its script queue and request record start empty.
beforeEach(async () => {
  fake = await startFakeApi();
});
afterEach(async () => {
  await fake.close();
});

function client(overrides: Partial<ModelClientOptions> = {}): ModelClient {
  return new ModelClient({
    apiKey: API_KEY,
    baseURL: fake.url,
    maxRetries: 4,
    retryBaseMs: 1,
    timeoutMs: 10_000,
    ...overrides,
  });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-sonnet-4-6',
    system: "You are 'lead', role: lead, team: t.",
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

/** Runs a call that must fail and returns its error. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the call succeeded but was expected to fail');
}

describe('ModelClient: a normal streamed call', () => {
  it('streams text deltas to onText and returns the final message with usage and cost', async () => {
    const answer = 'Hello from the fake API, streamed in several small pieces.';
    fake.enqueue({ kind: 'message', content: [text(answer)], usage: { input_tokens: 120, output_tokens: 30 } });
    const deltas: string[] = [];
    const result = await client().call(request(), { onText: (d) => deltas.push(d) });

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(answer);
    expect(result.attempts).toBe(1);
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: answer })]);
    expect(result.message.stop_reason).toBe('end_turn');
    expect(result.usage.input_tokens).toBe(120);
    expect(result.usage.output_tokens).toBe(30);
    expect(result.costUsd).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
    expect(fake.unscripted).toHaveLength(0);
  });

  it('sends the system prompt and the tools with cache breakpoints, streaming, and the API key', async () => {
    fake.enqueue(replyText('ok'));
    const tools = [
      { name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } },
      { name: 'bash', description: 'Runs a command.', input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } } },
    ];
    await client().call(request({ tools, maxTokens: 777 }));

    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(credential(sent.headers)).toBe(API_KEY);
    expect(sent.body.stream).toBe(true);
    expect(sent.body.model).toBe('claude-sonnet-4-6');
    expect(sent.body.max_tokens).toBe(777);
    // The rolling breakpoint: the last message's last block (cache-breakpoints.ts).
    expect(sent.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
    expect(sent.body.system).toEqual([{ type: 'text', text: "You are 'lead', role: lead, team: t.", cache_control: { type: 'ephemeral' } }]);
    expect(sent.body.tools.map((t: { name: string }) => t.name)).toEqual(['read_file', 'bash']);
    expect(sent.body.tools[0].cache_control).toBeUndefined();
    expect(sent.body.tools[1].cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.body.tools[1].input_schema).toEqual(tools[1]!.input_schema);
  });

  it('marks the end of the conversation and of the previous call, on a copy, at most 4 breakpoints', async () => {
    fake.enqueue(replyText('ok'));
    const tools = [{ name: 'bash', description: 'Runs a command.', input_schema: { type: 'object' as const } }];
    const messages: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'do it' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a b' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'more' },
          { type: 'tool_use', id: 't2', name: 'bash', input: { command: 'pwd' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't2', content: '/x' },
          { type: 'text', text: '<inbox>…</inbox>' },
        ],
      },
    ];
    const before = structuredClone(messages);
    await client().call(request({ tools, messages }));
    expect(messages, 'the transcript is not marked').toEqual(before);
    const sent = fake.requests[0]!.body;
    const marks = (sent.messages as Array<{ content: Array<{ cache_control?: unknown }> }>).map((m) => m.content.map((b) => Boolean(b.cache_control)));
    expect(marks).toEqual([[false], [false], [true], [false, false], [false, true]]);
    expect(countBreakpoints(sent)).toBe(4);
  });

  it('a one-off request marks only the tools and the system prompt', async () => {
    fake.enqueue(replyText('ok'));
    await client().call({ ...request({}), cache: 'prefix' });
    expect(fake.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('with sharedTools, the first breakpoint follows the tools every agent has, not the last tool', async () => {
    const tool = (name: string) => ({ name, description: `${name}.`, input_schema: { type: 'object' as const } });
    const tools = ['read_file', 'bash', 'spawn_teammate'].map(tool);
    const marks = () => (fake.requests.at(-1)!.body.tools as Array<{ cache_control?: unknown }>).map((t) => Boolean(t.cache_control));
    fake.enqueue(replyText('ok'), replyText('ok'), replyText('ok'));
    await client().call(request({ tools, sharedTools: 2 }));
    expect(marks()).toEqual([false, true, false]);
    // None shared, or all: the last tool, as without it.
    await client().call(request({ tools, sharedTools: 0 }));
    expect(marks()).toEqual([false, false, true]);
    await client().call(request({ tools, sharedTools: 3 }));
    expect(marks()).toEqual([false, false, true]);
    expect(countBreakpoints(fake.requests.at(-1)!.body)).toBeLessThanOrEqual(4);
  });

  it('omits tools when there are none', async () => {
    fake.enqueue(replyText('ok'));
    await client().call(request({ tools: [] }));
    expect(fake.requests[0]!.body.tools).toBeUndefined();
  });
});

describe('ModelClient: retries', () => {
  it('two 529s then success: succeeds on the third attempt with two retry notices', async () => {
    fake.enqueue(overloaded(), overloaded(), replyText('third time lucky'));
    const notices: RetryNotice[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n) });

    expect(result.attempts).toBe(3);
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: 'third time lucky' })]);
    expect(notices).toHaveLength(2);
    expect(notices.map((n) => n.attempt)).toEqual([1, 2]);
    expect(notices.every((n) => n.status === 529)).toBe(true);
    expect(notices[0]!.reason).toMatch(/overloaded/);
    expect(notices.every((n) => n.delayMs >= 0 && n.delayMs < 1000)).toBe(true);
    expect(fake.requests).toHaveLength(3);
  });

  it('honours retry-after-ms on a 429', async () => {
    fake.enqueue(
      {
        kind: 'status',
        status: 429,
        headers: { 'retry-after-ms': '20' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
      },
      replyText('ok'),
    );
    const notices: RetryNotice[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n) });
    expect(result.attempts).toBe(2);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ attempt: 1, delayMs: 20, status: 429 });
    expect(notices[0]!.reason).toMatch(/rate limited/);
  });

  it('parses retry-after in seconds, and an abort during the wait ends the call at once', async () => {
    // A wait longer than the test may run: only an abort that ends the wait lets the call return.
    fake.enqueue(rateLimited(60), replyText('never reached'));
    const abort = new AbortController();
    const notices: RetryNotice[] = [];
    const error = await failure(
      client().call(request(), {
        signal: abort.signal,
        onRetry: (n) => {
          notices.push(n);
          // Abort once the client is asleep in its 2 s wait, not before.
          setTimeout(() => abort.abort(), 30);
        },
      }),
    );

    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ attempt: 1, delayMs: 60_000, status: 429 });
    expect(error).toBeInstanceOf(InterruptedError);
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a stream cut in the middle, then succeeds', async () => {
    fake.enqueue({ kind: 'cut', content: [text('This answer is going to be cut off somewhere in the middle.')] }, replyText('complete'));
    const notices: RetryNotice[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n) });
    expect(result.attempts).toBe(2);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.status).toBeUndefined();
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: 'complete' })]);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries an `event: error` in the middle of a stream', async () => {
    fake.enqueue({ kind: 'error_event' }, replyText('recovered'));
    const notices: RetryNotice[] = [];
    const deltas: string[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n), onText: (d) => deltas.push(d) });
    expect(result.attempts).toBe(2);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.reason).toMatch(/overloaded_error/);
    // The partial text of the failed attempt was streamed before the error arrived.
    expect(deltas.join('')).toContain('recovered');
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: 'recovered' })]);
  });

  it('does not retry an `event: error` of a non-retryable type', async () => {
    fake.enqueue({ kind: 'error_event', errorType: 'invalid_request_error' }, replyText('not reached'));
    const notices: RetryNotice[] = [];
    const error = await failure(client().call(request(), { onRetry: (n) => notices.push(n) }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/invalid_request_error/);
    expect(notices).toHaveLength(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a malformed stream (a data line that is not JSON)', async () => {
    fake.enqueue({ kind: 'malformed' }, replyText('fine now'));
    const notices: RetryNotice[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n) });
    expect(result.attempts).toBe(2);
    expect(notices).toHaveLength(1);
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: 'fine now' })]);
  });

  it('retries a 500 and a 408', async () => {
    fake.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 408 }, replyText('ok'));
    const notices: RetryNotice[] = [];
    const result = await client().call(request(), { onRetry: (n) => notices.push(n) });
    expect(result.attempts).toBe(3);
    expect(notices.map((n) => n.status)).toEqual([500, 408]);
  });

  it('out of retries: a ModelError saying how many attempts were made', async () => {
    fake.enqueue(overloaded(), overloaded(), overloaded(), replyText('not reached'));
    const notices: RetryNotice[] = [];
    const error = await failure(client({ maxRetries: 2 }).call(request(), { onRetry: (n) => notices.push(n) }));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(529);
    expect(error.message).toMatch(/overloaded \(529\)/);
    expect(error.message).toMatch(/after 3 attempts/);
    expect(notices).toHaveLength(2);
    expect(fake.requests).toHaveLength(3);
  });

  it('with maxRetries 0 the first failure is final', async () => {
    fake.enqueue(overloaded(), replyText('not reached'));
    const error = await failure(client({ maxRetries: 0 }).call(request()));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).not.toMatch(/after/);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('ModelClient: errors that are not retried', () => {
  it('401: a ModelError at once that names ANTHROPIC_API_KEY', async () => {
    fake.enqueue({ kind: 'status', status: 401 }, replyText('not reached'));
    const notices: RetryNotice[] = [];
    const error = await failure(client().call(request(), { onRetry: (n) => notices.push(n) }));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(401);
    expect(error.message).toMatch(/ANTHROPIC_API_KEY/);
    expect(notices).toHaveLength(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('400: a ModelError at once with the server message', async () => {
    fake.enqueue(
      { kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad shape' } } },
      replyText('not reached'),
    );
    const notices: RetryNotice[] = [];
    const error = await failure(client().call(request(), { onRetry: (n) => notices.push(n) }));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(400);
    expect(error.message).toMatch(/400/);
    expect(error.message).toMatch(/bad shape/);
    expect(notices).toHaveLength(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('404: points at the model and ANTHROPIC_BASE_URL', async () => {
    fake.enqueue({ kind: 'status', status: 404 });
    const error = await failure(client().call(request()));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/HUDDLE_MODEL/);
    expect(error.message).toMatch(/ANTHROPIC_BASE_URL/);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('ModelClient: interrupts', () => {
  it('an abort while the server hangs mid-stream ends the call quickly with InterruptedError', async () => {
    fake.enqueue({ kind: 'hang', content: [text('I am about to go very quiet')] });
    const abort = new AbortController();
    const deltas: string[] = [];
    let abortedAt = 0;
    const error = await failure(
      client().call(request(), {
        signal: abort.signal,
        onText: (d) => {
          deltas.push(d);
          if (!abortedAt) {
            abortedAt = performance.now();
            abort.abort();
          }
        },
      }),
    );
    expect(error).toBeInstanceOf(InterruptedError);
    expect(deltas.length).toBeGreaterThan(0);
    // The server never ends its stream: the call returned because the abort ended it.
    expect(abortedAt).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('an already aborted signal makes no request', async () => {
    fake.enqueue(replyText('not reached'));
    const abort = new AbortController();
    abort.abort();
    const error = await failure(client().call(request(), { signal: abort.signal }));
    expect(error).toBeInstanceOf(InterruptedError);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('ModelClient: the API key stays secret', () => {
  it('never appears in the error messages or retry reasons', async () => {
    const messages: string[] = [];
    const record = (n: RetryNotice) => messages.push(n.reason);

    fake.enqueue({ kind: 'status', status: 401 });
    messages.push((await failure(client().call(request(), { onRetry: record }))).message);

    fake.enqueue({ kind: 'status', status: 403 });
    messages.push((await failure(client().call(request(), { onRetry: record }))).message);

    fake.enqueue({ kind: 'status', status: 500 }, { kind: 'cut', content: [text('cut short, cut short')] }, { kind: 'malformed' });
    messages.push((await failure(client({ maxRetries: 2 }).call(request(), { onRetry: record }))).message);

    // A server that refuses connections: the SDK's connection error.
    const port = await closedPort();
    const offline = client({ baseURL: `http://127.0.0.1:${port}`, maxRetries: 1 });
    const connectionError = await failure(offline.call(request(), { onRetry: record }));
    expect(connectionError).toBeInstanceOf(ModelError);
    expect(connectionError.message).toMatch(/connection/i);
    messages.push(connectionError.message, String(connectionError.stack));

    expect(messages.length).toBeGreaterThanOrEqual(8);
    for (const message of messages) expect(message).not.toContain(API_KEY);
    // The key did reach the server: the check above is not vacuous.
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.requests.every((r) => credential(r.headers) === API_KEY)).toBe(true);
  });
});

describe('ModelClient: a server that echoes the key back', () => {
  it('redacts the key from retry reasons and the final error', async () => {
    const echo = (status: number) => ({
      kind: 'status' as const,
      status,
      body: { type: 'error', error: { type: status === 400 ? 'invalid_request_error' : 'api_error', message: `bad credentials: ${API_KEY}` } },
    });
    fake.enqueue(echo(500), echo(400));
    const notices: RetryNotice[] = [];
    const error = await failure(client().call(request(), { onRetry: (n) => notices.push(n) }));

    expect(error).toBeInstanceOf(ModelError);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.reason).toContain('bad credentials: [redacted]');
    expect(error.message).toContain('bad credentials: [redacted]');
    expect(notices[0]!.reason).not.toContain(API_KEY);
    expect(error.message).not.toContain(API_KEY);
  });
});

/** The key a request carried: as `x-api-key`, or as a bearer token (what this SDK version sends). */
function credential(headers: Record<string, string | string[] | undefined>): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey;
  const authorization = headers.authorization;
  return typeof authorization === 'string' ? authorization.replace(/^Bearer /, '') : undefined;
}

/** A local port with nothing listening on it. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('ModelClient: a stream that goes silent (HUDDLE_STREAM_IDLE_MS)', () => {
  it('is cut after the idle time and retried like a dropped connection', async () => {
    fake.enqueue({ kind: 'hang', content: [text('I start, then say nothing more')] });
    fake.enqueue(replyText('second try answers'));
    const retries: RetryNotice[] = [];
    const result = await client({ streamIdleMs: 300 }).call(request(), { onRetry: (n) => retries.push(n) });
    expect(result.message.content).toEqual([expect.objectContaining({ type: 'text', text: 'second try answers' })]);
    expect(fake.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.reason).toMatch(/sent nothing for 300 ms \(HUDDLE_STREAM_IDLE_MS\); treated as a dropped connection/);
  });

  it('gives up with a ModelError that names the silence when every attempt stalls', async () => {
    for (let i = 0; i < 3; i++) fake.enqueue({ kind: 'hang' });
    const error = await failure(client({ streamIdleMs: 200, maxRetries: 2 }).call(request()));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/response stream sent nothing .* \(after 3 attempts\)$/);
    expect(fake.requests).toHaveLength(3);
  });

  it('an interrupt during the silence is still an interrupt, not a retry', async () => {
    fake.enqueue({ kind: 'hang', content: [text('quiet soon')] });
    const abort = new AbortController();
    const error = await failure(client({ streamIdleMs: 60_000 }).call(request(), { signal: abort.signal, onText: () => abort.abort() }));
    expect(error).toBeInstanceOf(InterruptedError);
    expect(fake.requests).toHaveLength(1);
  });
});
