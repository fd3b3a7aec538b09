// Context management for one agent, run at the top of each model call (AgentLoopHooks.beforeModelCall):
//  1. above `trimAt` of the window, old tool results are cut to stubs (context-trim.ts);
//  2. above `compactAt`, or when asked (/compact), the model summarises the transcript, which is
//     then replaced by the identity block, the agent's open tasks and the summary (docs/contract.md#injected-turns).
// The replaced messages are written whole to .team/logs/<name>/transcript-<stamp>.json first, and
// a failed or interrupted summary leaves the context exactly as it was. Both steps change the
// context only by emitting their `compaction` event: the agent's transcript (transcript.ts) applies
// it, live and on resume alike.
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { HuddleConfig } from '../../runtime/config.js';
import { contextWindowFor, estimateTokens } from '../../runtime/model/context-window.js';
import type { EventStore } from '../../runtime/store/event-store.js';
import type { AgentEmitter } from '../../runtime/events/events.js';
import { InterruptedError, type ModelBackend } from '../../runtime/model/model-client.js';
import type { TokenUsage } from '../../runtime/model/pricing.js';
import { systemText } from '../../runtime/model/system-prompt.js';
import { capOutput } from '../../runtime/process/output-cap.js';
import type { AgentLoop } from './agent-loop.js';
import { firstTrimmedMessage, measureTrim, restoreToolResults, toolNames, type ToolResultContent } from './context-trim.js';
import { compactedTurn, type OwnedTask } from '../prompts/identity-block.js';
import type { Identity } from '../prompts/prompts.js';
import { fill } from '../prompts/templates.js';
import { blocksOf, compactedContext } from './transcript.js';

export type CompactionSettings = Pick<HuddleConfig, 'trimAt' | 'trimKeepTurns' | 'compactAt' | 'maxTokens' | 'apiKey' | 'authToken'>;

export interface CompactorOptions {
  loop: AgentLoop;
  identity: Identity;
  /** The open tasks the agent owns, for the restarted context. */
  ownedTasks(): Promise<OwnedTask[]>;
  backend: ModelBackend;
  /**
   * Not used: a compactor emits through its loop's emitter (`loop.events`), which also feeds the
   * loop's transcript. Kept so existing callers still compile.
   */
  events?: AgentEmitter;
  /** Where the replaced conversation is kept (the team store's event record). */
  transcripts: Pick<EventStore, 'saveTranscript'>;
  /** Read at every check, so a changed setting applies from the next model call. */
  config: CompactionSettings;
  /** Run before a summary is written (PreCompact hooks); it cannot stop the compaction. */
  beforeCompact?(trigger: CompactionTrigger, focus: string | undefined): Promise<void>;
}

export interface CompactionResult {
  beforeTokens: number;
  /** An estimate (characters / 4): the real count arrives with the next response. */
  afterTokens: number;
  summaryChars: number;
  /** The pre-compaction transcript, relative to the workspace root. */
  file: string;
}

export type CompactionTrigger = 'auto' | 'manual';

/** A compaction that did not happen; the context was left as it was. */
export class CompactionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompactionError';
  }
}

export const DEFAULT_TRIM_AT = 0.6;
export const DEFAULT_TRIM_KEEP_TURNS = 3;
export const DEFAULT_COMPACT_AT = 0.8;

/**
 * Trimming rewrites the conversation from its first cut result on, so the prompt cache holds
 * nothing past it: the next call writes it all again (1.25×) instead of reading it (0.1×). So it
 * cuts in large steps: once the context has grown by this fraction of the window since the last
 * trim (every cut older result at once), not a result at every call above the threshold...
 */
export const TRIM_STEP = 0.1;
/** ...and only when it saves at least this share of what it makes the cache write again. */
export const TRIM_MIN_SAVING = 0.25;

/** After a failed automatic compaction, this many model calls pass before the next attempt. */
const RETRY_AFTER_CALLS = 5;

interface Pending {
  focus: string | undefined;
  promise: Promise<CompactionResult>;
  resolve(result: CompactionResult): void;
  reject(error: unknown): void;
}

export class Compactor {
  readonly #o: CompactorOptions;
  #pending: Pending | undefined;
  #inflight: Promise<CompactionResult> | undefined;
  #idleAbort: AbortController | undefined;
  /** No automatic compaction before the loop has made this many model calls. */
  #autoFromCall = 0;
  #previousFile: string | undefined;
  /** The context (estimated) after the last trim: the next waits until it has grown a step. */
  #lastTrimTokens: number | undefined;

  constructor(options: CompactorOptions) {
    this.#o = options;
  }

  /** True while a summary is being written. */
  get busy(): boolean {
    return this.#inflight !== undefined;
  }

  /** A /compact asked for mid-turn and not yet done. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * Compacts now when the agent is between turns; mid-turn, before its next model call (a running
   * turn is never disturbed). `deferred` says which; `done` settles when it has happened.
   */
  compact(focus?: string): { deferred: boolean; done: Promise<CompactionResult> } {
    const name = this.#o.identity.name;
    if (this.#o.loop.messages.length === 0) {
      return { deferred: false, done: Promise.reject(new CompactionError(`nothing to compact: ${name}'s context is empty`)) };
    }
    if (this.#o.loop.running) return { deferred: true, done: this.#request(focus) };
    if (this.#inflight) return { deferred: false, done: Promise.reject(new CompactionError(`${name} is already being compacted`)) };
    // A request left from a turn that ended without another model call is served by this one.
    const pending = this.#pending;
    this.#pending = undefined;
    const abort = new AbortController();
    this.#idleAbort = abort;
    const done = this.#run('manual', focus ?? pending?.focus, abort.signal).finally(() => {
      if (this.#idleAbort === abort) this.#idleAbort = undefined;
    });
    if (pending) done.then(pending.resolve, pending.reject);
    return { deferred: false, done };
  }

  /** Stops a summary being written between turns (Esc on the agent); the context stays as it was. */
  interrupt(): void {
    this.#idleAbort?.abort();
  }

  /** The hook run before every model call of the loop. Never throws: failures are error events. */
  async beforeModelCall(signal: AbortSignal): Promise<void> {
    // A summary started between turns finishes (or fails) before the turn's first call.
    if (this.#inflight) await this.#inflight.catch(() => undefined);
    if (signal.aborted) return;
    const { loop, config } = this.#o;
    const window = contextWindowFor(loop.model);
    const trimAt = config.trimAt ?? DEFAULT_TRIM_AT;
    const compactAt = config.compactAt ?? DEFAULT_COMPACT_AT;
    let tokens = loop.totals.contextTokens;
    // Over the compaction threshold any cut is worth it: a summary would rewrite everything.
    const urgent = compactAt > 0 && tokens >= compactAt * window;
    if (trimAt > 0 && tokens >= trimAt * window) tokens = this.#trim(tokens, window, urgent);

    const pending = this.#pending;
    if (pending) {
      this.#pending = undefined;
      await this.#run('manual', pending.focus, signal).then(pending.resolve, pending.reject);
      return;
    }
    if (compactAt > 0 && tokens >= compactAt * window && loop.totals.modelCalls >= this.#autoFromCall) {
      // Automatic compaction is best effort: a failure leaves the context as it was, and the next call tries again.
      await this.#run('auto', undefined, signal).catch(() => undefined);
    }
  }

  #request(focus: string | undefined): Promise<CompactionResult> {
    if (this.#pending) {
      // One compaction serves every request made before it; the latest focus wins.
      if (focus) this.#pending.focus = focus;
      return this.#pending.promise;
    }
    let resolve!: Pending['resolve'];
    let reject!: Pending['reject'];
    const promise = new Promise<CompactionResult>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    // Whoever asked may not wait for the outcome; an unhandled rejection must not follow.
    promise.catch(() => undefined);
    this.#pending = { focus, promise, resolve, reject };
    return promise;
  }

  #trim(tokens: number, window: number, urgent: boolean): number {
    const { loop, config } = this.#o;
    const keepTurns = config.trimKeepTurns ?? DEFAULT_TRIM_KEEP_TURNS;
    if (!urgent && this.#lastTrimTokens !== undefined && tokens < this.#lastTrimTokens + TRIM_STEP * window) return tokens;
    const trimmed = measureTrim(loop.messages, keepTurns);
    if (trimmed.cut === 0) return tokens;
    const saved = estimateTokens(trimmed.charsBefore - trimmed.charsAfter);
    const cacheLoss = estimateTokens(JSON.stringify(loop.messages.slice(firstTrimmedMessage(loop.messages, keepTurns) ?? 0)).length) - saved;
    if (!urgent && saved < TRIM_MIN_SAVING * cacheLoss) return tokens;
    const after = Math.max(0, tokens - saved);
    this.#lastTrimTokens = after;
    // The transcript cuts the results on this event (and a resume replays the same cut).
    loop.events.emit('compaction', {
      kind: 'trim',
      cut: trimmed.cut,
      chars_before: trimmed.charsBefore,
      chars_after: trimmed.charsAfter,
      before_tokens: tokens,
      after_tokens: after,
      keep_turns: keepTurns,
      cache_loss_tokens: Math.max(0, cacheLoss),
    });
    return after;
  }

  async #run(trigger: CompactionTrigger, focus: string | undefined, signal: AbortSignal): Promise<CompactionResult> {
    const work = this.#summarise(trigger, focus, signal);
    this.#inflight = work;
    try {
      return await work;
    } catch (error) {
      this.#autoFromCall = this.#o.loop.totals.modelCalls + RETRY_AFTER_CALLS;
      if (error instanceof InterruptedError || signal.aborted) {
        throw new CompactionError('compaction interrupted; the context was left as it was');
      }
      const reason = error instanceof Error ? error.message : String(error);
      const message = `compaction failed: ${reason}; the context was left as it was`;
      this.#o.loop.events.emit('error', { message, fatal: false, compaction: true, trigger });
      throw new CompactionError(message);
    } finally {
      if (this.#inflight === work) this.#inflight = undefined;
    }
  }

  async #summarise(trigger: CompactionTrigger, focus: string | undefined, signal: AbortSignal): Promise<CompactionResult> {
    const { loop, backend, config, identity } = this.#o;
    const events = loop.events;
    const messages = loop.messages;
    const snapshot = messages.slice();
    const endsWithUser = snapshot.at(-1)?.role === 'user';
    const lastLength = blocksOf(snapshot.at(-1)).length;
    const beforeTokens = loop.totals.contextTokens || this.#estimate(snapshot);
    const { summarised, kept } = splitTail(snapshot);
    if (summarised.length === 0) throw new CompactionError('nothing to compact yet: the context holds only the new input');
    const started = performance.now();
    await this.#o.beforeCompact?.(trigger, focus);

    const window = contextWindowFor(loop.model);
    const transcript = renderTranscript(summarised, transcriptBudget(window, config.maxTokens, systemText(loop.system).length));
    const result = await backend.call(
      {
        model: loop.model,
        system: loop.system,
        messages: [{ role: 'user', content: summaryPrompt(transcript, trigger, focus) }],
        tools: [],
        maxTokens: config.maxTokens,
        // A one-off request: no later call repeats its messages, so only its prefix is marked.
        cache: 'prefix',
      },
      {
        signal,
        onRetry: (notice) => events.emit('retry', { ...notice, purpose: 'compaction' }),
        onPartialUsage: (partial) => loop.recordUsage(partial.usage, partial.costUsd, { purpose: 'compaction', partial: partial.outcome }),
      },
    );
    this.#account(result.usage, result.costUsd);
    const written = result.message.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('')
      .trim();
    if (!written) throw new CompactionError('the model returned an empty summary');
    const summary = result.message.stop_reason === 'max_tokens' ? `${written}\n[the summary was cut at the output limit]` : written;

    const file = await this.#writeTranscript(snapshot, { trigger, focus, beforeTokens });
    const relative = file;
    const tasks = await this.#o.ownedTasks().catch(() => []);
    // Between turns, input may have arrived meanwhile (appended, never rewritten): it is kept
    // after the summary. Anything else (/clear) means the summary no longer fits the context.
    // From here on nothing is awaited, so nothing can change under the rebuild.
    const unchanged = snapshot.every((message, index) => messages[index] === message) && blocksOf(messages[snapshot.length - 1]).length >= lastLength;
    if (!unchanged) throw new CompactionError(`${identity.name}'s conversation changed while it was being summarised`);
    const late = endsWithUser ? blocksOf(messages[snapshot.length - 1]).slice(lastLength) : [];
    const tail = messages.slice(snapshot.length);
    // Mid-turn the model answers this message next with no new input in it: say what to do.
    const midTurn = loop.running && kept.length + late.length + tail.length === 0;
    const firstTurn = compactedTurn(identity, relative, tasks, summary, midTurn);
    // What the transcript becomes when it applies the event below (the same function).
    const next = compactedContext(messages, firstTurn, snapshot.length);

    this.#previousFile = relative;
    const afterTokens = this.#estimate(next);
    loop.totals.contextTokens = afterTokens;
    // Automatic compaction waits for a real count of the new context.
    this.#autoFromCall = loop.totals.modelCalls + 1;
    const outcome: CompactionResult = { beforeTokens, afterTokens, summaryChars: summary.length, file: relative };
    events.emit('compaction', {
      kind: 'summary',
      trigger,
      ...(focus ? { focus } : {}),
      before_tokens: beforeTokens,
      after_tokens: afterTokens,
      summary_chars: summary.length,
      file: relative,
      summary,
      // The log alone rebuilds the compacted context (resume): this first turn, then what followed.
      first_turn: firstTurn,
      messages_before: snapshot.length,
      messages_after: next.length,
      duration_ms: Math.round(performance.now() - started),
    });
    return outcome;
  }

  /** The summary call costs like any other: it counts in the agent's totals and in /cost. */
  #account(usage: TokenUsage, costUsd: number): void {
    this.#o.loop.recordUsage(usage, costUsd, { purpose: 'compaction' });
  }

  /** Keeps the messages being replaced, with cut tool results restored (the store scrubs secrets); returns where. */
  async #writeTranscript(snapshot: MessageParam[], meta: { trigger: CompactionTrigger; focus: string | undefined; beforeTokens: number }): Promise<string> {
    const { loop, identity, transcripts } = this.#o;
    const record = {
      agent: identity.name,
      role: identity.role,
      team: identity.team,
      model: loop.model,
      compacted_at: new Date().toISOString(),
      trigger: meta.trigger,
      ...(meta.focus ? { focus: meta.focus } : {}),
      before_tokens: meta.beforeTokens,
      ...(this.#previousFile ? { previous_transcript: this.#previousFile } : {}),
      system: systemText(loop.system),
      messages: restoreToolResults(snapshot, loop.transcript.cutResults),
    };
    try {
      return await transcripts.saveTranscript(identity.name, record);
    } catch (error) {
      throw new CompactionError((error as Error).message);
    }
  }

  /** Tokens of a request with these messages, estimated from characters. */
  #estimate(messages: MessageParam[]): number {
    const { loop } = this.#o;
    return estimateTokens(systemText(loop.system).length + JSON.stringify(loop.tools.definitions()).length + JSON.stringify(messages).length);
  }
}

/**
 * Splits off what stays verbatim: a trailing user turn's own input (the prompt or inbox messages
 * the model has not answered yet). Its tool results go into the summary: the tool calls they
 * answer are summarised away.
 */
export function splitTail(messages: MessageParam[]): { summarised: MessageParam[]; kept: ContentBlockParam[] } {
  const last = messages.at(-1);
  if (last?.role !== 'user') return { summarised: messages, kept: [] };
  const blocks = blocksOf(last);
  const results = blocks.filter((block) => block.type === 'tool_result');
  const kept = blocks.filter((block) => block.type !== 'tool_result');
  const summarised = messages.slice(0, -1);
  if (results.length) summarised.push({ role: 'user', content: results });
  return { summarised, kept };
}

/** Characters of transcript that fit a summary request (at a conservative 3 characters a token). */
function transcriptBudget(window: number, maxTokens: number, systemChars: number): number {
  const tokens = window - maxTokens - estimateTokens(systemChars) - 2_000;
  return Math.max(20_000, tokens * 3);
}

/**
 * The transcript as plain text for the summary request. Plain text, not messages: the request
 * carries no tools (the API refuses tool blocks without tool definitions), and long tool
 * results can be shortened until the whole fits the window.
 */
export function renderTranscript(messages: MessageParam[], maxChars: number): string {
  let text = '';
  for (const cap of [4_000, 1_000, 300]) {
    text = renderWith(messages, cap);
    if (text.length <= maxChars) return text;
  }
  // Still too long: keep the start (the original request) and the most recent part.
  const head = Math.floor(maxChars * 0.2);
  const cut = text.length - maxChars;
  return `${text.slice(0, head)}\n\n[… ${cut.toLocaleString('en-US')} characters of the middle of the transcript left out …]\n\n${text.slice(text.length - (maxChars - head))}`;
}

function renderWith(messages: MessageParam[], cap: number): string {
  const names = toolNames(messages);
  const parts: string[] = [];
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      switch (block.type) {
        case 'text':
          parts.push(`[${message.role}]\n${capOutput(block.text, cap * 5)}`);
          break;
        case 'tool_use':
          parts.push(`[tool call: ${block.name}] ${capOutput(JSON.stringify(block.input), cap)}`);
          break;
        case 'tool_result': {
          const name = names.get(block.tool_use_id) ?? 'tool';
          parts.push(`[tool result: ${name}${block.is_error ? ', error' : ''}]\n${capOutput(resultText(block.content), cap)}`);
          break;
        }
        default:
          parts.push(`[${message.role}: ${block.type} block]`);
      }
    }
  }
  return parts.join('\n\n');
}

function resultText(content: ToolResultContent): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
}

export function summaryPrompt(transcript: string, trigger: CompactionTrigger, focus: string | undefined): string {
  return fill('compaction-summary-request', { auto: trigger === 'auto', focus: focus ?? '', transcript });
}
