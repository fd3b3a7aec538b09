// One streamed call to the Messages API (messages-request.ts: huddle's request, the SDK's
// MessageStream), with huddle's own retry loop: every retry is reported, honours retry-after, and
// also covers a dropped connection or an `event: error` in the middle of a stream.
import type { Message, MessageParam, MessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { HuddleConfig } from '../config.js';
import { markMessages, markPrefix } from './cache-breakpoints.js';
import { costOf, toTokenUsage, type TokenUsage } from './pricing.js';
import { describeConnectionError } from './connection-error.js';
import { HttpStatusError, RequestTimeoutError, StreamErrorEvent, streamMessages, type MessagesEndpoint } from './messages-request.js';
import type { ToolDefinitionParam } from '../tools/registry.js';
import { CallGovernor, WaitAbortedError, type CallWait } from './call-governor.js';
import { DEFAULT_CACHE_WARMUP_MS, PrefixGate, PrefixWaitAbortedError, prefixKey, type PrefixTicket } from './prefix-gate.js';
import type { SystemInput } from './system-prompt.js';

export interface ModelRequest {
  model: string;
  /** One block, or a shared block and the agent's own (system-prompt.ts). */
  system: SystemInput;
  messages: MessageParam[];
  tools: ToolDefinitionParam[];
  /**
   * How many of the leading tools every agent of the team sends alike (ToolRegistry.sharedPrefixLength):
   * the first cache breakpoint goes after them, so agents of other roles read them from the cache.
   * Default: all.
   */
  sharedTools?: number;
  maxTokens: number;
  /**
   * `prefix`: only the tools and system prompt are marked for the prompt cache (a one-off request
   * whose messages no later call repeats); default `conversation`: the rolling breakpoints too
   * (cache-breakpoints.ts).
   */
  cache?: 'conversation' | 'prefix';
}

export interface RetryNotice {
  attempt: number;
  /** Retries this call may take in all (the console shows `retrying N of M`). */
  maxRetries: number;
  delayMs: number;
  status: number | undefined;
  reason: string;
}

/** What an attempt that ended without a message had already been billed (message_start and message_delta usage). */
export interface PartialUsage {
  usage: TokenUsage;
  costUsd: number;
  /** What became of the attempt: retried, interrupted by the person, or failed for good. */
  outcome: 'retried' | 'interrupted' | 'failed';
}

export interface ModelCallHooks {
  signal?: AbortSignal;
  onText?(delta: string): void;
  onRetry?(notice: RetryNotice): void;
  /**
   * An attempt ended without a message but the API had reported usage for it: it is billed all
   * the same, so it is counted (called before the retry, or before the error is thrown).
   */
  onPartialUsage?(partial: PartialUsage): void;
  /**
   * The call waits for the team's governor (a free slot, or the shared back-off) or for a sibling's
   * first call to write the prompt-cache prefix they share; `undefined` once it is sent.
   */
  onWait?(wait: CallWait | undefined): void;
}

export interface ModelCallResult {
  message: Message;
  usage: TokenUsage;
  costUsd: number;
  attempts: number;
}

/** The turn was interrupted (Esc, /interrupt, shutdown): not an error of the model. */
export class InterruptedError extends Error {
  constructor() {
    super('interrupted');
    this.name = 'InterruptedError';
  }
}

/** The model call failed for good: not retryable, or out of retries. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface ModelClientOptions {
  apiKey?: string | undefined;
  authToken?: string | undefined;
  baseURL?: string | undefined;
  maxRetries: number;
  retryBaseMs: number;
  /** The whole request, from sending to the last byte (HUDDLE_REQUEST_TIMEOUT_MS, default 10 min). */
  timeoutMs: number;
  /** No stream event for this long: the stream counts as cut and is retried (HUDDLE_STREAM_IDLE_MS, default 60 s; 0: never). */
  streamIdleMs?: number;
  /** --fallback-model: once a call stays overloaded (529) after every retry, it and every later call use this model. */
  fallbackModel?: string | undefined;
  /** The team's cap on calls in flight and its shared back-off (call-governor.ts); none: every call goes at once. */
  governor?: CallGovernor | undefined;
  /** Calls with the same prefix wait for the first one's cache write (prefix-gate.ts); none: they go at once. */
  prefixGate?: PrefixGate | undefined;
}

export const DEFAULT_STREAM_IDLE_MS = 60_000;

/** Our own abort of a stream that went silent; told apart from the person's interrupt. */
class StreamIdleError extends Error {
  constructor(readonly idleMs: number) {
    super(
      `the response stream sent nothing for ${idleMs >= 1000 ? `${Math.round(idleMs / 1000)} s` : `${idleMs} ms`} (HUDDLE_STREAM_IDLE_MS); treated as a dropped connection`,
    );
    this.name = 'StreamIdleError';
  }
}

export function modelClientOptions(config: HuddleConfig): ModelClientOptions {
  return {
    apiKey: config.apiKey,
    authToken: config.authToken,
    baseURL: config.baseURL,
    maxRetries: config.maxRetries,
    retryBaseMs: config.retryBaseMs,
    timeoutMs: config.requestTimeoutMs,
    streamIdleMs: config.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
    ...(config.fallbackModel ? { fallbackModel: config.fallbackModel } : {}),
    // One client serves every agent of the process: its governor is the team's (here).
    governor: new CallGovernor({ limit: config.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS }),
    prefixGate: new PrefixGate({ maxWaitMs: config.cacheWarmupMs ?? DEFAULT_CACHE_WARMUP_MS }),
  };
}

/** Model calls in flight at once for the whole team (maxConcurrentCalls); 0: no cap. */
export const DEFAULT_MAX_CONCURRENT_CALLS = 8;

/** Anything that can answer a model request; the real client, or a scripted one for demos. */
export interface ModelBackend {
  call(request: ModelRequest, hooks?: ModelCallHooks): Promise<ModelCallResult>;
}

export class ModelClient implements ModelBackend {
  readonly #options: ModelClientOptions;
  readonly #endpoint: MessagesEndpoint;
  /** Set once the configured model stayed overloaded: every call from then on goes to the fallback model. */
  #fellBack = false;

  constructor(options: ModelClientOptions) {
    this.#options = options;
    this.#endpoint = { apiKey: options.apiKey, authToken: options.authToken, baseURL: options.baseURL, timeoutMs: options.timeoutMs };
  }

  /** The team's governor of model calls, when this client has one. */
  get governor(): CallGovernor | undefined {
    return this.#options.governor;
  }

  async call(original: ModelRequest, hooks: ModelCallHooks = {}): Promise<ModelCallResult> {
    const fallback = this.#options.fallbackModel;
    let request = this.#fellBack && fallback ? { ...original, model: fallback } : original;
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(hooks.signal);
      const reported: ReportedUsage = {};
      const billPartial = (outcome: PartialUsage['outcome']) => {
        if (!reported.usage) return;
        hooks.onPartialUsage?.({ usage: reported.usage, costUsd: costOf(request.model, reported.usage), outcome });
      };
      // A sibling writing the same prefix is waited for before a slot is taken: the writer may need one.
      const ticket = await this.#enterPrefix(request, hooks);
      const release = await this.#options.governor?.acquire(hooks.signal, hooks.onWait).catch((error: unknown) => {
        ticket?.done();
        throw error instanceof WaitAbortedError ? new InterruptedError() : error;
      });
      try {
        const message = await this.#streamOnce(request, hooks, reported, ticket);
        release?.();
        const usage = toTokenUsage(message.usage);
        return { message, usage, costUsd: costOf(request.model, usage), attempts: attempt };
      } catch (error) {
        // The slot is freed once a 429/529 has set the team's back-off below, so the call queued
        // behind this one waits it out too rather than meeting the same limit.
        if (hooks.signal?.aborted) {
          release?.();
          billPartial('interrupted');
          throw new InterruptedError();
        }
        const failure =
          error instanceof StreamIdleError ? { retryable: true, status: undefined, reason: error.message } : classify(error, this.#options.baseURL);
        // A server (or proxy) may echo the credentials back in an error body: never pass them on.
        failure.reason = this.#redact(failure.reason);
        const overloaded = failure.status === 529 || /overloaded/.test(failure.reason);
        if (overloaded && attempt > this.#options.maxRetries && fallback && request.model !== fallback) {
          // Claude Code's --fallback-model: this call and every later one go to the fallback.
          this.#fellBack = true;
          hooks.onRetry?.({
            attempt,
            maxRetries: this.#options.maxRetries,
            delayMs: 0,
            status: failure.status,
            reason: `${failure.reason}; switching to the fallback model ${fallback}`,
          });
          request = { ...request, model: fallback };
          attempt = 0;
          continue;
        }
        if (!failure.retryable || attempt > this.#options.maxRetries) {
          release?.();
          billPartial('failed');
          const tries = attempt > 1 ? ` (after ${attempt} attempts)` : '';
          throw new ModelError(`${failure.reason}${tries}`, failure.status);
        }
        billPartial('retried');
        const delayMs = failure.retryAfterMs ?? backoff(attempt, this.#options.retryBaseMs);
        // The API's limits are the team's: every agent's next call waits as long as this one.
        if (failure.status === 429 || failure.status === 529) this.#options.governor?.backOff(delayMs, failure.reason);
        release?.();
        hooks.onRetry?.({ attempt, maxRetries: this.#options.maxRetries, delayMs, status: failure.status, reason: failure.reason });
        await sleep(delayMs, hooks.signal);
      } finally {
        // Whatever ended the attempt (a listener that threw, say), its slot is never kept, nor its siblings held.
        release?.();
        ticket?.done();
      }
    }
  }

  /** Waits while another call writes this request's prefix to the prompt cache (prefix-gate.ts). */
  async #enterPrefix(request: ModelRequest, hooks: ModelCallHooks): Promise<PrefixTicket | undefined> {
    const gate = this.#options.prefixGate;
    if (!gate || gate.maxWaitMs === 0) return undefined;
    // The tools as the agent has them (their marking is the same for every agent): their JSON is kept per definition.
    const { system } = markPrefix(request.system, []);
    const key = prefixKey(request.model, request.tools, system[0]);
    return gate
      .enter(key, hooks.signal, (waiting) => hooks.onWait?.(waiting ? { kind: 'cache_warmup' } : undefined))
      .catch((error: unknown) => {
        throw error instanceof PrefixWaitAbortedError ? new InterruptedError() : error;
      });
  }

  #redact(text: string): string {
    let out = text;
    for (const secret of [this.#options.apiKey, this.#options.authToken]) {
      if (secret && secret.length >= 8) out = out.split(secret).join('[redacted]');
    }
    return out;
  }

  async #streamOnce(request: ModelRequest, hooks: ModelCallHooks, reported: ReportedUsage, ticket?: PrefixTicket): Promise<Message> {
    // Prompt-cache breakpoints on a copy of the request (cache-breakpoints.ts): the stable
    // prefix, and the conversation up to its last message.
    const { system, tools } = markPrefix(request.system, request.tools, request.sharedTools);
    const messages = request.cache === 'prefix' ? request.messages : markMessages(request.messages);
    // A server that stops sending mid-stream is never cut by the request timeout (it covers the
    // whole response, 10 min by default); silence longer than streamIdleMs is, and is retried.
    const idleMs = this.#options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
    const controller = new AbortController();
    const onAbort = () => controller.abort(hooks.signal?.reason);
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    // Made only when the stream goes silent (an Error captures a stack); the one timer is pushed back per event.
    let idle: StreamIdleError | undefined;
    const arm = () => {
      if (idleMs <= 0) return;
      if (timer) timer.refresh();
      else
        timer = setTimeout(() => {
          idle ??= new StreamIdleError(idleMs);
          controller.abort(idle);
        }, idleMs);
    };
    arm();
    try {
      const stream = await streamMessages(
        this.#endpoint,
        { model: request.model, max_tokens: request.maxTokens, system, messages, ...(tools.length ? { tools } : {}) },
        controller.signal,
        (events) => {
          events.on('streamEvent', (event) => {
            arm();
            // The response began: the API has read (or written) the prompt cache, so siblings may go.
            ticket?.landed();
            trackUsage(reported, event);
          });
          if (hooks.onText) events.on('text', (delta) => hooks.onText?.(delta));
        },
      );
      return await stream.finalMessage();
    } catch (error) {
      // Cut for its silence (before the answer or within it): retried as a dropped connection, unless the person interrupted too.
      if (idle && controller.signal.reason === idle && !hooks.signal?.aborted) throw idle;
      throw error;
    } finally {
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** The usage the API reported so far in one attempt's stream; none before its message_start. */
interface ReportedUsage {
  usage?: TokenUsage;
}

/** message_start carries the input side (and output so far); message_delta the cumulative counts since. */
function trackUsage(reported: ReportedUsage, event: MessageStreamEvent): void {
  if (event.type === 'message_start') reported.usage = toTokenUsage(event.message.usage);
  else if (event.type === 'message_delta' && reported.usage) {
    const delta = event.usage as Partial<Record<keyof TokenUsage, number | null>>;
    const next = { ...reported.usage };
    for (const key of Object.keys(next) as Array<keyof TokenUsage>) {
      const value = delta[key];
      if (typeof value === 'number') next[key] = value;
    }
    reported.usage = next;
  }
}

interface Failure {
  retryable: boolean;
  status: number | undefined;
  reason: string;
  retryAfterMs?: number | undefined;
}

const RETRYABLE_ERROR_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

function classify(error: unknown, baseURL: string | undefined): Failure {
  if (error instanceof RequestTimeoutError) return { retryable: true, status: undefined, reason: describeConnectionError(error, baseURL, true) };
  // fetch's own failure: the socket's error with its code is the cause (http-request.ts).
  if (error instanceof TypeError && error.message === 'fetch failed') {
    return { retryable: true, status: undefined, reason: describeConnectionError(error, baseURL) };
  }
  if (error instanceof HttpStatusError) {
    const { status, body } = error;
    const type = errorType(body);
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return { retryable, status, reason: describeStatus(status, type, errorMessage(body) ?? error.message), retryAfterMs: retryAfter(error.header) };
  }
  // An `event: error` inside an otherwise successful stream; MessageStream hands it on as its cause.
  const event = error instanceof StreamErrorEvent ? error : (error as { cause?: unknown } | undefined)?.cause;
  if (event instanceof StreamErrorEvent) {
    const type = errorType(event.body);
    const retryable = type === undefined || RETRYABLE_ERROR_TYPES.has(type);
    return { retryable, status: undefined, reason: `stream error: ${type ?? event.message}` };
  }
  const message = error instanceof Error ? error.message : String(error);
  // A malformed or cut stream surfaces as a plain error from the stream's parser: worth another try.
  return { retryable: true, status: undefined, reason: `bad response: ${message}` };
}

function describeStatus(status: number, type: string | undefined, message: string): string {
  switch (status) {
    case 401:
      return 'the API key was refused (401): check ANTHROPIC_API_KEY or --api-key-file';
    case 403:
      return `permission denied (403): ${message}`;
    case 404:
      return `not found (404): check --model / HUDDLE_MODEL and ANTHROPIC_BASE_URL (${message})`;
    case 429:
      return 'rate limited (429)';
    case 529:
      return 'overloaded (529)';
    default:
      return `HTTP ${status}${type ? ` ${type}` : ''}: ${message}`;
  }
}

/** The API's own sentence ("max_tokens: must be at most 64000"), rather than the raw JSON body. */
function errorMessage(body: unknown): string | undefined {
  const inner = (body as { error?: { message?: unknown } } | undefined)?.error;
  return typeof inner?.message === 'string' ? inner.message : undefined;
}

function errorType(body: unknown): string | undefined {
  const inner = (body as { error?: { type?: unknown } } | undefined)?.error;
  return typeof inner?.type === 'string' ? inner.type : undefined;
}

const MAX_RETRY_AFTER_MS = 60_000;

function retryAfter(header: (name: string) => string | undefined): number | undefined {
  const millis = Number(header('retry-after-ms'));
  if (Number.isFinite(millis) && millis > 0) return Math.min(millis, MAX_RETRY_AFTER_MS);
  const raw = header('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - Date.now()), MAX_RETRY_AFTER_MS);
}

function backoff(attempt: number, baseMs: number): number {
  const exponential = Math.min(baseMs * 2 ** (attempt - 1), 8_000);
  return Math.round(exponential * (0.75 + Math.random() * 0.25));
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError();
}

/** Waits `ms`, or rejects with InterruptedError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new InterruptedError());
    if (ms <= 0) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      reject(new InterruptedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
