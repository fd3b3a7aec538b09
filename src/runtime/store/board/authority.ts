// Who may change a task (docs/trust.md, "authority on the board"). One place for every backend and
// every face: the board's plan functions (rules.ts, update.ts) call these inside the backend's
// transaction, so the file board, PostgreSQL, the in-process tools and `huddle mcp` all refuse alike.
//
//   create                      anyone on the team
//   claim / claimNext           for yourself only (the claimer is the owner)
//   start a pending task        its assignee (or anyone, when unassigned: it becomes theirs), or the lead
//   complete, review, give back its owner, or the lead
//   (re)assign a pending task   the lead; its assignee may unassign or hand it on; anyone may take an unassigned one for themselves
//   add a blocker to a task     its owner, or the lead (an unowned task: anyone)
//   decide a review             a reviewer that is not the owner (role checked by the review tools); taking over
//                               someone else's review or an escalated one: the lead only
//   release an agent's tasks    that agent, the lead, or huddle itself (an agent that is gone)
//   delete                      no verb: nobody (a person edits the board by hand)
import { HUDDLE_SENDER, LEAD_NAME } from '../../vocabulary.js';
import { type Task, TaskBoardError } from './task.js';

/** The lead, and huddle itself (releasing the work of an agent that is gone), may act on any task. */
export function isOverseer(by: string): boolean {
  return by === LEAD_NAME || by === HUDDLE_SENDER;
}

/** Refuses `by` doing `what` to `task` unless it owns it (or oversees); an unowned task passes when `unownedOk`. */
export function requireOwner(task: Task, by: string, what: string, unownedOk = false): void {
  if (isOverseer(by) || task.owner === by) return;
  if (task.owner === null) {
    if (unownedOk) return;
    throw new TaskBoardError(`task #${task.id} has no owner; only the lead may ${what} it: ask the lead (send_message to lead)`);
  }
  throw notYours(task, what);
}

/** The one-line refusal: whose task it is and whom to ask. */
export function notYours(task: Task, what: string): TaskBoardError {
  const owner = task.owner ?? 'nobody';
  return new TaskBoardError(
    `task #${task.id} is ${owner}'s (${task.status}); only ${owner} or the lead may ${what} it: message ${owner} or the lead (send_message) if it should change`,
  );
}

/** A pending task's owner changing from `from` to `to`, by `by`. */
export function requireAssign(task: Task, to: string | null, by: string): void {
  if (isOverseer(by)) return;
  if (task.owner === by) return; // its assignee unassigns it or hands it on
  if (task.owner === null && to === by) return; // taking an unassigned task for yourself
  if (task.owner !== null) throw notYours(task, 'reassign');
  throw new TaskBoardError(`only the lead assigns tasks to others; take task #${task.id} yourself (claim_task) or ask the lead (send_message to lead)`);
}

/** Releasing `owner`'s tasks: that agent itself, the lead, or huddle. */
export function requireRelease(owner: string, by: string): void {
  if (isOverseer(by) || owner === by) return;
  throw new TaskBoardError(`only ${owner} or the lead may give ${owner}'s tasks back to the board: message ${owner} or the lead (send_message)`);
}
