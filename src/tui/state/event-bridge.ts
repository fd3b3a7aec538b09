// Runtime events into the console store. Events arrive far faster than a screen should change
// (a token at a time, eight agents at once), so they are queued outside React and applied in
// one store update per flush interval: the store changes at most ~20 times a second.
import type { EventHub, HuddleEvent } from '../../runtime/events/events.js';
import type { ApprovalView, ConsoleState, ConsoleStore, AgentStatus } from './console-store.js';
import { patchAgent } from './console-store.js';
import { appendItem, itemId, replaceLast, type TranscriptItem } from './transcript.js';
import { formatTokens } from '../components/glyphs.js';

export const FLUSH_INTERVAL_MS = 50;

export class EventBridge {
  readonly #store: ConsoleStore;
  #queue: HuddleEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;

  constructor(hub: EventHub, store: ConsoleStore) {
    this.#store = store;
    this.#unsubscribe = hub.subscribe((event) => this.#enqueue(event));
  }

  close(): void {
    this.#unsubscribe();
    if (this.#timer) clearTimeout(this.#timer);
    this.flush();
  }

  /** Applies every queued event now (tests and shutdown call this directly). */
  flush(): void {
    this.#timer = undefined;
    if (this.#queue.length === 0) return;
    const events = this.#queue;
    this.#queue = [];
    this.#store.setState((state) => {
      let next: ConsoleState = state;
      for (const event of events) next = { ...next, ...applyEvent(next, event) };
      return next;
    });
  }

  #enqueue(event: HuddleEvent): void {
    this.#queue.push(event);
    // No timer runs while nothing happens: an idle team costs no CPU here.
    this.#timer ??= setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }
}

/** One event's effect on the state; pure, so it is easy to test. */
export function applyEvent(state: ConsoleState, event: HuddleEvent): Partial<ConsoleState> {
  const name = event.agent;
  // Output in a pane the person is not looking at marks it unread.
  const touched = (patch: Partial<ConsoleState>): Partial<ConsoleState> => {
    if (name === state.focus && state.view === 'pane') return patch;
    const agents = patch.agents ?? state.agents;
    const agent = agents[name];
    if (!agent || agent.unread) return patch;
    return { ...patch, agents: { ...agents, [name]: { ...agent, unread: true } } };
  };
  const at = Date.parse(event.ts) || Date.now();
  switch (event.type) {
    case 'text_delta':
      return touched(
        patchAgent(state, name, (agent) => {
          const last = agent.items.at(-1);
          const delta = String(event.text ?? '');
          const items =
            last?.kind === 'assistant' && last.streaming
              ? [...agent.items.slice(0, -1), { ...last, text: last.text + delta }]
              : appendItem(agent.items, { kind: 'assistant', id: itemId(), text: delta, streaming: true });
          return { items, lastActivity: at };
        }),
      );
    case 'text':
      return patchAgent(state, name, (agent) => {
        const text = String(event.text ?? '');
        const last = agent.items.at(-1);
        const items: TranscriptItem[] =
          last?.kind === 'assistant' && last.streaming
            ? [...agent.items.slice(0, -1), { ...last, text, streaming: false }]
            : appendItem(agent.items, { kind: 'assistant', id: itemId(), text, streaming: false });
        return { items, lastActivity: at };
      });
    case 'retry':
      // The failed attempt's partial text is void: drop it, and say why on screen.
      return patchAgent(state, name, (agent) => {
        const last = agent.items.at(-1);
        const kept = last?.kind === 'assistant' && last.streaming ? agent.items.slice(0, -1) : agent.items;
        const seconds = (Number(event.delayMs ?? 0) / 1000).toFixed(1);
        const text = `${String(event.reason ?? 'model call failed')}; retrying in ${seconds} s`;
        return { items: appendItem(kept, { kind: 'notice', id: itemId(), text, tone: 'warn' }), lastActivity: at };
      });
    case 'prompt': {
      const source = String(event.source ?? 'user');
      if (source === 'inbox') return {}; // shown from message_delivered, with senders
      return touched(
        patchAgent(state, name, (agent) => ({
          items: appendItem(agent.items, { kind: 'prompt', id: itemId(), text: String(event.text ?? ''), source }),
          lastActivity: at,
        })),
      );
    }
    case 'message_delivered': {
      const messages = Array.isArray(event.messages) ? (event.messages as Array<Record<string, unknown>>) : [];
      const shown = messages.map((m) => ({ from: String(m.from ?? '?'), type: String(m.type ?? 'message'), content: String(m.content ?? '') }));
      return touched(
        patchAgent(state, name, (agent) => ({ items: appendItem(agent.items, { kind: 'inbox', id: itemId(), messages: shown }), lastActivity: at })),
      );
    }
    case 'tool_call':
      return patchAgent(state, name, (agent) => ({
        items: appendItem(closeStreaming(agent.items), {
          kind: 'tool',
          id: itemId(),
          toolUseId: String(event.id ?? ''),
          name: String(event.name ?? '?'),
          summary: String(event.summary ?? ''),
          state: 'running',
        }),
        activeTool: String(event.name ?? ''),
        lastActivity: at,
      }));
    case 'tool_result':
      return touched(
        patchAgent(state, name, (agent) => ({
          items: replaceLast(
            agent.items,
            (item) => item.kind === 'tool' && item.toolUseId === event.id,
            (item) => ({ ...item, state: event.ok ? 'ok' : 'error', durationMs: Number(event.duration_ms ?? 0), result: String(event.content ?? '') }) as TranscriptItem,
          ),
          activeTool: undefined,
          lastActivity: at,
        })),
      );
    case 'usage':
      return patchAgent(state, name, (agent) => ({
        inputTokens: agent.inputTokens + Number(event.input_tokens ?? 0) + Number(event.cache_creation_input_tokens ?? 0) + Number(event.cache_read_input_tokens ?? 0),
        outputTokens: agent.outputTokens + Number(event.output_tokens ?? 0),
        cacheReadTokens: agent.cacheReadTokens + Number(event.cache_read_input_tokens ?? 0),
        cacheWriteTokens: agent.cacheWriteTokens + Number(event.cache_creation_input_tokens ?? 0),
        costUsd: Number(event.total_cost_usd ?? agent.costUsd),
        contextTokens: Number(event.context_tokens ?? agent.contextTokens),
        model: typeof event.model === 'string' ? event.model : agent.model,
        lastActivity: at,
      }));
    case 'status':
      return patchAgent(state, name, () => ({
        status: String(event.status) as AgentStatus,
        reason: typeof event.reason === 'string' ? event.reason : typeof event.error === 'string' ? event.error : undefined,
        ...(typeof event.role === 'string' ? { role: event.role } : {}),
        lastActivity: at,
      }));
    case 'error':
      if (event.interrupted) {
        return patchAgent(state, name, (agent) => ({
          items: appendItem(closeStreaming(agent.items), { kind: 'notice', id: itemId(), text: 'interrupted', tone: 'warn' }),
          activeTool: undefined,
        }));
      }
      return touched(
        patchAgent(state, name, (agent) => ({
          items: appendItem(closeStreaming(agent.items), { kind: 'notice', id: itemId(), text: String(event.message ?? 'error'), tone: 'error' }),
          lastActivity: at,
        })),
      );
    case 'warning':
      // Budget warnings (runtime/budget.ts) also stay in the agent's pane, not only in the flash.
      if (event.budget && name !== 'huddle' && state.agents[name]) {
        const text = String(event.message ?? 'budget warning');
        return { ...patchAgent(state, name, (agent) => ({ items: appendItem(agent.items, { kind: 'notice', id: itemId(), text, tone: 'warn' }) })), flash: { text, tone: 'warn' } };
      }
      return { flash: { text: String(event.message ?? 'warning'), tone: 'warn' } };
    case 'approval_requested': {
      const request: ApprovalView = {
        id: String(event.id ?? ''),
        agent: name,
        tool: String(event.tool ?? '?'),
        summary: String(event.summary ?? ''),
        reason: String(event.reason ?? ''),
        prefixes: Array.isArray(event.prefixes) ? event.prefixes.map(String) : [],
      };
      const text = `waiting for your approval: ${request.tool} ${request.summary} (Ctrl+Y to answer)`;
      return {
        ...touched(patchAgent(state, name, (agent) => ({ items: appendItem(agent.items, { kind: 'notice', id: itemId(), text, tone: 'warn' }), lastActivity: at }))),
        approvals: [...state.approvals.filter((a) => a.id !== request.id), request],
      };
    }
    case 'approval_resolved': {
      const request = state.approvals.find((a) => a.id === event.id);
      const approvals = state.approvals.filter((a) => a.id !== event.id);
      const approvalIndex = Math.min(state.approvalIndex, Math.max(0, approvals.length - 1));
      if (!request) return { approvals, approvalIndex };
      const decided =
        event.decision === 'approve' ? 'approved' : event.decision === 'always' ? 'approved, and allow-listed' : event.decision === 'deny' ? 'denied' : 'withdrawn';
      const text = `${decided}: ${request.tool} ${request.summary}${typeof event.note === 'string' ? ` (${event.note})` : ''}`;
      const tone = event.decision === 'deny' ? 'warn' : 'info';
      return {
        ...patchAgent(state, name, (agent) => ({ items: appendItem(agent.items, { kind: 'notice', id: itemId(), text, tone }), lastActivity: at })),
        approvals,
        approvalIndex,
      };
    }
    case 'compaction':
      return touched(
        patchAgent(state, name, (agent) => {
          const before = formatTokens(Number(event.before_tokens ?? 0));
          const after = formatTokens(Number(event.after_tokens ?? 0));
          if (event.kind === 'trim') {
            const cut = Number(event.cut ?? 0);
            const text = `context trimmed: ${cut} old tool result${cut === 1 ? '' : 's'} cut, ~${before} → ~${after} tokens`;
            return { items: appendItem(agent.items, { kind: 'notice', id: itemId(), text, tone: 'info' }), lastActivity: at };
          }
          const text = `context compacted: ${before} → ${after} tokens${event.file ? ` (full transcript: ${String(event.file)})` : ''}`;
          return {
            items: appendItem(closeStreaming(agent.items), { kind: 'notice', id: itemId(), text, tone: 'info' }),
            // The real count comes with the next response; until then the estimate is the better number.
            contextTokens: Number(event.after_tokens ?? agent.contextTokens),
            lastActivity: at,
          };
        }),
      );
    default:
      return {};
  }
}

function closeStreaming(items: TranscriptItem[]): TranscriptItem[] {
  const last = items.at(-1);
  return last?.kind === 'assistant' && last.streaming ? [...items.slice(0, -1), { ...last, streaming: false }] : items;
}
