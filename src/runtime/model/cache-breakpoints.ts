// Where a request marks prompt-cache breakpoints (`cache_control`), so that each model call reads
// everything the previous call of the conversation wrote and pays full price only for what is new.
// The API caches the prefix (tools → system → messages) up to a marked block; a later request
// reads the longest prefix written earlier that ends within 20 blocks before one of its own
// breakpoints. At most 4 breakpoints:
//   1. the last of the tools every agent of the team sends alike (ModelRequest.sharedTools; else the
//      last tool): the lead's and every role's first call read that block whoever wrote it, and
//      what is the role's own (its tools, then the system prompt) follows up to breakpoint 2;
//   2. the system prompt: tools + system, the stable prefix of every call; a prompt in two blocks
//      (system-prompt.ts) is marked after its shared block, so the prefix every agent of a role
//      sends alike ends there and the agent's own block follows it unmarked (breakpoint 3 covers it);
//   3. the last block of the last message: the rolling breakpoint, written by this call;
//   4. the last block of the message before the latest assistant turn: where the previous call's
//      rolling breakpoint was, so it is found however many blocks the new turn added (a response
//      with 25 tool calls is 50 blocks later, past the 20-block lookback of breakpoint 3).
// Marks go on a copy of the request: the transcript (agents/loop/transcript.ts) never sees them, so
// what resume rebuilds is unchanged; only how the request is marked.
import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { SystemInput } from './system-prompt.js';

export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

export type CacheableTool = Tool | { name: string; [key: string]: unknown };

/** Whether a block may carry cache_control (the API refuses it on empty text and on thinking blocks). */
function markable(block: ContentBlockParam): boolean {
  if (block.type === 'text') return block.text.length > 0;
  return block.type === 'tool_use' || block.type === 'tool_result' || block.type === 'image' || block.type === 'document';
}

/** A copy of `message` with its last markable block marked; the same message when none is. */
function markLast(message: MessageParam): MessageParam {
  const blocks: ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    if (!markable(block)) continue;
    const content = blocks.slice();
    content[i] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
    return { ...message, content } as MessageParam;
  }
  return message;
}

/** Index of the message the previous call ended with: the one before the latest assistant turn. */
export function previousEnd(messages: MessageParam[]): number | undefined {
  for (let i = messages.length - 1; i > 0; i--) {
    if (messages[i]!.role === 'assistant') return i - 1;
  }
  return undefined;
}

/** The messages with the rolling breakpoints (3 and 4 above); the input is not changed. */
export function markMessages(messages: MessageParam[]): MessageParam[] {
  if (messages.length === 0) return messages;
  const out = messages.slice();
  const last = out.length - 1;
  out[last] = markLast(out[last]!);
  const previous = previousEnd(messages);
  if (previous !== undefined && previous !== last) out[previous] = markLast(out[previous]!);
  return out;
}

/**
 * Breakpoints 1 and 2: the last of the first `sharedTools` tools (all of them when not given), and
 * the system prompt: one marked text block, or (in two parts) the shared block marked and the
 * agent's own block after it.
 */
export function markPrefix<T extends CacheableTool>(system: SystemInput, tools: T[], sharedTools = tools.length): { system: TextBlockParam[]; tools: T[] } {
  const last = sharedTools > 0 && sharedTools < tools.length ? sharedTools - 1 : tools.length - 1;
  const marked = tools.map((tool, index) => (index === last ? markedTool(tool) : tool));
  if (typeof system === 'string') return { system: system ? [{ type: 'text', text: system, cache_control: EPHEMERAL }] : [], tools: marked };
  if (!system.shared) return markPrefix(system.own, tools, sharedTools);
  const blocks: TextBlockParam[] = [{ type: 'text', text: system.shared, cache_control: EPHEMERAL }];
  if (system.own) blocks.push({ type: 'text', text: system.own });
  return { system: blocks, tools: marked };
}

/** The last tool marked: one copy per definition, kept, so its JSON is made once too (definition-json.ts). */
const markedTools = new WeakMap<object, CacheableTool>();

function markedTool<T extends CacheableTool>(tool: T): T {
  let marked = markedTools.get(tool) as T | undefined;
  if (!marked) {
    marked = { ...tool, cache_control: EPHEMERAL };
    markedTools.set(tool, marked);
  }
  return marked;
}

/** Counts the breakpoints of a request (tests, and a guard against the API's 400). */
export function countBreakpoints(request: { system?: unknown; tools?: unknown[]; messages: MessageParam[] }): number {
  const has = (value: unknown) => Boolean(value && typeof value === 'object' && (value as { cache_control?: unknown }).cache_control);
  let count = 0;
  for (const tool of request.tools ?? []) if (has(tool)) count++;
  if (Array.isArray(request.system)) for (const block of request.system) if (has(block)) count++;
  for (const message of request.messages) if (typeof message.content !== 'string') for (const block of message.content) if (has(block)) count++;
  return count;
}
