// The shared parts of a running team that every agent and team tool uses.
import type { HuddleConfig } from '../runtime/config.js';
import type { EventHub } from '../runtime/events.js';
import type { MessageBus } from '../runtime/bus.js';
import type { TaskBoard } from '../runtime/board.js';
import type { Roster } from '../runtime/roster.js';
import type { ModelBackend } from '../runtime/model-client.js';
import type { Workspace } from '../runtime/workspace.js';
import type { Budget } from '../runtime/budget.js';

export interface TeamContext {
  config: HuddleConfig;
  workspace: Workspace;
  hub: EventHub;
  backend: ModelBackend;
  bus: MessageBus;
  board: TaskBoard;
  roster: Roster;
  teamName: string;
  /** How long a teammate may take to answer a shutdown request before it is stopped anyway. */
  shutdownGraceMs: number;
  /** Plans not decided by the lead within this time are approved (0: never). */
  planAutoApproveMs: number;
  /** Budgets checked before each model call (runtime/budget.ts); absent: no limits. */
  budget?: Budget;
}
