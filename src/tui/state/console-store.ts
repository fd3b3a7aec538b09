// The console's state: one zustand vanilla store, written by the event bridge (runtime events),
// by key intents (the input line, views, focus) and by intents' echoes, read by components
// through selectors.
import { createStore } from 'zustand/vanilla';
import { EMPTY_INPUT, type InputBuffer } from './input-buffer.js';
import type { Task } from '../../runtime/store/board.js';
import type { TranscriptItem } from './transcript.js';
import type { MemberStatus } from '../../runtime/vocabulary.js';

/** A member's status, as the console shows it. */
export type AgentStatus = MemberStatus;

export interface AgentView {
  name: string;
  role: string;
  status: AgentStatus;
  reason?: string | undefined;
  items: TranscriptItem[];
  /** New output since the person last looked at this pane. */
  unread: boolean;
  /** Every input token, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens: read from the prompt cache (billed 0.1×) and written to it (1.25×). */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  contextTokens: number;
  model?: string | undefined;
  lastActivity: number;
  /** The tool running now, for the status line. */
  activeTool?: string | undefined;
}

export type ViewName = 'pane' | 'tasks' | 'team' | 'help' | 'approvals' | 'config' | 'mcp' | 'summary';

/** A page of text a command shows as a view (/config, /mcp): computed when opened. */
export interface TextPage {
  title: string;
  lines: string[];
}

/** A tool call waiting for the person (ask mode), as the "needs you" view shows it. */
export interface ApprovalView {
  id: string;
  agent: string;
  tool: string;
  summary: string;
  reason: string;
  /** What "approve always" adds to the allow-list in .team/settings.local.json (empty: cannot be allow-listed). */
  prefixes: string[];
}

export interface Flash {
  text: string;
  tone: 'info' | 'warn' | 'error';
}

export interface ConsoleState {
  agents: Record<string, AgentView>;
  order: string[];
  focus: string;
  view: ViewName;
  tasks: Task[];
  /** Rows scrolled up from the bottom, per pane. */
  scroll: Record<string, number>;
  /** Tool results shown in full, per pane (toggled with Ctrl+O). */
  expanded: Record<string, boolean>;
  flash: Flash | undefined;
  quitArmed: boolean;
  /**
   * The input line. Key intents change it with synchronous store updates and read it back with
   * getState(), so keys that arrive faster than React renders still apply in order.
   */
  input: InputBuffer;
  model: string;
  endpoint: string;
  /** `huddle demo`: a scripted model, clearly labelled. */
  demo: boolean;
  /** No API key: the console explains how to set one. */
  keyMissing: boolean;
  /** Code highlighting loads after the first frame; panes redraw once when it is ready. */
  highlighterReady: boolean;
  /** The "needs you" queue, oldest first, and the one selected in /approvals. */
  approvals: ApprovalView[];
  approvalIndex: number;
  /** What the /config or /mcp view shows. */
  page?: TextPage | undefined;
  /** /summary: the run record's lines, as last made. */
  summary: string[];
}

export type ConsoleStore = ReturnType<typeof createConsoleStore>;

export function emptyAgent(name: string, role: string): AgentView {
  return {
    name,
    role,
    status: 'idle',
    items: [],
    unread: false,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    contextTokens: 0,
    lastActivity: Date.now(),
  };
}

export function createConsoleStore(initial: { model: string; endpoint: string; demo?: boolean; keyMissing?: boolean }) {
  return createStore<ConsoleState>(() => ({
    agents: { lead: emptyAgent('lead', 'lead') },
    order: ['lead'],
    focus: 'lead',
    view: 'pane',
    tasks: [],
    scroll: {},
    expanded: {},
    flash: undefined,
    quitArmed: false,
    input: EMPTY_INPUT,
    model: initial.model,
    endpoint: initial.endpoint,
    demo: initial.demo ?? false,
    keyMissing: initial.keyMissing ?? false,
    highlighterReady: false,
    approvals: [],
    approvalIndex: 0,
    summary: [],
  }));
}

/** Immutable update of one agent (created on first sight). */
export function patchAgent(state: ConsoleState, name: string, patch: (agent: AgentView) => Partial<AgentView>): Partial<ConsoleState> {
  const existing = state.agents[name] ?? emptyAgent(name, 'teammate');
  const order = state.order.includes(name) ? state.order : [...state.order, name];
  return { agents: { ...state.agents, [name]: { ...existing, ...patch(existing) } }, order };
}
