// Runtime events into the console store. Events arrive far faster than a screen should change
// (a token at a time, eight agents at once), so they are queued outside React and applied in
// one store update per flush interval: the store changes at most ~12 times a second (smooth
// enough to read a stream; every update is a React render and an Ink frame, and at 20 a second
// eight streaming agents cost a third more CPU and memory for no visible gain).
import type { EventHub, EventOf, HuddleEvent } from '../../runtime/events/events.js';
import type { AgentView, ApprovalView, ConsoleState, ConsoleStore, AgentStatus, TurnProgress } from './console-store.js';
import { patchAgent } from './console-store.js';
import { appendItem, insertBeforeRunningTool, itemId, replaceLast, type TranscriptItem } from '../render/transcript-items.js';
import { formatTokens } from '../render/tokens.js';
import { PERSON_SENDER } from '../../runtime/vocabulary.js';
import { registeredSecrets, scrub } from '../../runtime/secrets.js';

export const FLUSH_INTERVAL_MS = 80;

export class EventBridge {
  readonly #store: ConsoleStore;
  #queue: HuddleEvent[] = [];
  /** Per agent, the queued text_delta that later deltas of the same stream are appended to. */
  #openDelta = new Map<string, number>();
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
    this.#openDelta.clear();
    this.#store.setState((state) => {
      let next: ConsoleState = state;
      for (const event of events) next = { ...next, ...applyEvent(next, event) };
      return next;
    });
  }

  #enqueue(raw: HuddleEvent): void {
    // Nothing registered as a secret reaches the screen (a streamed one is caught again once whole: text_delta below).
    const event = withoutSecrets(raw);
    // A stream arrives a word at a time: consecutive deltas of one agent become one, so a flush
    // costs one transcript update per agent, not one per word.
    if (event.type === 'text_delta') {
      const open = this.#openDelta.get(event.agent);
      if (open !== undefined) {
        const queued = this.#queue[open] as EventOf<'text_delta'>;
        this.#queue[open] = { ...queued, text: queued.text + event.text };
        return;
      }
      this.#openDelta.set(event.agent, this.#queue.length);
    } else {
      this.#openDelta.delete(event.agent);
    }
    this.#queue.push(event);
    // No timer runs while nothing happens: an idle team costs no CPU here.
    this.#timer ??= setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }
}

/** Longer than any spelling of a secret: one completed by `delta` starts within this much of the end. */
const SCRUB_WINDOW = 4096;

/** `text + delta` scrubbed where a secret may just have been completed (what came before was scrubbed already). */
function scrubTail(text: string, delta: string): string {
  if (!registeredSecrets().length) return text + delta;
  const start = Math.max(0, text.length - SCRUB_WINDOW);
  return text.slice(0, start) + scrub(text.slice(start) + delta);
}

function withoutSecrets(event: HuddleEvent): HuddleEvent {
  if (!registeredSecrets().length) return event;
  const json = JSON.stringify(event);
  const clean = scrub(json);
  return clean === json ? event : (JSON.parse(clean) as HuddleEvent);
}

/** One event's effect on the state; pure, so it is easy to test. */
export function applyEvent(state: ConsoleState, event: HuddleEvent): Partial<ConsoleState> {
  // Any event another process emitted (mirrored from a team on PostgreSQL) says where its agent
  // runs; an agent the console shows already (`huddle` and `bus` events make no pane).
  const host = event.host;
  const agent = state.agents[event.agent];
  if (host === undefined || agent?.host === host || (!agent && event.type !== 'status')) return applyEventHere(state, event);
  const hosted: ConsoleState = { ...state, ...patchAgent(state, event.agent, () => ({ host })) };
  return { agents: hosted.agents, order: hosted.order, ...applyEventHere(hosted, event) };
}

function applyEventHere(state: ConsoleState, event: HuddleEvent): Partial<ConsoleState> {
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
  if (event.subagent !== undefined && event.type !== 'usage') return subagentProgress(state, event, at);
  switch (event.type) {
    case 'text_delta':
      return touched(
        patchAgent(state, name, (agent) => {
          const last = agent.items.at(-1);
          const delta = String(event.text ?? '');
          const items =
            last?.kind === 'assistant' && last.streaming
              ? [...agent.items.slice(0, -1), { ...last, text: scrubTail(last.text, delta) }]
              : appendItem(agent.items, { kind: 'assistant', id: itemId(), text: delta, streaming: true });
          const turn = agent.turn ?? startTurn(at);
          const writing = turn.phase === 'writing' ? turn : { ...turn, phase: 'writing' as const, phaseSince: at, retry: undefined };
          return { items, lastActivity: at, turn: { ...writing, streamedChars: writing.streamedChars + delta.length } };
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
        const attempt = Number(event.attempt ?? 1);
        const turn = agent.turn ?? startTurn(at);
        return {
          items: appendItem(kept, { kind: 'notice', id: itemId(), text, tone: 'warn' }),
          // The header says `retrying N of M` rather than `thinking` until an answer comes.
          turn: { ...turn, phase: 'model', phaseSince: at, retry: { attempt, of: Number(event.maxRetries ?? attempt) } },
          lastActivity: at,
        };
      });
    case 'prompt': {
      const source = String(event.source ?? 'user');
      if (source === 'inbox') return {}; // shown from message_delivered, with senders
      return touched(
        patchAgent(state, name, (agent) => ({
          ...(source === 'user' ? { queued: delivered(agent.queued, [event.text]) } : {}),
          items: appendItem(agent.items, {
            kind: 'prompt',
            id: itemId(),
            text: String(event.text ?? ''),
            source,
            by: typeof event.by === 'string' ? event.by : undefined,
          }),
          lastActivity: at,
        })),
      );
    }
    case 'message_delivered': {
      const messages = Array.isArray(event.messages) ? (event.messages as Array<Record<string, unknown>>) : [];
      if (messages.length === 0) return {};
      const shown = messages.map((m) => ({
        from: String(m.from ?? '?'),
        type: String(m.type ?? 'message'),
        content: String(m.content ?? ''),
        ...(typeof m.approve === 'boolean' ? { approve: m.approve } : {}),
        ...(typeof m.reason === 'string' ? { reason: m.reason } : {}),
        ...(typeof m.feedback === 'string' ? { feedback: m.feedback } : {}),
        ...(typeof m.plan === 'string' ? { plan: m.plan } : {}),
      }));
      const fromPerson = shown.filter((m) => m.from === PERSON_SENDER).map((m) => m.content);
      return touched(
        patchAgent(state, name, (agent) => ({
          items: appendItem(agent.items, { kind: 'inbox', id: itemId(), to: name, messages: shown }),
          ...(fromPerson.length ? { queued: delivered(agent.queued, fromPerson) } : {}),
          lastActivity: at,
        })),
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
        turn: { ...(agent.turn ?? startTurn(at)), phase: 'tool', phaseSince: at, retry: undefined },
        lastActivity: at,
      }));
    case 'tool_result':
      return touched(
        patchAgent(state, name, (agent) => ({
          items: replaceLast(
            agent.items,
            (item) => item.kind === 'tool' && item.toolUseId === event.id,
            (item) =>
              ({
                ...item,
                state: event.ok ? 'ok' : 'error',
                durationMs: Number(event.duration_ms ?? 0),
                result: String(event.content ?? ''),
              }) as TranscriptItem,
          ),
          activeTool: undefined,
          turn: agent.turn ? { ...agent.turn, phase: 'model', phaseSince: at } : undefined,
          lastActivity: at,
        })),
      );
    case 'usage':
      return patchAgent(state, name, (agent) => ({
        inputTokens:
          agent.inputTokens + Number(event.input_tokens ?? 0) + Number(event.cache_creation_input_tokens ?? 0) + Number(event.cache_read_input_tokens ?? 0),
        outputTokens: agent.outputTokens + Number(event.output_tokens ?? 0),
        cacheReadTokens: agent.cacheReadTokens + Number(event.cache_read_input_tokens ?? 0),
        cacheWriteTokens: agent.cacheWriteTokens + Number(event.cache_creation_input_tokens ?? 0),
        sharedCacheReadTokens: agent.sharedCacheReadTokens + (event.first_call ? Number(event.cache_read_input_tokens ?? 0) : 0),
        costUsd: Number(event.total_cost_usd ?? agent.costUsd),
        contextTokens: Number(event.context_tokens ?? agent.contextTokens),
        model: typeof event.model === 'string' ? event.model : agent.model,
        // The real count replaces the estimate from the streamed text; an answer came, so no retry is on.
        turn: agent.turn ? { ...agent.turn, streamedChars: 0, retry: undefined } : undefined,
        lastActivity: at,
      }));
    case 'status':
      return patchAgent(state, name, (agent) => ({
        status: String(event.status) as AgentStatus,
        reason: typeof event.reason === 'string' ? event.reason : typeof event.error === 'string' ? event.error : undefined,
        ...(typeof event.role === 'string' ? { role: event.role } : {}),
        ...turnAfterStatus(agent, String(event.status) as AgentStatus, at),
        lastActivity: at,
      }));
    case 'error':
      if (event.interrupted) {
        return patchAgent(state, name, (agent) => ({
          // What comes next, in the same line: the lead goes on from the person's next prompt; a teammate waits for a message.
          items: appendItem(closeStreaming(agent.items), {
            kind: 'notice',
            id: itemId(),
            text:
              name === 'lead'
                ? 'interrupted · type to go on from here (or /restart lead for a fresh start)'
                : `interrupted · ${name} waits until you message it (type here), or /restart ${name}`,
            tone: 'warn',
          }),
          activeTool: undefined,
        }));
      }
      return {
        ...touched(
          patchAgent(state, name, (agent) => ({
            items: appendItem(closeStreaming(agent.items), { kind: 'notice', id: itemId(), text: String(event.message ?? 'error'), tone: 'error' }),
            lastActivity: at,
          })),
        ),
        // A refused key stops every agent the same way: say so where the person looks, whatever pane is in view.
        ...(event.status === 401 || event.status === 403 ? { flash: { text: `${name}: ${event.message}`, tone: 'error' as const } } : {}),
      };
    case 'warning':
      // Budget warnings (runtime/budget.ts) also stay in the agent's pane, not only in the flash.
      if (event.budget && name !== 'huddle' && state.agents[name]) {
        const text = String(event.message ?? 'budget warning');
        return {
          ...patchAgent(state, name, (agent) => ({ items: appendItem(agent.items, { kind: 'notice', id: itemId(), text, tone: 'warn' }) })),
          flash: { text, tone: 'warn' },
        };
      }
      // A restart (its start, its end or its failure) and advice in place of one stay in the pane too.
      if ((event.restart !== undefined || event.advice) && name !== 'huddle' && state.agents[name]) {
        const text = String(event.message ?? '');
        const tone = event.restart === 'failed' || event.advice ? 'warn' : 'info';
        const shown = event.restart === 'start' || event.restart === 'done' ? `↻ ${text}` : text;
        return {
          ...touched(
            patchAgent(state, name, (agent) => ({
              items: appendItem(closeStreaming(agent.items), { kind: 'notice', id: itemId(), text: shown, tone }),
              restarting: event.restart === 'start',
              // The failed turn is over; the restarted agent's next one is timed afresh.
              ...(event.restart === 'start' ? { turn: undefined, lastTurnMs: undefined } : {}),
              lastActivity: at,
            })),
          ),
          // Said above the input too when the pane is not in view; in view, the pane says it (the answer's `restarting…` goes).
          ...(name === state.focus && state.view === 'pane'
            ? state.flash?.text.startsWith('restarting ')
              ? { flash: undefined }
              : {}
            : { flash: { text: `${name}: ${shown}`, tone } }),
        };
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
        detail: typeof event.detail === 'string' ? event.detail : undefined,
      };
      // The question itself is drawn under the pane (ask-box.ts); the transcript keeps that it was asked.
      // A failure, a stall or a budget stop is in the pane already, in its own words.
      const isToolCall = !['failed', 'stalled', 'budget', 'plan'].includes(request.tool);
      const text = `asked you to approve: ${request.tool} ${request.summary}`;
      return {
        ...touched(
          patchAgent(state, name, (agent) => ({
            items: waitForPerson(
              isToolCall ? insertBeforeRunningTool(agent.items, { kind: 'notice', id: itemId(), text, tone: 'warn' }) : agent.items,
              at,
              'start',
            ),
            lastActivity: at,
          })),
        ),
        approvals: [...state.approvals.filter((a) => a.id !== request.id), request],
      };
    }
    case 'approval_resolved': {
      const request = state.approvals.find((a) => a.id === event.id);
      const approvals = state.approvals.filter((a) => a.id !== event.id);
      const approvalIndex = Math.min(state.approvalIndex, Math.max(0, approvals.length - 1));
      if (!request) return { approvals, approvalIndex };
      const decided =
        event.decision === 'approve'
          ? 'approved'
          : event.decision === 'always'
            ? 'approved, and allow-listed'
            : event.decision === 'deny'
              ? 'denied'
              : 'withdrawn';
      const text = `${decided}: ${request.tool} ${request.summary}${typeof event.note === 'string' ? ` (${event.note})` : ''}`;
      const tone = event.decision === 'deny' ? 'warn' : 'info';
      // A failure or stall answered: the restart says `↻ restarting…` itself; a dismissal says so in its own words.
      const supervision = request.tool === 'failed' || request.tool === 'stalled';
      const said = supervision ? (event.decision === 'deny' ? `dismissed: ${request.summary}` : undefined) : text;
      return {
        ...patchAgent(state, name, (agent) => ({
          items:
            said === undefined
              ? waitForPerson(agent.items, at, 'end')
              : insertBeforeRunningTool(waitForPerson(agent.items, at, 'end'), { kind: 'notice', id: itemId(), text: said, tone }),
          lastActivity: at,
        })),
        approvals,
        approvalIndex,
        ...(state.denying === request.id ? { denying: undefined } : {}),
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

/** The running tool call of an agent starts or stops waiting for the person: its own duration leaves that out. */
function waitForPerson(items: TranscriptItem[], at: number, edge: 'start' | 'end'): TranscriptItem[] {
  return replaceLast(
    items,
    (item) => item.kind === 'tool' && item.state === 'running',
    (item) => {
      const tool = item as Extract<TranscriptItem, { kind: 'tool' }>;
      if (edge === 'start') return { ...tool, waitingSince: at };
      if (tool.waitingSince === undefined) return tool;
      return { ...tool, waitingSince: undefined, waitedMs: (tool.waitedMs ?? 0) + Math.max(0, at - tool.waitingSince) };
    },
  );
}

/** The queue less what was delivered (each text once, the oldest first). */
function delivered(queued: string[] | undefined, texts: string[]): string[] | undefined {
  if (!queued?.length) return queued;
  const left = [...queued];
  for (const text of texts) {
    const index = left.indexOf(text);
    if (index >= 0) left.splice(index, 1);
  }
  return left;
}

function startTurn(at: number): TurnProgress {
  return { startedAt: at, phase: 'model', phaseSince: at, streamedChars: 0 };
}

/** A turn starts when the agent starts working, waits with it, and ends (timed) when it stops. */
function turnAfterStatus(agent: AgentView, status: AgentStatus, at: number): Partial<AgentView> {
  if (status === 'working') {
    if (!agent.turn) return { turn: startTurn(at) };
    return agent.turn.phase === 'waiting' ? { turn: { ...agent.turn, phase: agent.activeTool ? 'tool' : 'model', phaseSince: at } } : {};
  }
  if (status === 'waiting') return agent.turn ? { turn: { ...agent.turn, phase: 'waiting', phaseSince: at } } : {};
  if (!agent.turn) return {};
  return { turn: undefined, lastTurnMs: Math.max(0, at - agent.turn.startedAt) };
}

function closeStreaming(items: TranscriptItem[]): TranscriptItem[] {
  const last = items.at(-1);
  return last?.kind === 'assistant' && last.streaming ? [...items.slice(0, -1), { ...last, streaming: false }] : items;
}

/**
 * A subagent's event: not the parent's conversation, only a line of progress under the parent's
 * explore call (`⏺ explore 3 helpers`, then what each helper does last). Its usage is the parent's.
 */
function subagentProgress(state: ConsoleState, event: HuddleEvent, at: number): Partial<ConsoleState> {
  const doing =
    event.type === 'prompt'
      ? 'started'
      : event.type === 'tool_call'
        ? `${event.name} ${event.summary}`.trim()
        : event.type === 'error'
          ? event.message
          : event.type === 'text'
            ? 'answered'
            : undefined;
  if (doing === undefined || event.subagent === undefined) return {};
  const id = event.subagent.slice(event.subagent.lastIndexOf('/') + 1);
  return patchAgent(state, event.agent, (agent) => ({
    items: replaceLast(
      agent.items,
      (item) => item.kind === 'tool' && item.toolUseId === event.parent_tool_use_id,
      (item) => (item.kind === 'tool' ? { ...item, helpers: { ...item.helpers, [id]: doing } } : item),
    ),
    lastActivity: at,
  }));
}
