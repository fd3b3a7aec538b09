// task_update's rules, step by step: the status transition (and the owner that goes with it), an
// assignment, new dependencies both ways (refusing loops), the check that a task being started is
// unblocked, and what a completion unblocks. Pure: it returns the writes, the backend makes them.
import { isOverseer, notYours, requireAssign, requireOwner } from './authority.js';
import { scrubStrings } from '../../secrets.js';
import { cycleError, refuseCycle } from './dependencies.js';
import { blockedError, claimedBy, openBlockers, planUnblock, unique } from './rules.js';
import { type Task, type TaskAction, TaskBoardError, type TaskChange, type UpdateTaskInput } from './task.js';
import { overlay, type BoardView } from './view.js';

/** The writes of `update(current.id, patch)` by `by`, `current` being the task as just read. */
export function planUpdate(current: Task, update: UpdateTaskInput, by: string, view: BoardView): { task: Task; changes: TaskChange[] } {
  const patch = scrubStrings(update); // what an agent writes on the board, every agent reads: no secret in it
  refuseFinal(current);
  const next: Task = { ...current, blockedBy: [...current.blockedBy], blocks: [...current.blocks] };
  const action = applyStatus(next, current, patch, by);
  applyAssignment(next, current, patch, by);
  applyResult(next, current, patch, by);
  const partners = applyDependencies(next, patch, view, by);
  checkStart(next, current, overlay(view, partners));

  const changes: TaskChange[] = [{ action, task: next }];
  for (const other of partners.values()) changes.push({ action: 'updated', task: other });
  if (next.status === 'completed') changes.push(...planUnblock(next, overlay(view, new Map([[next.id, next], ...partners]))));
  return { task: next, changes };
}

function refuseFinal(current: Task): void {
  if (current.status === 'completed') {
    throw new TaskBoardError(`task #${current.id} is completed; completed tasks are final (create a new task for follow-up work)`);
  }
}

/** The status transition and the owner that goes with it; returns what kind of change it is. */
function applyStatus(next: Task, current: Task, patch: UpdateTaskInput, by: string): TaskAction {
  if (patch.status === undefined || patch.status === current.status) return 'updated';
  const { id } = current;
  const from = current.status;
  const to = patch.status;
  let action: TaskAction = 'updated';
  if (from === 'pending' && to === 'in_progress') {
    const owner = patch.owner ?? current.owner ?? by;
    if (current.owner !== null && current.owner !== owner) throw claimedBy(id, current.owner, 'pending');
    // Starting a task makes it its owner's work: only they (or the lead) start it.
    if (owner !== by && !isOverseer(by))
      throw current.owner
        ? notYours(current, 'start')
        : new TaskBoardError(`only the lead starts a task for someone else; claim task #${id} yourself (claim_task) or ask the lead (send_message to lead)`);
    next.owner = owner;
    action = 'claimed';
  } else if (from === 'in_progress' && to === 'pending') {
    requireOwner(current, by, 'give back');
    next.owner = patch.owner ?? null;
  } else if (from === 'in_progress' && to === 'review') {
    requireOwner(current, by, 'send to review');
    if (!current.requires_review) throw new TaskBoardError(`task #${id} does not require review; set its status to completed when done`);
    next.reviewer = null; // any idle reviewer may take it (claimReview)
    action = 'review_requested';
  } else if (from === 'in_progress' && to === 'completed') {
    requireOwner(current, by, 'complete');
    if (current.requires_review) {
      throw new TaskBoardError(`task #${id} requires review: set its status to review and ask a reviewer to complete it`);
    }
  } else if (from === 'review' && (to === 'completed' || to === 'in_progress')) {
    // Reviewed: accepted, or sent back. A reviewer decides with decideReview; this path is the lead's.
    if (!isOverseer(by)) {
      throw new TaskBoardError(`task #${id} is in review; a reviewer decides it (review_approve or review_request_changes), or the lead`);
    }
  } else {
    throw new TaskBoardError(`task #${id} cannot go from ${from} to ${to}; from ${from} it can go to ${allowedFrom(current)}`);
  }
  next.status = to;
  return to === 'completed' ? 'completed' : action;
}

/** An owner alone: (re)assigning a pending task, under the same rule as a claim. */
function applyAssignment(next: Task, current: Task, patch: UpdateTaskInput, by: string): void {
  if (patch.owner === undefined || (patch.status ?? current.status) !== current.status || patch.owner === current.owner) return;
  if (current.status !== 'pending') {
    throw new TaskBoardError(
      `task #${current.id} is ${current.status} with ${current.owner ?? 'nobody'}; only a pending task can be (re)assigned — set its status to pending first`,
    );
  }
  requireAssign(current, patch.owner, by);
  if (patch.owner !== null && current.owner !== null) throw claimedBy(current.id, current.owner, 'pending');
  next.owner = patch.owner;
}

/** What the task produced: its owner's (or the lead's) word, kept on the task. */
function applyResult(next: Task, current: Task, patch: UpdateTaskInput, by: string): void {
  if (patch.result === undefined) return;
  requireOwner(current, by, 'set the result of');
  next.result = patch.result;
}

/** New dependencies, written on both sides; a dependency that would close a loop is refused with the loop. Returns the other tasks changed. */
function applyDependencies(next: Task, patch: UpdateTaskInput, view: BoardView, by: string): Map<number, Task> {
  const id = next.id;
  const partners = new Map<number, Task>();
  const partner = (other: number): Task => {
    let task = partners.get(other);
    if (!task) {
      const loaded = view.require(other);
      task = { ...loaded, blockedBy: [...loaded.blockedBy], blocks: [...loaded.blocks] };
      partners.set(other, task);
    }
    return task;
  };
  // The board as it will be, for the loop check: this task and its partners as changed so far.
  const planned = () => overlay(view, new Map([[id, next], ...partners]));

  for (const blocker of unique(patch.addBlockedBy ?? [])) {
    if (blocker === id) throw cycleError([id, id]);
    const other = partner(blocker);
    if (next.blockedBy.includes(blocker)) continue;
    if (next.status !== 'pending') throw new TaskBoardError(`task #${id} is ${next.status}; only a pending task can get new blockers`);
    requireOwner(next, by, 'add blockers to', true);
    if (other.status === 'completed') continue; // already met
    refuseCycle(planned(), blocker, id, (path) => [...path, id]);
    next.blockedBy.push(blocker);
    other.blocks = unique([...other.blocks, id]);
  }
  for (const blocked of unique(patch.addBlocks ?? [])) {
    if (blocked === id) throw cycleError([id, id]);
    const other = partner(blocked);
    if (other.blockedBy.includes(id)) continue;
    if (other.status !== 'pending') throw new TaskBoardError(`task #${blocked} is ${other.status}; only a pending task can get new blockers`);
    requireOwner(other, by, 'add blockers to', true);
    refuseCycle(planned(), id, blocked, (path) => [id, ...path]);
    other.blockedBy.push(id);
    next.blocks = unique([...next.blocks, blocked]);
  }
  return partners;
}

/** A task being started must be unblocked; its met blockers are then dropped. */
function checkStart(next: Task, current: Task, view: BoardView): void {
  if (next.status !== 'in_progress' || current.status !== 'pending') return;
  const open = openBlockers(next, view);
  if (open.length > 0) throw blockedError(next.id, open);
  next.blockedBy = [];
}

function allowedFrom(task: Task): string {
  switch (task.status) {
    case 'pending':
      return 'in_progress (claim it first)';
    case 'in_progress':
      return task.requires_review ? 'review, pending (unclaim)' : 'completed, pending (unclaim)';
    case 'review':
      return 'completed (accept), in_progress (changes requested)';
    case 'completed':
      return 'nothing (completed is final)';
  }
}
