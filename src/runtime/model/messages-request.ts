// One streamed request to the Messages API (POST /v1/messages), made by huddle over node:http
// (http-request.ts) and read by the SDK's own MessageStream, which accumulates the events into the
// final message exactly as the SDK's client does. The SDK's client is not used: building its
// request reaches for the global Headers, whose first use loads Node's bundled undici, and its
// module graph is ten times MessageStream's; huddle turns its retries off and counts usage itself
// anyway (model-client.ts). The SSE the API sends becomes the JSON lines MessageStream reads.
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { MessageCreateParamsBase } from '@anthropic-ai/sdk/resources/messages';
import { createParser } from 'eventsource-parser';
import { customHeaders } from '../custom-headers.js';
import { definitionJson } from './definition-json.js';
import { httpRequest, type HttpAnswer } from './http-request.js';

declare const __HUDDLE_VERSION__: string;
const VERSION = typeof __HUDDLE_VERSION__ === 'string' ? __HUDDLE_VERSION__ : '0.0.0-dev';

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
/**
 * The API version the pinned SDK's client names (its MessageStream reads that version's events); a test
 * compares huddle's request with the client's, so an SDK upgrade that moves it is caught.
 */
const ANTHROPIC_VERSION = '2026-10-21';
/** An error answer's body is read up to this much (it names the error; nothing larger is shown). */
const MAX_ERROR_BODY = 64 * 1024;

export interface MessagesEndpoint {
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  authToken?: string | undefined;
  /** Sending the request until the answer's headers (the SDK's timeout); the stream's silence is the caller's to time. */
  timeoutMs: number;
}

/** The API answered with an error status (4xx, 5xx): its parsed body and headers are kept. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly header: (name: string) => string | undefined,
  ) {
    super(body === '' ? `${status} status code (no body)` : `${status} ${typeof body === 'string' ? body : JSON.stringify(body)}`);
    this.name = 'HttpStatusError';
  }
}

/** An `event: error` inside an otherwise successful stream (an overload mid-answer, say). */
export class StreamErrorEvent extends Error {
  constructor(readonly body: unknown) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
    this.name = 'StreamErrorEvent';
  }
}

/** No answer's headers within the request timeout. */
export class RequestTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request timed out after ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

type StreamModule = typeof import('@anthropic-ai/sdk/lib/MessageStream');
let streamModule: Promise<StreamModule> | undefined;

/** MessageStream and what it imports (~40 KB), loaded by the first call, not at start. */
function loadStream(): Promise<StreamModule> {
  return (streamModule ??= import('@anthropic-ai/sdk/lib/MessageStream'));
}

/** `{baseURL}/v1/messages`, a base URL's own path kept (a gateway's `/anthropic`), as the SDK joins them. */
export function messagesURL(baseURL: string | undefined): URL {
  const base = baseURL || DEFAULT_BASE_URL;
  return new URL(base.endsWith('/') ? `${base}v1/messages` : `${base}/v1/messages`);
}

/** The last base URL's endpoint, parsed once rather than per call (node:http only reads it). */
let lastURL: { baseURL: string | undefined; url: URL } | undefined;

export function endpointURL(baseURL: string | undefined): URL {
  if (!lastURL || lastURL.baseURL !== baseURL) lastURL = { baseURL, url: messagesURL(baseURL) };
  return lastURL.url;
}

/**
 * The request's JSON, byte for byte what JSON.stringify({ ...params, stream: true }) writes (the prompt
 * cache reads a prefix of these bytes): the tools, last in the request, are each a definition whose
 * JSON is made once (definition-json.ts), not on every call.
 */
export function requestBody(params: MessageCreateParamsBase): string {
  const { tools, ...rest } = params;
  const keys = Object.keys(params);
  if (!tools || keys.at(-1) !== 'tools' || 'stream' in params) return JSON.stringify({ ...params, stream: true });
  const head = JSON.stringify(rest);
  if (head === '{}') return JSON.stringify({ ...params, stream: true });
  return `${head.slice(0, -1)},"tools":[${tools.map(definitionJson).join(',')}],"stream":true}`;
}

/**
 * Sends `params` as a streamed request; resolves once the API answered 2xx, with the stream its events
 * feed (handed to `attach` first, before any event). An error status rejects with HttpStatusError, a connection that fails with fetch's
 * TypeError('fetch failed'), no headers in time with RequestTimeoutError, `signal` with its reason.
 * Aborting `signal` later ends the stream as the SDK ends an aborted one (APIUserAbortError).
 */
export async function streamMessages(
  endpoint: MessagesEndpoint,
  params: MessageCreateParamsBase,
  signal: AbortSignal,
  attach: (stream: MessageStream) => void = () => undefined,
): Promise<MessageStream> {
  const { MessageStream } = await loadStream();
  const local = new AbortController();
  const follow = () => local.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  const timer = setTimeout(() => local.abort(new RequestTimeoutError(endpoint.timeoutMs)), endpoint.timeoutMs);
  let answer: HttpAnswer;
  try {
    answer = await httpRequest(endpointURL(endpoint.baseURL), {
      method: 'POST',
      headers: requestHeaders(endpoint),
      body: requestBody(params),
      signal: local.signal,
    });
  } catch (error) {
    signal.removeEventListener('abort', follow);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (answer.status < 200 || answer.status > 299) {
    // Until its body is read, an error answer is ended by the caller's signal (an interrupt, a silence) as a stream is.
    try {
      throw new HttpStatusError(answer.status, await errorBody(answer), answer.header);
    } finally {
      signal.removeEventListener('abort', follow);
    }
  }
  const stream = MessageStream.fromReadableStream(jsonLines(answer.body) as unknown as ReadableStream);
  // Before any event can arrive: the caller's listeners see the first one.
  attach(stream);
  // The SDK ends a stream whose own controller was aborted with APIUserAbortError, never with a half message.
  const abortStream = () => stream.abort();
  if (local.signal.aborted) abortStream();
  else local.signal.addEventListener('abort', abortStream, { once: true });
  const done = () => signal.removeEventListener('abort', follow);
  stream.on('end', done);
  stream.on('error', done);
  stream.on('abort', done);
  return stream;
}

function requestHeaders(endpoint: MessagesEndpoint): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'user-agent': `huddle/${VERSION}`,
  };
  // As the SDK's client sends them: either credential as a bearer token, the API key when both are set.
  const credential = endpoint.apiKey || endpoint.authToken;
  if (credential) headers.authorization = `Bearer ${credential}`;
  // ANTHROPIC_CUSTOM_HEADERS after huddle's own, as the SDK's client adds them.
  Object.assign(headers, customHeaders());
  return headers;
}

/** An error answer's body: its JSON when it is JSON, else its text; '' when it could not be read. */
async function errorBody(answer: HttpAnswer): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of answer.body) {
      chunks.push(Buffer.from(chunk));
      size += chunk.byteLength;
      if (size >= MAX_ERROR_BODY) {
        answer.discard();
        break;
      }
    }
  } catch {
    // A body cut while read: the status alone says what went wrong.
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The answer's server-sent events (read by eventsource-parser) as the JSON lines MessageStream reads: one
 * line per named event with data, `ping` left out, as the SDK's own SSE reader does; `event: error` fails
 * the stream once the events read before it in the same chunk are handed on (message_start's usage, the text so far).
 */
export async function* jsonLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let lines = '';
  let failure: StreamErrorEvent | undefined;
  const parser = createParser({
    onEvent({ event, data }) {
      if (failure || event === undefined || event === 'ping') return;
      if (event === 'error') failure = new StreamErrorEvent(parseOrText(data));
      // JSON spread over several data lines is the same JSON on one (a newline may only sit between its tokens).
      else if (data) lines += `${data.replaceAll('\n', ' ')}\n`;
    },
  });
  const decoder = new TextDecoder();
  const taken = () => {
    const out = lines;
    lines = '';
    return out;
  };
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (lines) yield taken();
    if (failure) throw failure;
  }
  parser.feed(decoder.decode());
  if (lines) yield taken();
  if (failure) throw failure;
}

function parseOrText(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}
