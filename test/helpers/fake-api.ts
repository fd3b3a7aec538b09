/**
 * A fake Anthropic Messages API on node:http, for tests and benchmarks.
 *
 * The real @anthropic-ai/sdk talks to it via `baseURL: fake.url`. It answers
 * `POST /v1/messages` with scripted responses (streamed with the exact SSE
 * framing of the Messages API: `event:`, `data:`, blank line; or as plain JSON) and records every request.
 *
 * Constraints: this file imports only `node:` built-ins and uses only erasable
 * TypeScript syntax, because Node 24 loads it directly (type stripping) from the
 * benchmark script and from `fake-api-server.ts`.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CacheRuleError, PromptCache, tokensOf, type CacheAccount, type PromptCacheOptions } from './prompt-cache.ts';

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export type Block = { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: unknown };

export type Usage = {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
};

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'pause_turn' | 'refusal';

export type Scripted =
  | {
      kind: 'message';
      content: Block[];
      stopReason?: StopReason;
      usage?: Usage;
      /** Milliseconds between SSE events (streaming); a single delay before the JSON reply (non-streaming). */
      delayMs?: number;
      /** Characters per text_delta, default 8. */
      textChunk?: number;
    }
  /** A plain HTTP error, e.g. 429 + retry-after, 529 overloaded, 500. `body` defaults to an Anthropic-style error. */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** The stream starts, then the socket is destroyed mid-stream. */
  | { kind: 'cut'; content: Block[]; afterEvents?: number }
  /** The stream starts, then `event: error` (default overloaded_error). */
  | { kind: 'error_event'; errorType?: string; afterEvents?: number }
  /** The stream starts, then a `data:` line that is not JSON. */
  | { kind: 'malformed'; afterEvents?: number }
  /** Sends message_start (and the first text delta, if content starts with text), then nothing until the client disconnects. */
  | { kind: 'hang'; content?: Block[] };

export interface RecordedRequest {
  agent: string | undefined;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  at: number;
  /** How the request was billed under the caching rules (prompt-cache.ts); absent for other endpoints. */
  cache?: CacheAccount;
}

export interface FakeApi {
  /** e.g. http://127.0.0.1:41234 (no /v1; the SDK appends /v1/messages). */
  url: string;
  requests: RecordedRequest[];
  /** Requests that found no scripted response. */
  unscripted: RecordedRequest[];
  /** Messages requests being answered right now, and the most there ever were at once. */
  concurrency: { now: number; max: number };
  /** Queue responses for any agent (used when no agent-specific queue matches). */
  enqueue(...responses: Scripted[]): void;
  /**
   * Queue responses for the agent whose own system block begins `You are '<name>'`: the block after the one
   * every agent of a role shares (docs/contract.md#injected-turns), or the only block.
   */
  script(agent: string, ...responses: Scripted[]): void;
  /**
   * Or a function that decides each response (takes precedence when it returns something). It may
   * answer later (a promise): a test holds a request until a condition holds, e.g. others arrived.
   */
  respond(fn: (req: RecordedRequest) => Scripted | undefined | Promise<Scripted | undefined>): void;
  /** Resolves when the number of requests reaches n (for waiting on real conditions in tests). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------

export function text(t: string): Block {
  return { type: 'text', text: t };
}

export function toolUse(name: string, input: unknown, id?: string): Block {
  return id === undefined ? { type: 'tool_use', name, input } : { type: 'tool_use', id, name, input };
}

/** stopReason 'tool_use' if any tool_use block, else 'end_turn'. */
export function reply(...blocks: Block[]): Scripted {
  const stopReason: StopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  return { kind: 'message', content: blocks, stopReason };
}

export function replyText(t: string): Scripted {
  return reply(text(t));
}

/** 529 {type:'error', error:{type:'overloaded_error', message:'Overloaded'}} */
export function overloaded(): Scripted {
  return { kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
}

/** 429 with a retry-after header (seconds). */
export function rateLimited(retryAfterSeconds: number): Scripted {
  return {
    kind: 'status',
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
  };
}

// ---------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------

const NO_SCRIPT_TEXT = '[fake-api: no scripted response]';
const AGENT_RE = /^You are '([^']+)'/;
const APPENDED_AGENT_RE = /^You are '([^']+)', role: /m;

type Frame = { event: string; data: unknown };

type ResolvedBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

type Waiter = { n: number; resolve: () => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

type Sleeper = { timer: ReturnType<typeof setTimeout>; resolve: () => void };

function errorTypeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

function errorBody(type: string, message: string, requestId?: string): unknown {
  const body: Record<string, unknown> = { type: 'error', error: { type, message } };
  if (requestId !== undefined) body['request_id'] = requestId;
  return body;
}

function agentOf(body: any): string | undefined {
  const sys: unknown = body && typeof body === 'object' ? body.system : undefined;
  const texts: string[] =
    typeof sys === 'string' ? [sys] : Array.isArray(sys) ? sys.flatMap((b: any) => (b && typeof b.text === 'string' ? [b.text] : [])) : [];
  // huddle's agents: the identity begins a system block, the agent's own (after the shared one, or the only one).
  for (const block of texts) {
    const m = AGENT_RE.exec(block);
    if (m) return m[1];
  }
  // An external agent CLI (Claude Code) puts its own prompt first and huddle's identity line after
  // it (--append-system-prompt): found at the start of any line of any system block.
  const appended = APPENDED_AGENT_RE.exec(texts.join('\n'));
  return appended ? appended[1] : undefined;
}

/** Split by code points, so surrogate pairs are never cut in half. */
function chunkString(s: string, size: number): string[] {
  const cps = Array.from(s);
  const out: string[] = [];
  const n = Math.max(1, Math.floor(size));
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(''));
  return out;
}

/** JSON pieces for input_json_delta: at least two when the JSON has at least two characters. */
function jsonPieces(json: string): string[] {
  const size = Math.max(1, Math.min(16, Math.ceil(json.length / 2)));
  return chunkString(json, size);
}

function generatedChars(blocks: ResolvedBlock[]): number {
  let n = 0;
  for (const b of blocks) n += b.type === 'text' ? b.text.length : b.name.length + JSON.stringify(b.input ?? {}).length;
  return n;
}

/** Tokens of a count_tokens request: the same per-block estimate as the caching rules. */
function flattenForCount(body: any): { blocks: number } {
  const parts: unknown[] = [...(Array.isArray(body.tools) ? body.tools : []), body.system ?? '', ...(Array.isArray(body.messages) ? body.messages : [])];
  return { blocks: parts.reduce<number>((sum, part) => sum + tokensOf(part), 0) };
}

function sseFrame(f: Frame): string {
  return `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`;
}

export interface FakeApiOptions {
  defaultModel?: string;
  /**
   * Prompt caching as the real API does it (prompt-cache.ts): on by default. Usage not scripted
   * reports cache reads and writes; scripted usage is reported as scripted. `false`: no cache.
   */
  caching?: boolean | PromptCacheOptions;
}

export function startFakeApi(opts?: FakeApiOptions): Promise<FakeApi> {
  const defaultModel = opts?.defaultModel ?? 'claude-fake';
  const cache = opts?.caching === false ? undefined : new PromptCache(typeof opts?.caching === 'object' ? opts.caching : {});
  const requests: RecordedRequest[] = [];
  const unscripted: RecordedRequest[] = [];
  const shared: Scripted[] = [];
  const agents = new Map<string, Scripted[]>();
  let responder: ((req: RecordedRequest) => Scripted | undefined | Promise<Scripted | undefined>) | undefined;
  const waiters = new Set<Waiter>();
  const sleepers = new Set<Sleeper>();
  const sockets = new Set<Socket>();
  const concurrency = { now: 0, max: 0 };
  let reqCounter = 0;
  let msgCounter = 0;
  let toolCounter = 0;
  let closed = false;
  let closing: Promise<void> | undefined;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const s: Sleeper = {
        timer: setTimeout(() => {
          sleepers.delete(s);
          resolve();
        }, ms),
        resolve,
      };
      sleepers.add(s);
    });
  }

  function checkWaiters(): void {
    for (const w of waiters) {
      if (requests.length >= w.n) {
        clearTimeout(w.timer);
        waiters.delete(w);
        w.resolve();
      }
    }
  }

  function record(req: IncomingMessage, path: string, body: any): RecordedRequest {
    const r: RecordedRequest = {
      agent: agentOf(body),
      method: req.method ?? 'GET',
      path,
      headers: { ...req.headers },
      body,
      at: Date.now(),
    };
    requests.push(r);
    checkWaiters();
    return r;
  }

  async function pick(r: RecordedRequest): Promise<Scripted | undefined> {
    if (responder) {
      const s = await responder(r);
      if (s !== undefined) return s;
    }
    if (r.agent !== undefined) {
      const q = agents.get(r.agent);
      if (q && q.length > 0) return q.shift();
    }
    if (shared.length > 0) return shared.shift();
    return undefined;
  }

  function resolveBlocks(blocks: Block[]): ResolvedBlock[] {
    return blocks.map((b) =>
      b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', id: b.id ?? `toolu_fake_${++toolCounter}`, name: b.name, input: b.input ?? {} },
    );
  }

  /** Everything needed to stream or return one assistant message. */
  function buildMessage(
    body: any,
    rawLength: number,
    content: Block[],
    stopReason: StopReason,
    usage: Usage | undefined,
    billed?: CacheAccount,
  ): { message: Record<string, unknown>; startUsage: Record<string, number>; outputTokens: number; blocks: ResolvedBlock[] } {
    const blocks = resolveBlocks(content);
    const model = body && typeof body.model === 'string' ? body.model : defaultModel;
    const inputTokens = usage?.input_tokens ?? (usage ? undefined : billed?.uncached) ?? Math.max(1, Math.ceil(rawLength / 4));
    const outputTokens = usage?.output_tokens ?? Math.max(1, Math.ceil(generatedChars(blocks) / 4));
    const startUsage = {
      input_tokens: inputTokens,
      output_tokens: 1,
      cache_creation_input_tokens: usage?.cache_creation_input_tokens ?? (usage ? undefined : billed?.written) ?? 0,
      cache_read_input_tokens: usage?.cache_read_input_tokens ?? (usage ? undefined : billed?.read) ?? 0,
    };
    const message = {
      id: `msg_fake_${++msgCounter}`,
      type: 'message',
      role: 'assistant',
      model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { ...startUsage, output_tokens: outputTokens },
    };
    return { message, startUsage, outputTokens, blocks };
  }

  function buildFrames(
    built: { message: Record<string, unknown>; startUsage: Record<string, number>; outputTokens: number; blocks: ResolvedBlock[] },
    textChunk: number,
  ): Frame[] {
    const { message, startUsage, outputTokens, blocks } = built;
    const frames: Frame[] = [];
    frames.push({
      event: 'message_start',
      data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } },
    });
    let pinged = false;
    const ping = (): void => {
      if (!pinged) {
        frames.push({ event: 'ping', data: { type: 'ping' } });
        pinged = true;
      }
    };
    blocks.forEach((b, index) => {
      if (b.type === 'text') {
        frames.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
        ping();
        for (const piece of chunkString(b.text, textChunk)) {
          frames.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
        }
      } else {
        frames.push({
          event: 'content_block_start',
          data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } },
        });
        ping();
        frames.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } } });
        for (const piece of jsonPieces(JSON.stringify(b.input ?? {}))) {
          frames.push({
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
          });
        }
      }
      frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    });
    ping();
    frames.push({
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: message['stop_reason'], stop_sequence: null }, usage: { output_tokens: outputTokens } },
    });
    frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return frames;
  }

  // --- low-level writing -----------------------------------------------------

  function gone(res: ServerResponse): boolean {
    return closed || res.destroyed || res.writableEnded || res.socket === null || res.socket.destroyed;
  }

  function waitDrainOrClose(res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  /** Write and wait until the chunk is handed to the socket (or the connection is gone). */
  function writeFlushed(res: ServerResponse, chunk: string): Promise<void> {
    return new Promise((resolve) => {
      if (gone(res)) return resolve();
      const done = (): void => {
        res.off('close', done);
        resolve();
      };
      res.on('close', done);
      res.write(chunk, () => done());
    });
  }

  /** Write frames in order, `delayMs` apart. Returns false if the connection went away. */
  async function writeFrames(res: ServerResponse, frames: Frame[], delayMs: number): Promise<boolean> {
    for (let i = 0; i < frames.length; i++) {
      if (i > 0 && delayMs > 0) await sleep(delayMs);
      if (gone(res)) return false;
      if (!res.write(sseFrame(frames[i] as Frame))) await waitDrainOrClose(res);
    }
    return !gone(res);
  }

  function startSse(res: ServerResponse, requestId: string): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': requestId,
    });
    res.flushHeaders();
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, requestId: string, headers?: Record<string, string>): void {
    if (gone(res)) return;
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      ...(headers ?? {}),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      'request-id': requestId,
    });
    res.end(payload);
  }

  function waitForClose(res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      if (res.destroyed || res.socket === null || res.socket.destroyed) return resolve();
      res.once('close', () => resolve());
    });
  }

  async function destroyAfterFlush(res: ServerResponse, lastChunk: string): Promise<void> {
    await writeFlushed(res, lastChunk);
    res.socket?.destroy();
    res.destroy();
  }

  // --- request handling --------------------------------------------------------

  async function serve(s: Scripted, body: any, rawLength: number, res: ServerResponse, requestId: string, billed?: CacheAccount): Promise<void> {
    const streaming = body && typeof body === 'object' && body.stream === true;

    switch (s.kind) {
      case 'status': {
        const b = s.body ?? errorBody(errorTypeForStatus(s.status), `fake-api scripted status ${s.status}`, requestId);
        sendJson(res, s.status, b, requestId, s.headers);
        return;
      }

      case 'message': {
        const built = buildMessage(
          body,
          rawLength,
          s.content,
          s.stopReason ?? (s.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
          s.usage,
          billed,
        );
        const delayMs = s.delayMs ?? 0;
        if (!streaming) {
          if (delayMs > 0) await sleep(delayMs);
          sendJson(res, 200, built.message, requestId);
          return;
        }
        startSse(res, requestId);
        if (await writeFrames(res, buildFrames(built, s.textChunk ?? 8), delayMs)) res.end();
        return;
      }

      case 'cut': {
        const built = buildMessage(body, rawLength, s.content, 'end_turn', undefined, billed);
        if (!streaming) {
          const json = JSON.stringify(built.message);
          res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
          await destroyAfterFlush(res, json.slice(0, Math.max(1, Math.floor(json.length / 2))));
          return;
        }
        const frames = buildFrames(built, 8);
        const after = Math.max(1, Math.min(frames.length - 1, s.afterEvents ?? Math.max(2, Math.floor(frames.length / 2))));
        startSse(res, requestId);
        if (!(await writeFrames(res, frames.slice(0, after - 1), 0))) return;
        await destroyAfterFlush(res, sseFrame(frames[after - 1] as Frame));
        return;
      }

      case 'error_event':
      case 'malformed': {
        const errorType = s.kind === 'error_event' ? (s.errorType ?? 'overloaded_error') : 'overloaded_error';
        if (!streaming) {
          if (s.kind === 'error_event') {
            const status = errorType === 'overloaded_error' ? 529 : 500;
            sendJson(res, status, errorBody(errorType, errorType === 'overloaded_error' ? 'Overloaded' : 'Internal server error', requestId), requestId);
          } else {
            res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
            res.end('{not json');
          }
          return;
        }
        const built = buildMessage(body, rawLength, [text('Partial output before the failure.')], 'end_turn', undefined, billed);
        const frames = buildFrames(built, 8);
        const after = Math.max(0, Math.min(frames.length - 1, s.afterEvents ?? 4));
        startSse(res, requestId);
        if (!(await writeFrames(res, frames.slice(0, after), 0))) return;
        if (s.kind === 'error_event') {
          const message = errorType === 'overloaded_error' ? 'Overloaded' : `fake-api ${errorType}`;
          res.write(sseFrame({ event: 'error', data: { type: 'error', error: { type: errorType, message } } }));
        } else {
          res.write('event: content_block_delta\ndata: {not json\n\n');
        }
        res.end();
        return;
      }

      case 'hang': {
        if (!streaming) {
          res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
          res.flushHeaders();
          await waitForClose(res);
          return;
        }
        const built = buildMessage(body, rawLength, s.content ?? [], 'end_turn', undefined, billed);
        const frames = buildFrames(built, 8);
        // message_start, then (if the first block is text) its start, the ping and the first text delta.
        let upto = 1;
        const first = built.blocks[0];
        if (first && first.type === 'text' && first.text.length > 0) upto = 4;
        startSse(res, requestId);
        await writeFrames(res, frames.slice(0, upto), 0);
        await waitForClose(res);
        return;
      }
    }
  }

  function readBody(req: IncomingMessage): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `req_fake_${++reqCounter}`;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let raw = '';
    try {
      raw = await readBody(req);
    } catch {
      // Client went away while sending; record what we have.
    }
    let body: any = undefined;
    let parsed = false;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
        parsed = true;
      } catch {
        body = raw;
      }
    }
    const r = record(req, path, body);
    if (path === '/v1/messages') {
      concurrency.now += 1;
      concurrency.max = Math.max(concurrency.max, concurrency.now);
      res.once('close', () => (concurrency.now -= 1));
    }

    if (req.method === 'POST' && path === '/v1/messages/count_tokens' && parsed && body && typeof body === 'object') {
      // Claude Code may count before it sends; the same estimate the caching rules use.
      const { blocks } = flattenForCount(body);
      sendJson(res, 200, { input_tokens: blocks }, requestId);
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      sendJson(res, 404, errorBody('not_found_error', `fake-api: no route for ${req.method ?? '?'} ${path}`, requestId), requestId);
      return;
    }
    if (!parsed || body === null || typeof body !== 'object') {
      sendJson(res, 400, errorBody('invalid_request_error', 'fake-api: request body is not a JSON object', requestId), requestId);
      return;
    }

    if (cache) {
      try {
        r.cache = cache.account(body);
      } catch (error) {
        if (!(error instanceof CacheRuleError)) throw error;
        sendJson(res, 400, errorBody('invalid_request_error', error.message, requestId), requestId);
        return;
      }
    }
    let s: Scripted | undefined;
    try {
      s = await pick(r);
    } catch (e) {
      sendJson(res, 500, errorBody('api_error', `fake-api: respond() threw: ${String(e)}`, requestId), requestId);
      return;
    }
    if (s === undefined) {
      unscripted.push(r);
      s = replyText(NO_SCRIPT_TEXT);
    }
    await serve(s, body, raw.length, res, requestId, r.cache);
  }

  const server: Server = createServer((req, res) => {
    res.on('error', () => {
      /* the client went away; nothing to do */
    });
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent && !gone(res)) {
        sendJson(res, 500, errorBody('api_error', `fake-api internal error: ${String(e)}`), 'req_fake_error');
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (sock: Socket) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });

  const api: FakeApi = {
    url: '',
    requests,
    unscripted,
    concurrency,
    enqueue(...responses: Scripted[]): void {
      shared.push(...responses);
    },
    script(agent: string, ...responses: Scripted[]): void {
      let q = agents.get(agent);
      if (!q) {
        q = [];
        agents.set(agent, q);
      }
      q.push(...responses);
    },
    respond(fn: (req: RecordedRequest) => Scripted | undefined | Promise<Scripted | undefined>): void {
      responder = fn;
    },
    waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
      if (requests.length >= n) return Promise.resolve();
      if (closed) return Promise.reject(new Error(`fake-api closed with ${requests.length}/${n} requests`));
      return new Promise((resolve, reject) => {
        const w: Waiter = {
          n,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(w);
            reject(new Error(`fake-api: timed out after ${timeoutMs} ms waiting for ${n} requests (have ${requests.length})`));
          }, timeoutMs),
        };
        waiters.add(w);
      });
    },
    close(): Promise<void> {
      if (closing) return closing;
      closed = true;
      for (const w of waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`fake-api closed with ${requests.length}/${w.n} requests`));
      }
      waiters.clear();
      for (const s of sleepers) {
        clearTimeout(s.timer);
        s.resolve();
      }
      sleepers.clear();
      closing = new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const sock of sockets) sock.destroy();
        sockets.clear();
      });
      return closing;
    },
  };

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const addr = server.address() as AddressInfo;
      api.url = `http://127.0.0.1:${addr.port}`;
      resolve(api);
    });
  });
}
