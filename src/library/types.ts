// The types of huddle's library (docs/library.md): what a program passes in and gets back. Kept
// to huddle's own records (tasks, messages, members, events), so the published declarations need
// nothing but themselves. Everything exported from src/library/index.ts is the semver promise.
export type { HuddleEvent, EventType, EventOf } from '../runtime/events/event-types.js';
export type { Task, TaskStatus } from '../runtime/store/board/task.js';
export type { Message, MessageType } from '../runtime/store/bus.js';
export type { Member } from '../runtime/store/roster.js';
export type { ApprovalRequest, ApprovalDecision } from '../runtime/store/approvals.js';
export type { MemberStatus, PermissionMode } from '../runtime/vocabulary.js';
export type { BestOfRecord, BestOfCandidate, BestOfVerdict, BestOfOutcome } from '../runtime/record/best-of-record.js';
import type { PermissionMode } from '../runtime/vocabulary.js';

/** Which agent runs a teammate: huddle's own loop, or an external CLI in a terminal. */
export type AgentKind = 'huddle' | 'claude-code' | 'gemini' | 'codex' | 'opencode' | 'command';

export interface OpenTeamOptions {
  /** The workspace: the directory the team works in (its state goes in `<workspace>/.team/` unless `team` says otherwise). */
  workspace: string;
  /** A `postgres://…` team URL: the team's state in PostgreSQL (docs/contract.md#command-line), shared with `huddle worker`s. */
  team?: string;
  /** The lead's model (and new teammates' default). */
  model?: string;
  /** A file holding the API key; otherwise ANTHROPIC_API_KEY (or the settings) as for the CLI. */
  apiKeyFile?: string;
  /** `auto` (the default of a run without a screen), `ask` (commands off the allow-list wait in `waitingForYou()` for `approve()`), or `plan`. */
  permissionMode?: PermissionMode;
  /** The team's hard limits: a run that reaches one ends (`untilDone()` says `budget`). */
  budget?: { usd?: number; minutes?: number; turns?: number };
  /** The lead's model calls per turn. */
  maxTurns?: number;
  /** Continue the unfinished team left in the workspace. */
  resume?: boolean;
  /** Archive whatever team is in the workspace and start a new one. */
  fresh?: boolean;
  /** Trust the workspace's settings files that widen trust, as they are now (docs/trust.md#settings-that-widen-trust). */
  trust?: boolean;
  /** Replaces the lead's instructions. */
  systemPrompt?: string;
  /** Added to the lead's instructions. */
  appendSystemPrompt?: string;
}

export interface SpawnOptions {
  /** Lowercase letters, digits, '-' or '_', starting with a letter. */
  name: string;
  /** A role of the workspace (`.team/roles/<role>.md`, settings `roles.<role>`) or any word. */
  role: string;
  /** The teammate's first instructions. */
  prompt: string;
  /** Default: the role's, else huddle's own loop. */
  agent?: AgentKind;
  /** For agent `command`: the command line to run in its terminal. */
  command?: string;
  model?: string;
  /** Work in a git worktree of its own. */
  worktree?: boolean;
  permissionMode?: PermissionMode;
  /** Submit a plan for approval before writing anything. */
  planModeRequired?: boolean;
}

export interface CreateTaskOptions {
  subject: string;
  description?: string;
  /** Ids of tasks that must be completed first. */
  blockedBy?: number[];
  /** A command that must exit 0 in the completing agent's workspace before the task counts as completed. */
  verify?: string;
  /** in_progress → review → completed, by a reviewer. */
  requiresReview?: boolean;
}

/** How a team run ended (`untilDone()`): settled, failed, out of budget, stalled, its state unwritable, or with tasks not done. */
export type RunEnd =
  | { kind: 'settled' }
  | { kind: 'failed' }
  | { kind: 'budget'; reason: string }
  | { kind: 'stalled'; agent: string; message: string }
  | { kind: 'store'; message: string }
  | { kind: 'unfinished'; message: string };

export interface CloseOptions {
  /** Leave the team as it is, to be continued later (`resume: true`); otherwise every agent is shut down and the team is finished. */
  resumable?: boolean;
  /** Why, for the logs (default "closed by the program"). */
  reason?: string;
}

export interface Spend {
  /** Per agent, the lead first. */
  agents: Array<{ name: string; costUsd: number; modelCalls: number }>;
  costUsd: number;
}

/** A best-of-N run (docs/best-of.md): one task on N candidates, each in its own worktree and branch. */
export interface BestOfOptions {
  task: string;
  /** How many candidates: 2 to 8. */
  n: number;
  /** Models, one per candidate in turn (cycled); none: the team's model. */
  models?: string[];
  /** Agents, one per candidate in turn (cycled); none: huddle's own loop. */
  agents?: AgentKind[];
  /** Gates each candidate's task, and is run in each worktree once it ended: a column of the comparison. */
  verify?: string;
  /** The reviewer's model (default: the team's). */
  reviewerModel?: string;
  /** One line per step (a candidate started, ended; the reviewer). */
  onProgress?: (line: string) => void;
}
