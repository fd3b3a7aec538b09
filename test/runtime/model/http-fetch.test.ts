// huddle's fetch for the model SDK (node:http) must answer as Node's built-in fetch does: each case
// runs both against the same real server and compares what the SDK (or huddle) would see.
import Anthropic from '@anthropic-ai/sdk';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConnectionError } from '../../../src/runtime/model/connection-error.js';
import { httpFetch } from '../../../src/runtime/model/http-fetch.js';
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
  routes.set('/empty', (_request, response) => {
    response.writeHead(204);
    response.end();
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const both = [
  ['built-in fetch', fetch],
  ['httpFetch', httpFetch],
] as const;

/** What a caller can see of a response: status, the headers named, the body as text. */
async function seen(response: Response): Promise<unknown> {
  return {
    status: response.status,
    ok: response.ok,
    type: response.headers.get('content-type'),
    retry: response.headers.get('retry-after'),
    body: await response.text(),
  };
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

describe('httpFetch answers as the built-in fetch does', () => {
  it('status, headers, a posted body and the answer', async () => {
    const [a, b] = await Promise.all(
      both.map(async ([, f]) => seen(await f(`${base}/echo`, { method: 'POST', headers: new Headers({ 'x-huddle': 'yes' }), body: '{"q":1}' }))),
    );
    expect(b).toEqual(a);
    expect(JSON.parse((b as { body: string }).body)).toEqual({ method: 'POST', body: '{"q":1}', header: 'yes' });
  });

  it('a compressed body comes out as it was, and a 204 has none', async () => {
    for (const path of ['/gzip', '/empty']) {
      const [a, b] = await Promise.all(both.map(async ([, f]) => seen(await f(`${base}${path}`))));
      expect(b, path).toEqual(a);
    }
  });

  it('nothing listening: the same TypeError, cause code and connection line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const [a, b] = await Promise.all(both.map(([, f]) => failure(f(`${url}/v1/messages`, { method: 'POST', body: '{}' }))));
    expect(b).toEqual(a);
    expect(b).toMatchObject({ kind: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' });
    const lines = await Promise.all(both.map(([, f]) => f(`${url}/v1/messages`).catch((error: unknown) => describeConnectionError(error, url))));
    expect(lines[1]).toBe(lines[0]);
  });

  it('a status a Response cannot hold (600, from a gateway of its own) fails the call, never the process', async () => {
    // The built-in fetch hands 600 over; a Response made here cannot hold it, so the call fails as a bad answer.
    const error = await httpFetch(`${base}/odd`).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as Error).name).toBe('RangeError');
  });

  it.each(both)('TLS spoken to a plain HTTP port: %s fails with a connection line that says TLS failed', async (_name, fetcher) => {
    const error = await fetcher(base.replace('http:', 'https:') + '/echo').then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(describeConnectionError(error, base.replace('http:', 'https:'))).toMatch(/^connection to 127\.0\.0\.1:\d+ failed: TLS failed \((ERR_SSL_|EPROTO: )/);
  });

  it('a connection cut in the body fails the read the same way', async () => {
    const [a, b] = (await Promise.all(both.map(async ([, f]) => failure((await f(`${base}/cut`)).text())))) as Array<{ code?: string }>;
    // The cause is the socket's own error (undici names it UND_ERR_SOCKET, Node ECONNRESET); huddle shows the message.
    expect({ ...b, code: undefined }).toEqual({ ...a, code: undefined });
    expect(b).toMatchObject({ kind: 'TypeError', message: 'terminated', code: 'ECONNRESET' });
  });

  it('an abort before the answer and one during the body end with the AbortError', async () => {
    const before = await Promise.all(
      both.map(([, f]) => {
        const controller = new AbortController();
        const pending = f(`${base}/slow`, { signal: controller.signal });
        controller.abort();
        return failure(pending);
      }),
    );
    expect(before[1]).toEqual(before[0]);
    const during = await Promise.all(
      both.map(async ([, f]) => {
        const controller = new AbortController();
        const response = await f(`${base}/slow`, { signal: controller.signal });
        const reader = response.body!.getReader();
        await reader.read();
        controller.abort();
        return failure(reader.read());
      }),
    );
    expect(during[1]).toEqual(during[0]);
    expect(during[1]).toMatchObject({ name: 'AbortError' });
  });
});

describe('the model SDK over httpFetch', () => {
  let fake: FakeApi;
  beforeAll(async () => {
    fake = await startFakeApi();
  });
  afterAll(() => fake.close());

  it('streams the same message as over the built-in fetch', async () => {
    const messages = [];
    for (const [, f] of both) {
      fake.enqueue(reply(text('Round 1.'), toolUse('bash', { command: 'cat out/a.txt' }, 'toolu_1')));
      const client = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0, logLevel: 'off', fetch: f });
      const message = await client.messages.stream({ model: 'claude-fake', max_tokens: 100, messages: [{ role: 'user', content: 'go' }] }).finalMessage();
      messages.push({ ...message, id: '' });
    }
    expect(messages[1]).toEqual(messages[0]);
    expect(messages[1]!.content).toEqual([
      { type: 'text', text: 'Round 1.' },
      { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'cat out/a.txt' } },
    ]);
  });
});
