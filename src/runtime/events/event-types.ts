// Every event huddle emits, as one discriminated union on `type` (docs/contract.md#events). The JSON of an
// event is `{ts, agent, type, ...fields}`, exactly these fields: logs, `--json` and resume read it,
// so a field is added here, never renamed or nested. Each type and field: docs/contract.md#events.
import type { Message, MessageType } from '../store/bus.js';
import type { Task, TaskAction } from '../store/board.js';
import type { ApprovalDecision } from '../store/approvals.js';
import type { MemberStatus } from '../vocabulary.js';

/** Where a user turn came from: the person, the spawn prompt, the inbox, an auto-claim, or huddle itself. */
export const PROMPT_SOURCES = ['user', 'spawn', 'inbox', 'auto_claim', 'system'] as const;
export type PromptSource = (typeof PROMPT_SOURCES)[number];

/** A tool result part as the Messages API takes it (tools/types.ts's ToolResultBlock, spelled out: tools import events). */
export type ToolResultPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: string } };

/** Token counts as in runtime/model/pricing.ts's TokenUsage (spelled out: events sit below the model client). */
export type UsageCounts = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
};

/** What a budget warning or stop is about (runtime/budget; kept structural so events import no budget code). */
export type BudgetNote = {
  scope: string;
  kind?: string;
  spent?: number;
  limit?: number;
  /** A soft limit (a warning at e.g. 80 %), not a stop. */
  soft?: boolean;
  /** The limits after an extension. */
  limits?: Record<string, number | undefined>;
};

/** The fields of each event type, beside `ts`, `agent` and `type`. */
export interface EventFields {
  /** A piece of streamed model text. */
  text_delta: { text: string };
  /** The whole text of one model response. */
  text: { text: string };
  tool_call: { id: string; name: string; input: unknown; summary: string };
  /**
   * A tool call's result. A call of the response that was not run (the turn was interrupted or the
   * agent is stopping after an earlier call, or the response was cut at max_tokens) has no
   * `tool_call` event; its result says `skipped: true` and carries the call's `input`, so the
   * transcript (agents/loop/transcript.ts) holds the call and its result as the model saw them.
   */
  tool_result: {
    id: string;
    name: string;
    ok: boolean;
    content: string;
    duration_ms: number;
    skipped?: true;
    input?: unknown;
    /** Richer content the model got instead of `content` (an MCP tool's images); the transcript sends these. */
    blocks?: ToolResultPart[];
  };
  /** The roster changed a member's status (with its role, and why). */
  status: { status: MemberStatus; role: string; reason?: string; error?: string; task?: number | string | null };
  /** A user turn entered the agent's context. */
  prompt: { text: string; source: PromptSource; by?: string };
  message_sent: { id: string; from: string; to: string; message_type: MessageType; content: string; request_id?: string };
  /**
   * Inbox messages taken for the model: by the agent's loop (with `messages` and the cursor's
   * `next_offset`, logged before the cursor moves), or by the read_inbox tool (`via`).
   */
  message_delivered: { ids: string[]; messages?: Message[]; next_offset?: number; via?: 'read_inbox' };
  task: { action: TaskAction | 'reconciled'; task: Task };
  /** One model call's usage and cost, with the agent's running totals. `purpose` marks calls outside the conversation. */
  usage: UsageCounts & {
    cost_usd: number;
    total_cost_usd: number;
    total_input_tokens: number;
    total_output_tokens: number;
    context_tokens: number;
    model: string;
    purpose?: 'compaction';
    restart?: boolean;
    /** An attempt that ended without a message (retried, interrupted, failed) but was billed what the API reported. */
    partial?: 'retried' | 'interrupted' | 'failed';
    /** The response's id and why it stopped: stream-json's assistant messages carry them. */
    message_id?: string;
    stop_reason?: string | null;
    /**
     * The agent's first model call in this process: what it read from the prompt cache another agent
     * wrote (a sibling's shared prefix), or an earlier run.
     */
    first_call?: true;
  };
  compaction: TrimFields | SummaryFields;
  /**
   * The agent's transcript starts over: `/restart` (a fresh loop from a summary) or
   * `/clear`. The transcript is then `first_turn` as one user turn, or empty when there is none
   * (a restarted teammate's first turn follows as its `prompt`).
   */
  context_reset: {
    /** `new_task`: a teammate took a task from the board and starts it from a fresh context. */
    reason: 'restart' | 'clear' | 'new_task';
    first_turn?: string;
    summary?: string;
    before_tokens?: number;
    after_tokens?: number;
  };
  /** A model call is retried; the partial text of the failed attempt is void. */
  retry: { attempt: number; maxRetries?: number; delayMs: number; status: number | undefined; reason: string; purpose?: 'compaction' };
  /**
   * Something was skipped, repaired or needs attention and the run goes on. `message` says
   * what; the other fields are details for programs (a budget, a stall, the file or inbox line).
   */
  warning: {
    message?: string;
    budget?: BudgetNote;
    stalled?: boolean;
    silent_ms?: number;
    file?: string;
    error?: string;
    inbox?: string;
    [detail: string]: unknown;
  };
  /**
   * Hooks ran for an event (docs/contract.md#hooks): the commands, how each ended, and what they
   * decided. Their output is not logged: a hook may print what it was meant to keep out of logs.
   */
  hook: {
    hook_event_name: string;
    blocked: boolean;
    reason?: string;
    permission_decision?: string;
    stop?: string;
    /** What the hooks' decision did here, in words ("the write was not run"). */
    effect?: string;
    tool?: string;
    task_id?: number;
    runs: Array<{ command: string; status: 'ok' | 'blocked' | 'failed'; exit_code: number | null; duration_ms: number; reason?: string }>;
  };
  /** A task's verify command ran before it could be completed (docs/contract.md#tasks). */
  verify: {
    task_id: number;
    command: string;
    ok: boolean;
    exit_code: number | null;
    duration_ms: number;
    timed_out?: boolean;
    /** One line: `verify failed: npm test (exit 1, 2.3 s)`. */
    summary: string;
    /** The status the update asked for (completed, or review for a task that requires one). */
    to: string;
  };
  /** A tool call (or a budget stop, a plan, a notice) waits for the person. */
  /** `detail`: what the call would do, shown with the question (an edit's diff, the start of a file to write). */
  approval_requested: { id: string; tool: string; summary: string; reason: string; prefixes: string[]; detail?: string };
  approval_resolved: { id: string; decision: ApprovalDecision | 'cancelled'; by?: string; note?: string };
  error: {
    message: string;
    fatal?: boolean;
    /** The person (or huddle) interrupted the model call or turn. */
    interrupted?: boolean;
    status?: number | undefined;
    /** A compaction failed; the context was left as it was. */
    compaction?: boolean;
    trigger?: string;
  };
  /** A headless run ended: its exit code, why, and the usage per agent and in all. */
  done: {
    ok: boolean;
    exit_code: number;
    duration_ms: number;
    reason?: string;
    budget?: BudgetNote & { agent: string; reason: string };
    usage: UsageCounts & { cost_usd: number };
    agents: Record<string, UsageCounts & { cost_usd: number; model_calls: number }>;
  };
}

/** Old tool results cut to stubs (agents/loop/context-trim.ts). */
export type TrimFields = {
  kind: 'trim';
  cut: number;
  chars_before: number;
  chars_after: number;
  before_tokens: number;
  after_tokens: number;
  /** The tool results of this many latest assistant turns were kept: the cut can be replayed exactly. */
  keep_turns?: number;
  /** Tokens from the first cut on: no longer in the prompt cache, written again by the next call. */
  cache_loss_tokens?: number;
};

/** The transcript replaced by a summary (agents/loop/compaction.ts). */
export type SummaryFields = {
  kind: 'summary';
  /** `restart` only in logs written before `context_reset` existed. */
  trigger: 'auto' | 'manual' | 'restart';
  focus?: string;
  before_tokens: number;
  after_tokens: number;
  summary_chars: number;
  /** The transcript replaced, saved whole (relative to the workspace). */
  file?: string;
  summary: string;
  /** The text the compacted context starts with (identity, tasks, summary); resume rebuilds from it. */
  first_turn?: string;
  messages_before?: number;
  messages_after?: number;
  duration_ms?: number;
};

export type EventType = keyof EventFields;

export const EVENT_TYPES = [
  'text_delta',
  'text',
  'tool_call',
  'tool_result',
  'status',
  'prompt',
  'message_sent',
  'message_delivered',
  'task',
  'usage',
  'compaction',
  'context_reset',
  'retry',
  'warning',
  'hook',
  'verify',
  'approval_requested',
  'approval_resolved',
  'error',
  'done',
] as const satisfies readonly EventType[];
// Every type of EventFields is listed above (a missing one fails the typecheck here).
const everyTypeListed: [Exclude<EventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : never = true;
void everyTypeListed;

export type EventEnvelope<T extends EventType = EventType> = {
  ts: string;
  /** The agent it is about: a member's name, or `huddle` / `bus` for the team itself. */
  agent: string;
  type: T;
  /** Set on events another process of the team emitted, mirrored from PostgreSQL: its host id. */
  host?: string;
  /** Set on a subagent's events (docs/contract.md#subagents): `agent` is its parent, this its id (`lead/explore-1`). */
  subagent?: string;
  /** With `subagent`: the parent's tool call that runs it. */
  parent_tool_use_id?: string;
};

/** One event of type T. */
export type EventOf<T extends EventType> = T extends EventType ? EventEnvelope<T> & EventFields[T] : never;

/** Any event: narrow it with `event.type`. */
export type HuddleEvent = EventOf<EventType>;

export function isEventType(type: unknown): type is EventType {
  return typeof type === 'string' && (EVENT_TYPES as readonly string[]).includes(type);
}
