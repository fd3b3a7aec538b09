// The turn loop every agent shares: stream a response, run its tool calls in order, feed the
// results back, repeat until the model ends its turn, the turn limit is hit, or it is stopped.
// The loop never edits its messages itself: it emits events, and its transcript (transcript.ts,
// the rule resume uses too) builds the messages from them. Every tool_use gets a tool_result.
import type { ContentBlock, MessageParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { tappedEmitter, type AgentEmitter, type PromptSource } from '../../runtime/events/events.js';
import { InterruptedError, ModelError, type ModelBackend, type PartialUsage } from '../../runtime/model/model-client.js';
import type { CallWait } from '../../runtime/model/call-governor.js';
import type { SystemInput } from '../../runtime/model/system-prompt.js';
import { addUsage, emptyUsage, type TokenUsage } from '../../runtime/model/pricing.js';
import type { ToolRegistry } from '../../runtime/tools/registry.js';
import type { ToolContext } from '../../runtime/tools/types.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import { Transcript } from './transcript.js';

export interface AgentLoopOptions {
  name: string;
  model: string;
  system: SystemInput;
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
  /** The model call waits for the team's governor (call-governor.ts); `undefined` once it is sent. */
  onModelWait?(wait: CallWait | undefined): void;
  /** The messages as the request sends them (the lead shortens handled reports: handled-reports.ts); the transcript is unchanged. */
  viewMessages?(messages: MessageParam[]): MessageParam[];
}

/** Where a user turn came from: the person, the spawn prompt, the inbox, an auto-claim, or huddle itself. */
export type TurnSource = PromptSource;

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
  system: SystemInput;
  /** The conversation, built from this agent's events (transcript.ts). */
  readonly transcript = new Transcript();
  /**
   * The agent's emitter: every event emitted through it also reaches the transcript. Whatever
   * changes the conversation (the loop, compaction, restart, resume's turns) emits through it.
   */
  readonly events: AgentEmitter;
  readonly totals: AgentTotals = { usage: emptyUsage(), costUsd: 0, modelCalls: 0, contextTokens: 0 };
  readonly #options: AgentLoopOptions;
  #abort: AbortController | undefined;
  #running = false;
  /** A model call of its conversation has returned in this process. */
  #answered = false;

  constructor(options: AgentLoopOptions) {
    this.#options = options;
    this.name = options.name;
    this.model = options.model;
    this.system = options.system;
    this.events = tappedEmitter(options.events, (event) => this.transcript.apply(event));
  }

  /** The messages of the next model request (the transcript's; read them, change them through events). */
  get messages(): MessageParam[] {
    return this.transcript.messages;
  }

  get running(): boolean {
    return this.#running;
  }

  get tools(): ToolRegistry {
    return this.#options.tools;
  }

  /** Where its tools run: the team's workspace, or its own worktree. */
  get workspace(): Workspace {
    return this.#options.workspace;
  }

  /** Aborts the model call or tool in flight; the turn ends as `interrupted`. */
  interrupt(): void {
    this.#abort?.abort();
  }

  /** Adds a user turn and runs the model until it ends its turn. One turn at a time. */
  async runTurn(input: string, source: TurnSource = 'user', by?: string): Promise<TurnOutcome> {
    if (this.#running) throw new Error(`${this.name} is already in a turn`);
    this.#running = true;
    const abort = new AbortController();
    this.#abort = abort;
    try {
      this.#addInput(input, source, by);
      return await this.#loop(abort.signal);
    } finally {
      this.transcript.commit();
      this.#running = false;
      this.#abort = undefined;
    }
  }

  async #loop(signal: AbortSignal): Promise<TurnOutcome> {
    const { maxTurns } = this.#options;
    const events = this.events;
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
      if (text) events.emit('text', { text });

      const toolUses = content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
      if (response.stopReason === 'pause_turn') continue;
      if (toolUses.length === 0) return { kind: 'end_turn', text };

      const run = await this.#runTools(toolUses, signal, response.stopReason === 'max_tokens');
      // The call's assistant turn and its results are in the transcript before anything else runs.
      this.transcript.commit();
      if (run.interrupted) return { kind: 'interrupted' };
      if (run.stopped) return { kind: 'stopped', text };
    }
    events.emit('error', { message: `turn limit reached: ${maxTurns} model calls in one turn`, fatal: false });
    return { kind: 'turn_limit', limit: maxTurns };
  }

  async #callModel(signal: AbortSignal): Promise<{ kind: 'ok'; content: ContentBlock[]; stopReason: string | null } | { kind: 'done'; outcome: TurnOutcome }> {
    const { backend, tools, maxTokens } = this.#options;
    const events = this.events;
    this.transcript.commit();
    try {
      const result = await backend.call(
        {
          model: this.model,
          system: this.system,
          messages: this.#options.hooks?.viewMessages?.(this.messages) ?? this.messages,
          tools: tools.definitions(),
          sharedTools: tools.sharedPrefixLength(),
          maxTokens,
        },
        {
          signal,
          onText: (delta) => void events.emit('text_delta', { text: delta }),
          // The transcript drops the partial text of the failed attempt.
          onRetry: (notice) => void events.emit('retry', { ...notice }),
          // Billed though it brought no message: counted like any call, outside the conversation.
          onWait: (wait) => this.#options.hooks?.onModelWait?.(wait),
          onPartialUsage: (partial) => this.recordUsage(partial.usage, partial.costUsd, { partial: partial.outcome }),
        },
      );
      this.#account(result.usage, result.costUsd, { message_id: result.message.id, stop_reason: result.message.stop_reason });
      return { kind: 'ok', content: result.message.content, stopReason: result.message.stop_reason };
    } catch (error) {
      if (error instanceof InterruptedError) {
        // The transcript keeps what the person already saw (the streamed text), so it matches the screen.
        events.emit('error', { message: 'interrupted', fatal: false, interrupted: true });
        return { kind: 'done', outcome: { kind: 'interrupted' } };
      }
      const message = error instanceof ModelError ? error.message : `model call failed: ${String(error)}`;
      events.emit('error', { message, fatal: true, status: error instanceof ModelError ? error.status : undefined });
      return { kind: 'done', outcome: { kind: 'failed', error: message } };
    }
  }

  async #runTools(toolUses: ToolUseBlock[], signal: AbortSignal, truncated: boolean): Promise<{ interrupted: boolean; stopped: boolean }> {
    const { tools, workspace, hooks } = this.#options;
    const events = this.events;
    let skipReason: string | undefined;
    let interrupted = false;
    let stopped = false;
    // Each call's slow setup (a sandbox to start) begins now, beside the calls before it.
    if (!truncated) for (const use of toolUses) tools.prepare(use.name, use.input, { workspace, agent: this.name, signal, events, toolUseId: use.id });
    for (const use of toolUses) {
      const skip = truncated ? 'your response hit max_tokens, so this input may be incomplete; send smaller pieces' : skipReason;
      if (skip) {
        // Not run, and no tool_call event: the result alone says so (and carries the call).
        events.emit('tool_result', { id: use.id, name: use.name, ok: false, content: `not run: ${skip}`, duration_ms: 0, skipped: true, input: use.input });
        continue;
      }
      events.emit('tool_call', { id: use.id, name: use.name, input: use.input, summary: tools.summarize(use.name, use.input) });
      const started = performance.now();
      // A subagent's model calls count in this agent's totals (subagent-tool.ts).
      const chargeUsage: ToolContext['chargeUsage'] = (usage, costUsd, fields) => this.recordUsage(usage, costUsd, fields);
      const result = await tools.run(use.name, use.input, { workspace, agent: this.name, signal, events, toolUseId: use.id, chargeUsage });
      const durationMs = Math.round(performance.now() - started);
      events.emit('tool_result', {
        id: use.id,
        name: use.name,
        ok: !result.isError,
        content: result.content,
        duration_ms: durationMs,
        ...(result.blocks?.length ? { blocks: result.blocks } : {}),
      });
      if (signal.aborted) {
        interrupted = true;
        skipReason = 'the turn was interrupted';
      } else if (hooks?.shouldStop?.()) {
        stopped = true;
        skipReason = 'the agent is stopping';
      }
    }
    return { interrupted, stopped };
  }

  #account(usage: TokenUsage, costUsd: number, response: { message_id?: string; stop_reason?: string | null }): void {
    this.totals.contextTokens = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens;
    // What its first call read from the cache, another agent (or an earlier run) wrote: /cost shows it.
    const first = !this.#answered;
    this.#answered = true;
    this.recordUsage(usage, costUsd, first ? { ...response, first_call: true } : response);
  }

  /**
   * Counts a model call in the agent's totals and emits its `usage` event. Calls made for the agent
   * outside its turns (a compaction or restart summary) use it too, with extra fields saying why;
   * they do not change how full the context is.
   */
  recordUsage(
    usage: TokenUsage,
    costUsd: number,
    fields: {
      purpose?: 'compaction';
      restart?: boolean;
      partial?: PartialUsage['outcome'];
      message_id?: string;
      stop_reason?: string | null;
      subagent?: string;
      parent_tool_use_id?: string;
      first_call?: true;
    } = {},
  ): void {
    const totals = this.totals;
    totals.usage = addUsage(totals.usage, usage);
    totals.costUsd += costUsd;
    totals.modelCalls += 1;
    this.events.emit('usage', {
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

  /**
   * A user turn's text: a `prompt` event, which the transcript adds (merged into a trailing user
   * turn). `by` says who caused it when that is not the obvious one (the person spawning a teammate).
   */
  #addInput(text: string, source: TurnSource, by?: string): void {
    this.events.emit('prompt', { text, source, ...(by ? { by } : {}) });
  }
}
