// The turn loop every agent shares: stream a response, run its tool calls in order, feed the
// results back, repeat until the model ends its turn, the turn limit is hit, or it is stopped.
// The transcript is kept consistent at every exit: every tool_use gets a tool_result.
import type {
  ContentBlock,
  ContentBlockParam,
  MessageParam,
  ToolResultBlockParam,
  ToolUseBlock,
} from '@anthropic-ai/sdk/resources/messages';
import type { AgentEmitter } from '../runtime/events/events.js';
import { InterruptedError, ModelError, type ModelBackend } from '../runtime/model/model-client.js';
import { addUsage, emptyUsage, type TokenUsage } from '../runtime/model/pricing.js';
import type { ToolRegistry } from '../runtime/tools/registry.js';
import type { Workspace } from '../runtime/workspace/workspace.js';

export interface AgentLoopOptions {
  name: string;
  model: string;
  system: string;
  tools: ToolRegistry;
  backend: ModelBackend;
  events: AgentEmitter;
  workspace: Workspace;
  maxTokens: number;
  /** Model calls allowed for one user turn. */
  maxTurns: number;
  hooks?: AgentLoopHooks;
}

export interface AgentLoopHooks {
  /** Text to add to the next request as a user turn (new inbox messages, say); called before each model call. Plain strings count as 'inbox'. */
  pendingInput?(): Promise<PendingInput[] | undefined> | PendingInput[] | undefined;
  /** Asked after each tool call: stop the turn now (an approved shutdown, the idle tool). */
  shouldStop?(): boolean;
  /** Run right before each model call, after pending input is added: context trimming and compaction may rewrite `messages` here. */
  beforeModelCall?(signal: AbortSignal): Promise<void> | void;
  /**
   * Run first before each model call (before inbox delivery and compaction, which may call the
   * model too): a reached budget waits here; a reason ends the turn as `stopped`.
   */
  budgetGate?(signal: AbortSignal): Promise<string | undefined> | string | undefined;
}

/** Where a user turn came from: the person, the spawn prompt, the inbox, an auto-claim, or huddle itself. */
export type TurnSource = 'user' | 'spawn' | 'inbox' | 'auto_claim' | 'system';

/** Input injected mid-turn: inbox text, or text with its own source (a person steering the lead). */
export type PendingInput = string | { text: string; source: TurnSource };

export type TurnOutcome =
  | { kind: 'end_turn'; text: string }
  | { kind: 'stopped'; text: string }
  | { kind: 'interrupted' }
  | { kind: 'turn_limit'; limit: number }
  | { kind: 'failed'; error: string };

export interface AgentTotals {
  usage: TokenUsage;
  costUsd: number;
  modelCalls: number;
  /** Input tokens of the last request: how full the context is. */
  contextTokens: number;
}

export class AgentLoop {
  readonly name: string;
  model: string;
  system: string;
  readonly messages: MessageParam[] = [];
  readonly totals: AgentTotals = { usage: emptyUsage(), costUsd: 0, modelCalls: 0, contextTokens: 0 };
  readonly #options: AgentLoopOptions;
  #abort: AbortController | undefined;
  #running = false;

  constructor(options: AgentLoopOptions) {
    this.#options = options;
    this.name = options.name;
    this.model = options.model;
    this.system = options.system;
  }

  get running(): boolean {
    return this.#running;
  }

  get tools(): ToolRegistry {
    return this.#options.tools;
  }

  /** Aborts the model call or tool in flight; the turn ends as `interrupted`. */
  interrupt(): void {
    this.#abort?.abort();
  }

  /** Adds a user turn and runs the model until it ends its turn. One turn at a time. */
  async runTurn(input: string, source: TurnSource = 'user'): Promise<TurnOutcome> {
    if (this.#running) throw new Error(`${this.name} is already in a turn`);
    this.#running = true;
    const abort = new AbortController();
    this.#abort = abort;
    try {
      this.#addInput(input, source);
      return await this.#loop(abort.signal);
    } finally {
      this.#running = false;
      this.#abort = undefined;
    }
  }

  async #loop(signal: AbortSignal): Promise<TurnOutcome> {
    const { events, maxTurns } = this.#options;
    for (let call = 0; call < maxTurns; call++) {
      const halt = await this.#options.hooks?.budgetGate?.(signal);
      if (halt !== undefined && signal.aborted) {
        events.emit('error', { message: 'interrupted', fatal: false, interrupted: true });
        return { kind: 'interrupted' };
      }
      if (halt !== undefined) return { kind: 'stopped', text: halt };
      const extra = await this.#options.hooks?.pendingInput?.();
      for (const item of extra ?? []) {
        if (typeof item === 'string') this.#addInput(item, 'inbox');
        else this.#addInput(item.text, item.source);
      }
      await this.#options.hooks?.beforeModelCall?.(signal);

      const response = await this.#callModel(signal);
      if (response.kind !== 'ok') return response.outcome;
      const content = response.content;
      const text = content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      if (content.length) this.messages.push({ role: 'assistant', content: toParams(content) });
      if (text) events.emit('text', { text });

      const toolUses = content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
      if (response.stopReason === 'pause_turn') continue;
      if (toolUses.length === 0) return { kind: 'end_turn', text };

      const run = await this.#runTools(toolUses, signal, response.stopReason === 'max_tokens');
      this.#pushUser(run.results);
      if (run.interrupted) return { kind: 'interrupted' };
      if (run.stopped) return { kind: 'stopped', text };
    }
    events.emit('error', { message: `turn limit reached: ${maxTurns} model calls in one turn`, fatal: false });
    return { kind: 'turn_limit', limit: maxTurns };
  }

  async #callModel(
    signal: AbortSignal,
  ): Promise<{ kind: 'ok'; content: ContentBlock[]; stopReason: string | null } | { kind: 'done'; outcome: TurnOutcome }> {
    const { backend, events, tools, maxTokens } = this.#options;
    let partial = '';
    try {
      const result = await backend.call(
        { model: this.model, system: this.system, messages: this.messages, tools: tools.definitions(), maxTokens },
        {
          signal,
          onText: (delta) => {
            partial += delta;
            events.emit('text_delta', { text: delta });
          },
          onRetry: (notice) => {
            partial = '';
            events.emit('retry', { ...notice });
          },
        },
      );
      this.#account(result.usage, result.costUsd);
      return { kind: 'ok', content: result.message.content, stopReason: result.message.stop_reason };
    } catch (error) {
      if (error instanceof InterruptedError) {
        // Keep what the person already saw, so the transcript matches the screen.
        if (partial) this.messages.push({ role: 'assistant', content: [{ type: 'text', text: partial }] });
        events.emit('error', { message: 'interrupted', fatal: false, interrupted: true });
        return { kind: 'done', outcome: { kind: 'interrupted' } };
      }
      const message = error instanceof ModelError ? error.message : `model call failed: ${String(error)}`;
      events.emit('error', { message, fatal: true, status: error instanceof ModelError ? error.status : undefined });
      return { kind: 'done', outcome: { kind: 'failed', error: message } };
    }
  }

  async #runTools(
    toolUses: ToolUseBlock[],
    signal: AbortSignal,
    truncated: boolean,
  ): Promise<{ results: ToolResultBlockParam[]; interrupted: boolean; stopped: boolean }> {
    const { events, tools, workspace, hooks } = this.#options;
    const results: ToolResultBlockParam[] = [];
    let skipReason: string | undefined;
    let interrupted = false;
    let stopped = false;
    for (const use of toolUses) {
      if (skipReason) {
        results.push({ type: 'tool_result', tool_use_id: use.id, content: `not run: ${skipReason}`, is_error: true });
        continue;
      }
      if (truncated) {
        const content = 'not run: your response hit max_tokens, so this input may be incomplete; send smaller pieces';
        results.push({ type: 'tool_result', tool_use_id: use.id, content, is_error: true });
        continue;
      }
      events.emit('tool_call', { id: use.id, name: use.name, input: use.input, summary: tools.summarize(use.name, use.input) });
      const started = performance.now();
      const result = await tools.run(use.name, use.input, { workspace, agent: this.name, signal, events });
      const durationMs = Math.round(performance.now() - started);
      events.emit('tool_result', { id: use.id, name: use.name, ok: !result.isError, content: result.content, duration_ms: durationMs });
      results.push({ type: 'tool_result', tool_use_id: use.id, content: result.content, ...(result.isError ? { is_error: true } : {}) });
      if (signal.aborted) {
        interrupted = true;
        skipReason = 'the turn was interrupted';
      } else if (hooks?.shouldStop?.()) {
        stopped = true;
        skipReason = 'the agent is stopping';
      }
    }
    return { results, interrupted, stopped };
  }

  #account(usage: TokenUsage, costUsd: number): void {
    this.totals.contextTokens = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens;
    this.recordUsage(usage, costUsd);
  }

  /**
   * Counts a model call in the agent's totals and emits its `usage` event. Calls made for the agent
   * outside its turns (a compaction or restart summary) use it too, with extra fields saying why;
   * they do not change how full the context is.
   */
  recordUsage(usage: TokenUsage, costUsd: number, fields: Record<string, unknown> = {}): void {
    const totals = this.totals;
    totals.usage = addUsage(totals.usage, usage);
    totals.costUsd += costUsd;
    totals.modelCalls += 1;
    this.#options.events.emit('usage', {
      ...usage,
      cost_usd: costUsd,
      total_cost_usd: totals.costUsd,
      total_input_tokens: totals.usage.input_tokens,
      total_output_tokens: totals.usage.output_tokens,
      context_tokens: totals.contextTokens,
      model: this.model,
      ...fields,
    });
  }

  /** A user turn's text: logged as a `prompt` event (so a transcript can be rebuilt from the log), then added. */
  #addInput(text: string, source: TurnSource): void {
    this.#options.events.emit('prompt', { text, source });
    this.#pushUser([{ type: 'text', text }]);
  }

  /** Appends user content, merging with a trailing user message (tool results) to keep roles alternating. */
  #pushUser(blocks: ContentBlockParam[]): void {
    if (blocks.length === 0) return;
    const last = this.messages.at(-1);
    if (last?.role === 'user') {
      const existing = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
      last.content = [...existing, ...blocks];
    } else {
      this.messages.push({ role: 'user', content: blocks });
    }
  }
}

/** Response blocks as request params (drops fields the API does not accept back, e.g. citations: null). */
function toParams(content: ContentBlock[]): ContentBlockParam[] {
  return content.map((block): ContentBlockParam => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'tool_use':
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      default:
        return block as unknown as ContentBlockParam;
    }
  });
}
