// How `huddle demo`'s scripted model reads a request: what a model would notice in the messages
// (its tool calls and their results, inbox messages, auto-claims, prompts).
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

export interface InboxMessage {
  id?: string;
  type?: string;
  from: string;
  content: string;
  request_id?: string;
  approve?: boolean;
}

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  result?: { text: string; isError: boolean };
}

export interface UserTurn {
  /** Plain text from the person (or a spawn prompt), if any. */
  prompt?: string;
  autoClaim?: { id: number; subject: string };
  inbox: InboxMessage[];
  /** The tool calls whose results this turn carries. */
  results: ToolCall[];
}

/** What a model would notice in the messages: its tool calls and results, inbox, claims, prompts. */
export class Conversation {
  readonly calls: ToolCall[] = [];
  readonly inbox: InboxMessage[] = [];
  readonly assistantTexts: string[] = [];
  last: UserTurn = { inbox: [], results: [] };
  lastAutoClaim: { id: number; subject: string } | undefined;

  constructor(messages: MessageParam[]) {
    const byId = new Map<string, ToolCall>();
    const seen = new Set<string>();
    for (const message of messages) {
      const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
      if (message.role === 'assistant') {
        for (const block of blocks) {
          if (block.type === 'text') this.assistantTexts.push(block.text);
          if (block.type === 'tool_use') {
            const call: ToolCall = { id: block.id, name: block.name, input: (block.input ?? {}) as Record<string, unknown> };
            this.calls.push(call);
            byId.set(call.id, call);
          }
        }
        continue;
      }
      const turn: UserTurn = { inbox: [], results: [] };
      const addInbox = (text: string) => {
        for (const m of parseInbox(text)) {
          turn.inbox.push(m);
          if (m.id && seen.has(m.id)) continue; // read_inbox and delivery never repeat, but be safe
          if (m.id) seen.add(m.id);
          this.inbox.push(m);
        }
      };
      for (const block of blocks) {
        if (block.type === 'text') {
          const claim = /<auto-claimed>Task #(\d+): (.*?)<\/auto-claimed>/.exec(block.text);
          if (block.text.trimStart().startsWith('<inbox>')) addInbox(block.text);
          else if (claim) turn.autoClaim = this.lastAutoClaim = { id: Number(claim[1]), subject: claim[2] ?? '' };
          else turn.prompt = block.text;
        } else if (block.type === 'tool_result') {
          const text =
            typeof block.content === 'string' ? block.content : (block.content ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
          const call = byId.get(block.tool_use_id);
          if (call) {
            call.result = { text, isError: block.is_error === true };
            turn.results.push(call);
          }
          if (text.includes('<inbox>')) addInbox(text);
        }
      }
      this.last = turn;
    }
  }

  /** Calls of a tool that ran without error. */
  succeeded(name: string): ToolCall[] {
    return this.calls.filter((k) => k.name === name && k.result && !k.result.isError);
  }

  /** Calls of a tool that ran, well or not (not those skipped by an interrupt): never retried, so no loops. */
  attempted(name: string): ToolCall[] {
    return this.calls.filter((k) => k.name === name && k.result && !(k.result.isError && k.result.text.startsWith('not run')));
  }
}

export function parseInbox(text: string): InboxMessage[] {
  const body = /<inbox>([\s\S]*?)(?:<\/inbox>|$)/.exec(text)?.[1] ?? '';
  const messages: InboxMessage[] = [];
  for (const line of body.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      const m = JSON.parse(line) as Partial<InboxMessage>;
      if (typeof m.from === 'string') messages.push({ ...m, from: m.from, content: String(m.content ?? '') });
    } catch {
      // Not a message line; a real model would skip it too.
    }
  }
  return messages;
}

export function isReport(m: InboxMessage): boolean {
  return (m.type === 'message' || m.type === undefined) && m.from !== 'huddle' && /Task #\d+/.test(m.content);
}

/** Teammate reports by task id: one report per task, however often it is mentioned. */
export function reportsOf(inbox: InboxMessage[]): Map<number, InboxMessage> {
  const reports = new Map<number, InboxMessage>();
  for (const m of inbox.filter(isReport)) {
    const id = Number(/Task #(\d+)/.exec(m.content)?.[1]);
    if (!reports.has(id)) reports.set(id, m);
  }
  return reports;
}
