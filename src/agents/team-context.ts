// The shared parts of a running team that every agent and team tool uses.
import type { HuddleConfig } from '../runtime/config.js';
import type { EventHub } from '../runtime/events/events.js';
import type { Bus } from '../runtime/store/bus.js';
import type { Board } from '../runtime/store/board.js';
import type { Roster } from '../runtime/store/roster.js';
import type { EventStore } from '../runtime/store/event-store.js';
import type { ModelBackend } from '../runtime/model/model-client.js';
import type { Workspace } from '../runtime/workspace/workspace.js';
import type { Budget } from '../runtime/budget/budget.js';
import type { SpawnLike } from '../runtime/process/spawn.js';
import type { Settings } from '../runtime/settings/schema.js';
import type { ProjectMemory } from './prompts/memory.js';
import type { McpToolSource } from './tools/mcp-tools.js';
import type { TeamHooks } from './tools/team-hooks.js';

export interface TeamContext {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
  bus: Bus;
  board: Board;
  roster: Roster;
  /** The team's event record: compaction keeps replaced conversations there. */
  transcripts: EventStore;
  teamName: string;
  /** How long a teammate may take to answer a shutdown request before it is stopped anyway. */
  shutdownGraceMs: number;
  /** Budgets checked before each model call (runtime/budget.ts); absent: no limits. */
  budget?: Budget;
  /** The merged settings (roles, verify gates); absent for a team opened from a bare config. */
  settings?: Settings | undefined;
  /** The project's instructions (CLAUDE.md, AGENTS.md), in every agent's system prompt. */
  memory?: ProjectMemory | undefined;
  /** The session's MCP servers, whose tools agents get by role. */
  mcp?: McpToolSource | undefined;
  /** The session's hooks (docs/contract.md#hooks). */
  hooks?: TeamHooks | undefined;
  /** How hooks and verify commands are started (the sandbox's spawn, once there is one). */
  spawn?: SpawnLike | undefined;
  /** What SessionStart hooks said for the lead's context (added to its system prompt). */
  sessionContext?: string | undefined;
  /** A backlog run's shipping (docs/backlog.md#shipping): gives the lead open_pull_request. */
  ship?: Shipper | undefined;
  /** A best-of-N run's reviewer (docs/best-of.md): gives that teammate best_of_verdict. */
  verdicts?: VerdictReceiver | undefined;
}

/** Where a best-of-N reviewer's verdict goes (session/best-of-run.ts). */
export interface VerdictReceiver {
  /** True for the run's reviewer, the one agent that gets the tool. */
  accepts(agent: string): boolean;
  /** Keeps the verdict; returns why it is refused (an unknown candidate), else undefined. */
  record(verdict: { pick: string; reason: string; candidates: Array<{ name: string; score: number; notes: string }> }, by: string): string | undefined;
}

/** Pushes an issue's branch and opens its pull request, in huddle's own process (the agent never holds a credential). */
export interface Shipper {
  /** One line for the agent: the pull request's URL, or why it was not opened. */
  openPullRequest(issue: number, by: string): Promise<string>;
}
