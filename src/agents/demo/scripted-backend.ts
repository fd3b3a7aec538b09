// `huddle demo`'s model: a scripted, in-process ModelBackend that plays a small team session
// (a lead plans a greeting library, alice and bob write it, test it, report and shut down) so a
// newcomer without an API key sees the real console, tools, board and bus at work. The script
// is demo-script.ts (reading requests: conversation.ts; the tasks: demo-tasks.ts); this file
// paces its answers like a streaming model and shapes them as API responses.
import { randomBytes } from 'node:crypto';
import type { ContentBlock, Message } from '@anthropic-ai/sdk/resources/messages';
import { InterruptedError, sleep, type ModelBackend, type ModelCallHooks, type ModelCallResult, type ModelRequest } from '../../runtime/model/model-client.js';
import { systemText } from '../../runtime/model/system-prompt.js';
import { decide, type Step } from './demo-script.js';

export { DEMO_TEAMMATES } from './demo-script.js';

export interface DemoPace {
  charsPerChunk: number;
  chunkDelayMs: number;
}

export interface ScriptedDemoOptions {
  pace?: DemoPace;
  /** Delay before a response starts streaming: a model's time to first token. */
  thinkMs?: number;
}

/** 3 characters every 60 ms: 50 characters a second, about reading speed. */
export const DEFAULT_DEMO_PACE: DemoPace = { charsPerChunk: 3, chunkDelayMs: 60 };
export const DEFAULT_THINK_MS = 600;
export const DEMO_MODEL = 'huddle-demo';

export class ScriptedDemoBackend implements ModelBackend {
  readonly #pace: DemoPace;
  readonly #thinkMs: number;

  constructor(options: ScriptedDemoOptions = {}) {
    this.#pace = options.pace ?? DEFAULT_DEMO_PACE;
    this.#thinkMs = options.thinkMs ?? DEFAULT_THINK_MS;
  }

  async call(request: ModelRequest, hooks: ModelCallHooks = {}): Promise<ModelCallResult> {
    const { signal } = hooks;
    const step = decide(request);
    await sleep(this.#thinkMs, signal);
    const chars = Array.from(step.text); // code points, so a chunk never splits a character
    const size = Math.max(1, this.#pace.charsPerChunk);
    for (let i = 0; i < chars.length; i += size) {
      if (signal?.aborted) throw new InterruptedError();
      hooks.onText?.(chars.slice(i, i + size).join(''));
      if (i + size < chars.length) await sleep(this.#pace.chunkDelayMs, signal);
    }
    if (signal?.aborted) throw new InterruptedError();
    return toResult(request, step);
  }
}

// ---- building the response ---------------------------------------------------------------------

function toResult(request: ModelRequest, step: Step): ModelCallResult {
  const content: ContentBlock[] = [];
  if (step.text) content.push({ type: 'text', text: step.text, citations: null });
  for (const tool of step.tools ?? []) {
    content.push({ type: 'tool_use', id: `toolu_demo_${hex(12)}`, name: tool.name, input: tool.input, caller: { type: 'direct' } });
  }
  // Rough token counts (4 characters a token), so /cost and context use look alive.
  const inputChars = systemText(request.system).length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  const outputChars = step.text.length + JSON.stringify(step.tools ?? []).length;
  const usage = {
    input_tokens: Math.ceil(inputChars / 4),
    output_tokens: Math.ceil(outputChars / 4) + 8,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const message = {
    id: `msg_demo_${hex(12)}`,
    type: 'message',
    role: 'assistant',
    model: DEMO_MODEL,
    content,
    stop_reason: step.tools?.length ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  } as Message; // the fields huddle reads; server-only ones (container, diagnostics…) are left out
  return { message, usage, costUsd: 0, attempts: 1 };
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
