// Old reports leave the lead's context once handled (docs/contract.md#injected-turns): in the requests the
// lead sends, an `<inbox>` turn older than its last few turns is shortened to `<inbox-handled>`, one line
// per message (who sent it, its first words, the tasks it reported) when every message of it is an agent's, so a long run's reports do not ride
// along in full on every later call. Only the request is shortened: the transcript (and resume) keep
// every message whole. Shortening rewrites the prompt cache from the first shortened report on (1.25×
// input) while a report left whole is read from it (0.1×): so the boundary moves 16 turns at a time, one
// cache miss per 16 lead turns, not one at every call.
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';

/** The lead's last turns always kept whole. */
export const KEEP_REPORT_TURNS = 4;
/** How many turns the boundary moves at once: the lead's last 4 to 19 turns are whole. */
export const COLLAPSE_STEP_TURNS = 16;
const CONTENT_CHARS = 160;
const INBOX = /^<inbox>\n([\s\S]*)\n<\/inbox>$/;

/** The messages as the lead's request sends them: inbox turns before its last `keep` to `keep + step` turns shortened. */
export function collapseHandledReports(messages: MessageParam[], keep = KEEP_REPORT_TURNS, step = COLLAPSE_STEP_TURNS): MessageParam[] {
  // A turn begins with a user message that has text (a prompt, an inbox delivery), not only tool results.
  const starts = messages.flatMap((message, index) => (message.role === 'user' && hasText(message) ? [index] : []));
  if (step <= 0 || starts.length < keep + step) return messages;
  const boundary = starts[Math.floor((starts.length - keep) / step) * step]!;
  let changed = false;
  const out = messages.map((message, index) => {
    if (index >= boundary || message.role !== 'user') return message;
    const blocks: ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    let touched = false;
    const content = blocks.map((block) => {
      if (block.type !== 'text') return block;
      const short = collapseInbox(block.text);
      if (short === undefined) return block;
      touched = true;
      return { ...block, text: short };
    });
    if (!touched) return message;
    changed = true;
    return { ...message, content };
  });
  return changed ? out : messages;
}

function hasText(message: MessageParam): boolean {
  return typeof message.content === 'string' || message.content.some((block) => block.type === 'text');
}

/** `<inbox-handled>` with one short line per message; undefined when the text is not an inbox turn. */
export function collapseInbox(text: string): string | undefined {
  const body = INBOX.exec(text)?.[1];
  if (body === undefined) return undefined;
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined; // not huddle's format: left as it is
    }
    // Only agents' reports are shortened: the person's words, huddle's notices and protocol messages
    // (a plan still to answer) keep the whole turn as it was.
    if (message['sender'] !== 'agent' || (message['type'] !== undefined && message['type'] !== 'message')) return undefined;
    const tasks = Array.isArray(message['tasks'])
      ? (message['tasks'] as Array<{ id?: unknown; status?: unknown }>).map((task) => `#${String(task.id)} ${String(task.status)}`)
      : undefined;
    lines.push(
      JSON.stringify({
        sender: message['sender'],
        from: message['from'],
        ...(message['type'] !== 'message' ? { type: message['type'] } : {}),
        content: cut(String(message['content'] ?? ''), CONTENT_CHARS),
        ...(tasks?.length ? { tasks } : {}),
      }),
    );
  }
  return ['<inbox-handled>', ...lines, '</inbox-handled>'].join('\n');
}

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
