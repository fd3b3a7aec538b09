// huddle's HTTP request for the model client (node:http) must answer as Node's built-in fetch does, and
// huddle's streamed Messages request must give the message the SDK's own client gives: each case runs
// both against the same real server.
import Anthropic from '@anthropic-ai/sdk';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConnectionError } from '../../../src/runtime/model/connection-error.js';
import { httpRequest, type HttpAnswer } from '../../../src/runtime/model/http-request.js';
import { markPrefix } from '../../../src/runtime/model/cache-breakpoints.js';
import { endpointURL, jsonLines, requestBody, StreamErrorEvent, streamMessages } from '../../../src/runtime/model/messages-request.js';
import { ModelClient } from '../../../src/runtime/model/model-client.js';
import { reply, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;
const routes = new Map<string, Handler>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => routes.get(request.url ?? '')?.(request, response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set('/echo', (request, response, body) => {
    response.writeHead(201, { 'content-type': 'application/json', 'x-one': 'a', 'retry-after': '3' });
    response.end(JSON.stringify({ method: request.method, body, header: request.headers['x-huddle'] }));
  });
  routes.set('/gzip', (_request, response) => {
    response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
    response.end(gzipSync('packed text'));
  });
  routes.set('/cut', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('event: ping\ndata: {}\n\n');
    setImmediate(() => response.socket?.destroy());
  });
  routes.set('/slow', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: first\n\n');
  });
  routes.set('/odd', (_request, response) => {
    response.writeHead(600, { 'content-type': 'text/plain' });
    response.end('a gateway of its own');
  });
  routes.set('/moved', (_request, response) => {
    response.writeHead(307, { location: '/echo' });
    response.end();
  });
  routes.set('/empty', (_request, response) => {
    response.writeHead(204);
    response.end();
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** What a caller can see of an answer: status, the headers named, the body as text. */
async function seenFetch(response: Response): Promise<unknown> {
  return { status: response.status, type: response.headers.get('content-type'), retry: response.headers.get('retry-after'), body: await response.text() };
}

async function textOf(answer: HttpAnswer): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

async function seenHuddle(answer: HttpAnswer): Promise<unknown> {
  return { status: answer.status, type: answer.header('Content-Type') ?? null, retry: answer.header('retry-after') ?? null, body: await textOf(answer) };
}

/** What a caller can see of a failure: its class, name and message, and its cause's code. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    return { kind: e.constructor.name, name: e.name, message: e.message, code: e.cause?.code };
  }
}

const get = (url: string, signal?: AbortSignal) => httpRequest(new URL(url), { method: 'GET', headers: {}, signal });

describe('httpRequest answers as the built-in fetch does', () => {
  it('status, headers, a posted body and the answer', async () => {
    const init = { method: 'POST' as const, headers: { 'x-huddle': 'yes' }, body: '{"q":1}' };
    const a = await seenFetch(await fetch(`${base}/echo`, init));
    const b = await seenHuddle(await httpRequest(new URL(`${base}/echo`), init));
    expect(b).toEqual(a);
    expect(JSON.parse((b as { body: string }).body)).toEqual({ method: 'POST', body: '{"q":1}', header: 'yes' });
  });

  it('a compressed body comes out as it was, and a 204 has none', async () => {
    for (const path of ['/gzip', '/empty']) {
      const a = await seenFetch(await fetch(`${base}${path}`));
      const b = await seenHuddle(await get(`${base}${path}`));
      expect(b, path).toEqual(a);
    }
    expect(await textOf(await get(`${base}/gzip`))).toBe('packed text');
  });

  it('nothing listening: the same TypeError, cause code and connection line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const a = await failure(fetch(`${url}/v1/messages`, { method: 'POST', body: '{}' }));
    const b = await failure(httpRequest(new URL(`${url}/v1/messages`), { method: 'POST', headers: {}, body: '{}' }));
    expect(b).toEqual(a);
    expect(b).toMatchObject({ kind: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' });
    const lines = await Promise.all(
      [fetch(`${url}/v1/messages`), get(`${url}/v1/messages`)].map((p) => p.catch((error: unknown) => describeConnectionError(error, url))),
    );
    expect(lines[1]).toBe(lines[0]);
  });

  it('a redirect is followed as fetch follows it (through fetch), the posted body kept on a 307', async () => {
    const answer = await httpRequest(new URL(`${base}/moved`), { method: 'POST', headers: { 'x-huddle': 'yes' }, body: '{"q":2}' });
    expect(answer.status).toBe(201);
    expect(JSON.parse(await textOf(answer))).toEqual({ method: 'POST', body: '{"q":2}', header: 'yes' });
  });

  it('a status outside 200-599 (600, from a gateway of its own) is an answer like any other, never a crash', async () => {
    const answer = await get(`${base}/odd`);
    expect(answer.status).toBe(600);
    expect(await textOf(answer)).toBe('a gateway of its own');
  });

  it('TLS spoken to a plain HTTP port fails with a connection line that says TLS failed, as over fetch', async () => {
    const https = base.replace('http:', 'https:');
    for (const pending of [fetch(`${https}/echo`), get(`${https}/echo`)]) {
      const error = await pending.then(
        () => undefined,
        (failed: unknown) => failed,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(describeConnectionError(error, https)).toMatch(/^connection to 127\.0\.0\.1:\d+ failed: TLS failed \((ERR_SSL_|EPROTO: )/);
    }
  });

  it('a connection cut in the body fails the read the same way', async () => {
    const a = (await failure((await fetch(`${base}/cut`)).text())) as { code?: string };
    const b = (await failure(textOf(await get(`${base}/cut`)))) as { code?: string };
    // The cause is the socket's own error (undici names it UND_ERR_SOCKET, Node ECONNRESET); huddle shows the message.
    expect({ ...b, code: undefined }).toEqual({ ...a, code: undefined });
    expect(b).toMatchObject({ kind: 'TypeError', message: 'terminated', code: 'ECONNRESET' });
  });

  it('an abort before the answer and one during the body end with the AbortError', async () => {
    const before = [];
    for (const send of [(signal: AbortSignal) => fetch(`${base}/slow`, { signal }), (signal: AbortSignal) => get(`${base}/slow`, signal)]) {
      const controller = new AbortController();
      const pending = send(controller.signal);
      controller.abort();
      before.push(await failure(pending));
    }
    expect(before[1]).toEqual(before[0]);
    const controller = new AbortController();
    const answer = await get(`${base}/slow`, controller.signal);
    const reader = answer.body[Symbol.asyncIterator]();
    expect(new TextDecoder().decode((await reader.next()).value)).toBe('data: first\n\n');
    controller.abort();
    expect(await failure(reader.next())).toMatchObject({ name: 'AbortError' });
  });
});

describe('the server-sent events the API streams', () => {
  /** What jsonLines yields for `reads` (one per chunk of the body), and the error it ends with. */
  async function read(reads: string[]): Promise<{ out: string[]; error?: unknown }> {
    async function* body() {
      for (const text of reads) yield new TextEncoder().encode(text);
    }
    const out: string[] = [];
    try {
      for await (const lines of jsonLines(body())) out.push(lines);
      return { out };
    } catch (error) {
      return { out, error };
    }
  }

  it('become one JSON line per named event: CRLF split between reads, data on two lines, comments and pings left out', async () => {
    const { out, error } = await read([
      'event: message_start\r',
      '\ndata: {"type":"message_start",\r\ndata: "n":1}\r\n\r\n: a comment\n\nevent: ping\ndata: {"type":"ping"}\n\n',
      'data: {"type":"unnamed"}\n\nevent: content_block_stop\ndata:{"type":"content_block_stop","index":0}\n\nevent: x\ndata: {"half"',
    ]);
    expect(error).toBeUndefined();
    expect(out.join('')).toBe('{"type":"message_start", "n":1}\n{"type":"content_block_stop","index":0}\n');
    expect(
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      { type: 'message_start', n: 1 },
      { type: 'content_block_stop', index: 0 },
    ]);
  });

  it('an `event: error` ends the stream after the events read with it, with the error the API sent', async () => {
    const { out, error } = await read([
      'event: message_start\ndata: {"type":"message_start"}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\nevent: ping\ndata: {}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]);
    expect(out).toEqual(['{"type":"message_start"}\n']);
    expect(error).toBeInstanceOf(StreamErrorEvent);
    expect((error as StreamErrorEvent).body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });
});

describe('the request body', () => {
  const tools = [
    { name: 'read_file', description: 'Reads a file — “quoted”, ünïcode', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } },
    {
      name: 'bash',
      description: 'Runs a command',
      input_schema: { type: 'object' as const, properties: { command: { type: 'string' } }, required: ['command'] },
    },
  ];
  const plain = { model: 'claude-fake', max_tokens: 100, messages: [{ role: 'user' as const, content: 'go\n"now"' }] };
  const stringified = (params: object) => JSON.stringify({ ...params, stream: true });

  it('is byte for byte JSON.stringify({ ...params, stream: true }), the tools made once per definition', () => {
    const marked = markPrefix({ shared: 'shared part', own: 'own part' }, tools);
    const cases: object[] = [
      plain,
      { ...plain, tools },
      { ...plain, system: marked.system, tools: marked.tools },
      { ...plain, tools: [] },
      { ...plain, system: undefined, tools },
      // Not the order huddle sends: the tools are not last, or a stream flag is already there.
      { tools, ...plain },
      { ...plain, stream: false, tools },
      { tools },
    ];
    for (const params of cases) expect(requestBody(params as never)).toBe(stringified(params));
    // Every call marks the same definitions: the same bytes again, and the marked copy is kept.
    const again = markPrefix({ shared: 'shared part', own: 'own part' }, tools);
    expect(again.tools.at(-1)).toBe(marked.tools.at(-1));
    expect(requestBody({ ...plain, tools: again.tools } as never)).toBe(stringified({ ...plain, tools: marked.tools }));
    expect(tools.some((tool) => 'cache_control' in tool)).toBe(false);
  });

  it('goes to the endpoint of the base URL asked for, the default one without', () => {
    expect(endpointURL(undefined).href).toBe('https://api.anthropic.com/v1/messages');
    expect(endpointURL('http://gateway.test/anthropic').href).toBe('http://gateway.test/anthropic/v1/messages');
    expect(endpointURL(undefined).href).toBe('https://api.anthropic.com/v1/messages');
    expect(endpointURL('')).toBe(endpointURL(''));
  });

  it('reaches the server as those bytes', async () => {
    let received = '';
    routes.set('/body/v1/messages', (_request, response, body) => {
      received = body;
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end('{"type":"error","error":{"type":"invalid_request_error","message":"seen"}}');
    });
    const params = { ...plain, tools: markPrefix('system', tools).tools };
    await expect(streamMessages({ apiKey: 'sk-test', baseURL: `${base}/body`, timeoutMs: 10_000 }, params, new AbortController().signal)).rejects.toThrow(
      'seen',
    );
    expect(received).toBe(stringified(params));
  });
});

describe('streamMessages against a server of its own', () => {
  const endpoint = () => ({ apiKey: 'sk-test', baseURL: `${base}/raw`, timeoutMs: 10_000 });
  const params = { model: 'claude-fake', max_tokens: 100, messages: [{ role: 'user' as const, content: 'go' }] };
  const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

  it('an `event: error` in the same read as the first events: those events still reach the listeners (usage, text)', async () => {
    routes.set('/raw/v1/messages', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        frame('message_start', {
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-fake',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 1000, output_tokens: 1 },
          },
        }) +
          frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
          frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hel' } }) +
          frame('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      );
    });
    const events: string[] = [];
    let text = '';
    const stream = await streamMessages(endpoint(), params, new AbortController().signal, (s) => {
      s.on('streamEvent', (event) => events.push(event.type));
      s.on('text', (delta) => (text += delta));
    });
    const error = await stream.finalMessage().then(
      () => undefined,
      (failed: unknown) => failed as Error & { cause?: unknown },
    );
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
    expect(text).toBe('hel');
    expect(error?.cause).toBeInstanceOf(StreamErrorEvent);
  });

  it("an error answer whose body stalls is still ended by the silence timer (the caller's signal)", async () => {
    let answered = 0;
    routes.set('/raw/v1/messages', (_request, response) => {
      answered++;
      response.writeHead(500, { 'content-type': 'application/json' });
      response.write('{"type":"error",');
    });
    const client = new ModelClient({ apiKey: 'sk-test', baseURL: `${base}/raw`, maxRetries: 0, retryBaseMs: 1, timeoutMs: 10_000, streamIdleMs: 300 });
    const request = { model: 'claude-fake', system: 'test', messages: params.messages, tools: [], maxTokens: 100 };
    await expect(client.call(request)).rejects.toThrow(/sent nothing for 300 ms/);
    expect(answered).toBe(1);
  });

  it('ANTHROPIC_CUSTOM_HEADERS ("Name: value" lines) are sent, as the SDK and Claude Code send them', async () => {
    let seen: IncomingMessage['headers'] = {};
    routes.set('/raw/v1/messages', (request, response) => {
      seen = request.headers;
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end('{"type":"error","error":{"type":"invalid_request_error","message":"no"}}');
    });
    process.env.ANTHROPIC_CUSTOM_HEADERS = 'X-Gateway-Team: team-a\nnot a header line\nX-Trace: 1: 2';
    try {
      await expect(streamMessages(endpoint(), params, new AbortController().signal)).rejects.toThrow('400');
    } finally {
      delete process.env.ANTHROPIC_CUSTOM_HEADERS;
    }
    expect(seen['x-gateway-team']).toBe('team-a');
    expect(seen['x-trace']).toBe('1: 2');
  });
});

describe("huddle's streamed request against the SDK's client", () => {
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startFakeApi();
  });
  afterAll(() => fake.close());

  it('gives the same message, its events and text, and sends the same request', async () => {
    const params = { model: 'claude-fake', max_tokens: 100, messages: [{ role: 'user' as const, content: 'go' }] };
    const script = () => fake.enqueue(reply(text('Round 1.'), toolUse('bash', { command: 'cat out/a.txt' }, 'toolu_1')));
    script();
    const client = new Anthropic({ apiKey: 'sk-test', authToken: null, baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
    const theirs = client.messages.stream(params);
    const theirEvents: string[] = [];
    theirs.on('streamEvent', (event) => theirEvents.push(event.type));
    const expected = await theirs.finalMessage();
    script();
    const ours = await streamMessages({ apiKey: 'sk-test', baseURL: fake.url, timeoutMs: 10_000 }, params, new AbortController().signal);
    const ourEvents: string[] = [];
    let ourText = '';
    ours.on('streamEvent', (event) => ourEvents.push(event.type));
    ours.on('text', (delta) => (ourText += delta));
    const message = await ours.finalMessage();
    expect({ ...message, id: '' }).toEqual({ ...expected, id: '' });
    expect(message.content).toEqual([
      { type: 'text', text: 'Round 1.' },
      { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'cat out/a.txt' } },
    ]);
    expect(ourEvents).toEqual(theirEvents);
    expect(ourText).toBe('Round 1.');
    const [sdkRequest, huddleRequest] = fake.requests.slice(-2);
    expect(huddleRequest!.body).toEqual(sdkRequest!.body);
    for (const name of ['anthropic-version', 'content-type', 'accept', 'authorization', 'x-api-key']) {
      expect(huddleRequest!.headers[name], name).toBe(sdkRequest!.headers[name]);
    }
    expect(huddleRequest!.headers.authorization).toBe('Bearer sk-test');
  });

  it('behind a proxy from the environment (NODE_USE_ENV_PROXY) goes through the built-in fetch and gives the same message', async () => {
    const params = { model: 'claude-fake', max_tokens: 100, messages: [{ role: 'user' as const, content: 'go' }] };
    fake.enqueue(reply(text('Over fetch.')));
    const direct = await (
      await streamMessages({ apiKey: 'sk-test', baseURL: fake.url, timeoutMs: 10_000 }, params, new AbortController().signal)
    ).finalMessage();
    fake.enqueue(reply(text('Over fetch.')));
    process.env.NODE_USE_ENV_PROXY = '1';
    try {
      const proxied = await (
        await streamMessages({ apiKey: 'sk-test', baseURL: fake.url, timeoutMs: 10_000 }, params, new AbortController().signal)
      ).finalMessage();
      expect({ ...proxied, id: '' }).toEqual({ ...direct, id: '' });
      // The built-in fetch adds `sec-fetch-mode: cors` to every request and node:http none: this one went through fetch.
      expect(fake.requests.at(-2)!.headers['sec-fetch-mode']).toBeUndefined();
      expect(fake.requests.at(-1)!.headers['sec-fetch-mode']).toBe('cors');
    } finally {
      delete process.env.NODE_USE_ENV_PROXY;
    }
  });
});
