// The shared parts of a running team that every agent and team tool uses.
import type { HuddleConfig } from '../runtime/config.js';
import type { EventHub } from '../runtime/events/events.js';
import type { Bus } from '../runtime/store/bus.js';
import type { Board } from '../runtime/store/board.js';
import type { Roster } from '../runtime/store/roster.js';
import type { ModelBackend } from '../runtime/model/model-client.js';
import type { Workspace } from '../runtime/workspace/workspace.js';
import type { Budget } from '../runtime/budget/budget.js';
import type { SpawnLike } from '../runtime/process/spawn.js';

export interface TeamContext {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
  bus: Bus;
  board: Board;
  roster: Roster;
  teamName: string;
  /** How long a teammate may take to answer a shutdown request before it is stopped anyway. */
  shutdownGraceMs: number;
  /** Plans not decided by the lead within this time are approved (0: never). */
  planAutoApproveMs: number;
  /** Budgets checked before each model call (runtime/budget.ts); absent: no limits. */
  budget?: Budget;
  /** How programs are started for agents (external agent CLIs): the sandbox's spawn when there is one. */
  spawn?: SpawnLike;
}
