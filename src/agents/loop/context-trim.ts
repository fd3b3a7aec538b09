// The cheap first step of context management: once the context is well filled, the results of
// tool calls older than the last few assistant turns are replaced by a one-line stub. The model
// rarely needs an old file listing verbatim, and can run the tool again when it does. The
// tool_use / tool_result pairing is never touched: only the content of a result changes.
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';

/** Results shorter than this are left alone: the stub would save nothing worth a re-run. */
export const MIN_CUT_CHARS = 500;

export type ToolResultContent = ToolResultBlockParam['content'];

export interface TrimResult {
  /** Tool results replaced by a stub in this pass. */
  cut: number;
  /** Characters of those results before and after. */
  charsBefore: number;
  charsAfter: number;
}

/**
 * The first message trimOldToolResults would change: from it on, the conversation is a new
 * prefix for the prompt cache. Undefined when nothing would be cut.
 */
export function firstTrimmedMessage(messages: MessageParam[], keepTurns: number): number | undefined {
  const assistantAt = messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  if (assistantAt.length <= keepTurns) return undefined;
  const boundary = keepTurns > 0 ? assistantAt[assistantAt.length - keepTurns]! : messages.length;
  for (let index = 0; index < boundary; index++) {
    const message = messages[index]!;
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    if (message.content.some((block) => block.type === 'tool_result' && !isStub(block.content) && contentChars(block.content) >= MIN_CUT_CHARS)) return index;
  }
  return undefined;
}

export function stubText(toolName: string, chars: number): string {
  return `[tool result of ${toolName} cut to save context: ${chars.toLocaleString('en-US')} chars; re-run the tool if needed]`;
}

const STUB_RE = /^\[tool result of \S+ cut to save context: [\d,]+ chars; re-run the tool if needed\]$/;

export function isStub(content: ToolResultContent): boolean {
  return typeof content === 'string' && STUB_RE.test(content);
}

/** Characters of a tool result's content (text, or the encoded size of other parts). */
export function contentChars(content: ToolResultContent): number {
  if (content === undefined) return 0;
  if (typeof content === 'string') return content.length;
  let chars = 0;
  for (const part of content) chars += part.type === 'text' ? part.text.length : JSON.stringify(part).length;
  return chars;
}

/**
 * Replaces, in place, the content of every tool result answering an assistant turn older than
 * the last `keepTurns` ones with a stub. `originals` (if given) receives each cut content by
 * tool_use_id, so a transcript written later can still be complete.
 */
export function trimOldToolResults(messages: MessageParam[], keepTurns: number, originals?: Map<string, ToolResultContent>): TrimResult {
  return trim(messages, keepTurns, true, originals);
}

/** What trimOldToolResults would cut, without changing anything. */
export function measureTrim(messages: MessageParam[], keepTurns: number): TrimResult {
  return trim(messages, keepTurns, false);
}

function trim(messages: MessageParam[], keepTurns: number, apply: boolean, originals?: Map<string, ToolResultContent>): TrimResult {
  const result: TrimResult = { cut: 0, charsBefore: 0, charsAfter: 0 };
  const assistantAt = messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  if (assistantAt.length <= keepTurns) return result;
  // Results before the first kept assistant turn answer older turns (a result follows its turn).
  const boundary = keepTurns > 0 ? assistantAt[assistantAt.length - keepTurns]! : messages.length;
  const names = toolNames(messages);
  for (let index = 0; index < boundary; index++) {
    const message = messages[index]!;
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    const content = message.content.map((block): ContentBlockParam => {
      if (block.type !== 'tool_result' || isStub(block.content)) return block;
      const chars = contentChars(block.content);
      if (chars < MIN_CUT_CHARS) return block;
      const stub = stubText(names.get(block.tool_use_id) ?? 'a tool', chars);
      result.cut += 1;
      result.charsBefore += chars;
      result.charsAfter += stub.length;
      if (!apply) return block;
      originals?.set(block.tool_use_id, block.content);
      return { ...block, content: stub };
    });
    if (apply) message.content = content;
  }
  return result;
}

/** tool_use id → tool name, over every assistant turn. */
export function toolNames(messages: MessageParam[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_use') names.set(block.id, block.name);
  }
  return names;
}

/** A copy of `messages` with every stubbed result given back its original content. */
export function restoreToolResults(messages: MessageParam[], originals: Map<string, ToolResultContent>): MessageParam[] {
  if (originals.size === 0) return messages;
  return messages.map((message) => {
    if (message.role !== 'user' || typeof message.content === 'string') return message;
    const content = message.content.map((block) =>
      block.type === 'tool_result' && isStub(block.content) && originals.has(block.tool_use_id)
        ? { ...block, content: originals.get(block.tool_use_id) }
        : block,
    );
    return { ...message, content };
  });
}
