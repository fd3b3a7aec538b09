// The console's state: one zustand vanilla store, written by the event bridge (runtime events),
// by key intents (the input line, views, focus) and by intents' echoes, read by components
// through selectors.
import type { BacklogRow } from '../../session/backlog-progress.js';
import type { WorkflowRunState } from '../../workflow/run-state.js';
import { createStore } from 'zustand/vanilla';
import { EMPTY_INPUT, type InputBuffer } from './input-buffer.js';
import type { Task } from '../../runtime/store/board.js';
import type { TranscriptItem } from '../render/transcript-items.js';
import type { PaneScroll } from '../render/pane-window.js';
import type { MemberStatus } from '../../runtime/vocabulary.js';
import type { BestOfRecord } from '../../runtime/record/best-of-record.js';

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
  /** Of cacheReadTokens: its first call's, a prefix another agent or an earlier run wrote (the team's shared prefix). */
  sharedCacheReadTokens: number;
  costUsd: number;
  contextTokens: number;
  model?: string | undefined;
  lastActivity: number;
  /** The tool running now, for the status line. */
  activeTool?: string | undefined;
  /** The turn in progress, as the console saw it begin (for the spinner, elapsed time and live counts). */
  turn?: TurnProgress | undefined;
  /** How long the last finished turn took ("done in 7 s"). */
  lastTurnMs?: number | undefined;
  /** What the person sent that has not entered the agent's context yet (shown as queued). */
  queued?: string[] | undefined;
  /** The host that runs it, when another process does (a worker of a team on PostgreSQL). */
  host?: string | undefined;
  /** Between a restart's start and its end (agents/lifecycle/restart.ts): the header says `↻ restarting…`. */
  restarting?: boolean | undefined;
}

/** What an agent in a turn is doing now, from its events; the console's own bookkeeping. */
export interface TurnProgress {
  startedAt: number;
  /** Waiting for the model, the model writing, a tool running, or waiting for the person. */
  phase: 'model' | 'writing' | 'tool' | 'waiting';
  phaseSince: number;
  /** Text streamed since the last usage report: the live token estimate until the real count arrives. */
  streamedChars: number;
  /** The model call is being retried (`retrying 2 of 6`) until an answer comes. */
  retry?: { attempt: number; of: number } | undefined;
}

/** A search in the pane in view (Ctrl+F). */
export interface PaneSearch {
  query: string;
  /** Which match is shown, counted from the last one (0: the newest). */
  match: number;
}

export type ViewName = 'pane' | 'tasks' | 'team' | 'help' | 'approvals' | 'grid' | 'page' | 'config' | 'mcp' | 'summary' | 'backlog' | 'bestof' | 'workflows';

/** /backlog: where the issues come from, each issue's row, and a line when no backlog is worked through. */
export interface BacklogView {
  /** `local`, `github:OWNER/REPO?label=…`; undefined: this console works through no backlog. */
  source: string | undefined;
  rows: BacklogRow[];
  note: string | undefined;
}

/** /best-of's compare view (docs/console.md#best-of): the run's comparison, the candidate selected, its diffs. */
export interface BestOfView {
  record: BestOfRecord;
  /** The candidate selected (←/→): its column is marked; at 80 columns it is the page shown. */
  selected: number;
  /** Each candidate's diff, read once the candidate ended. */
  diffs: Record<string, string>;
  /** d: the selected candidate's whole diff instead of the comparison. */
  detail: boolean;
  /** p or x asked: y carries it out, n (or Esc) not. */
  confirming?: { kind: 'pick'; name: string } | { kind: 'discard' } | undefined;
  /** A pick or discard under way. */
  busy: boolean;
}

/** A page of text a command shows as a view (/config, /mcp, /cost…): computed when opened, wrapped to the width when shown. */
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
  /** What the call would do (an edit's diff, the start of a file to write), shown with the question. */
  detail?: string | undefined;
}

/** A notice above the input: a command's result, an error, a hint. Kept until the person's next action. */
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
  /** Per pane: where a scrolled view starts (absent: following the end). */
  scroll: Record<string, PaneScroll | undefined>;
  /** Rows scrolled down in the view over the pane (help, a page, the board), from its top. */
  viewScroll: number;
  search: PaneSearch | undefined;
  /** The command palette (typing '/'): the selected row, and a line it was dismissed for. */
  palette: { index: number; closedFor: string | undefined };
  /** The selected tile in /grid. */
  gridIndex: number;
  /** /backlog: the issues of the backlog this console works through (or would: .team/backlog/), live, and the one selected. */
  backlog: BacklogView;
  backlogIndex: number;
  /** Mouse reporting on (wheel scrolls; Shift+drag selects in most terminals); Alt+M toggles it. */
  mouse: boolean;
  /** Bumped when something else drew over the screen (the person's editor): the console redraws whole. */
  redraws: number;
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
  /** Commands run unsandboxed (docs/contract.md#sandbox): the status bar says so, in yellow unless it was on purpose. */
  sandboxOff: { line: string; onPurpose: boolean } | undefined;
  /** Code highlighting loads after the first frame; panes redraw once when it is ready. */
  highlighterReady: boolean;
  /** The "needs you" queue, oldest first, and the one selected in /approvals. */
  approvals: ApprovalView[];
  approvalIndex: number;
  /** A request being denied from its pane: the input line takes the reason until Enter (or Esc). */
  denying: string | undefined;
  /** What a page view shows (/config, /mcp, and command output that is a page: /cost, /budget, /worktree). */
  page?: TextPage | undefined;
  /** /summary: the run record's lines, as last made. */
  summary: string[];
  /** The last /best-of run of this console, for its compare view. */
  bestOf?: BestOfView | undefined;
  /** The workflow started from the console (/workflow run), as it stands; and the agent selected in /workflows. */
  workflow: WorkflowRunState | undefined;
  workflowIndex: number;
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
    sharedCacheReadTokens: 0,
    costUsd: 0,
    contextTokens: 0,
    lastActivity: Date.now(),
  };
}

export function createConsoleStore(initial: {
  model: string;
  endpoint: string;
  demo?: boolean;
  keyMissing?: boolean;
  mouse?: boolean;
  sandboxOff?: { line: string; onPurpose: boolean } | undefined;
}) {
  return createStore<ConsoleState>(() => ({
    agents: { lead: emptyAgent('lead', 'lead') },
    order: ['lead'],
    focus: 'lead',
    view: 'pane',
    tasks: [],
    scroll: {},
    viewScroll: 0,
    search: undefined,
    palette: { index: 0, closedFor: undefined },
    gridIndex: 0,
    backlog: { source: undefined, rows: [], note: undefined },
    backlogIndex: 0,
    workflow: undefined,
    workflowIndex: 0,
    page: undefined,
    mouse: initial.mouse ?? mouseByDefault(),
    redraws: 0,
    expanded: {},
    flash: undefined,
    quitArmed: false,
    input: EMPTY_INPUT,
    model: initial.model,
    endpoint: initial.endpoint,
    demo: initial.demo ?? false,
    keyMissing: initial.keyMissing ?? false,
    sandboxOff: initial.sandboxOff,
    highlighterReady: false,
    approvals: [],
    approvalIndex: 0,
    denying: undefined,
    summary: [],
  }));
}

/** Mouse capture starts on (the wheel scrolls) unless HUDDLE_MOUSE=0 says the person wants the terminal's own selection. */
function mouseByDefault(): boolean {
  return !['0', 'off', 'false', 'no'].includes((process.env.HUDDLE_MOUSE ?? '').toLowerCase());
}

/** Immutable update of one agent (created on first sight). */
export function patchAgent(state: ConsoleState, name: string, patch: (agent: AgentView) => Partial<AgentView>): Partial<ConsoleState> {
  const existing = state.agents[name] ?? emptyAgent(name, 'teammate');
  const order = state.order.includes(name) ? state.order : [...state.order, name];
  return { agents: { ...state.agents, [name]: { ...existing, ...patch(existing) } }, order };
}
