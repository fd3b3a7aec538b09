// The board's rules (docs/contract.md#tasks) as pure functions over a BoardView: who may claim what, what
// still blocks a task, what a create, claim, review decision or release writes. Every backend
// applies these very rules inside its own transaction, so the file board and a database board
// refuse and allow exactly the same things.
import { isOverseer, requireRelease } from './authority.js';
import { scrubStrings } from '../../secrets.js';
import { cycleError } from './dependencies.js';
import { findingLine } from './findings.js';
import { type CreateTaskInput, type ReviewDecision, type ReviewOutcome, type Task, TaskBoardError, type TaskChange } from './task.js';
import type { BoardView } from './view.js';

/** A blocker that is not completed (or cannot be read, so cannot be known to be). */
export interface OpenBlocker {
  id: number;
  status: Task['status'] | 'unreadable';
  owner: string | null;
}

/**
 * The blockers of `task` that still hold it back. A blocker that is completed, or gone, is met
 * (a gone one is left over only if a process died between the writes of a completion).
 */
export function openBlockers(task: Task, view: BoardView): OpenBlocker[] {
  const open: OpenBlocker[] = [];
  for (const id of task.blockedBy) {
    if (view.unreadable(id)) {
      open.push({ id, status: 'unreadable', owner: null });
      continue;
    }
    const blocker = view.find(id);
    if (blocker && blocker.status !== 'completed') open.push({ id, status: blocker.status, owner: blocker.owner });
  }
  return open;
}

/** Pending and unowned, or already assigned to `owner` (blockers aside). */
export function mayClaim(task: Task, owner: string): boolean {
  return task.status === 'pending' && (task.owner === null || task.owner === owner);
}

/** What anyone may claim now: pending, no owner, nothing open in blockedBy. */
export function isClaimable(task: Task, view: BoardView): boolean {
  return task.status === 'pending' && task.owner === null && openBlockers(task, view).length === 0;
}

/** What claimNext may give `owner`: pending, unowned or assigned to it, unblocked. */
export function isClaimableBy(task: Task, owner: string, view: BoardView): boolean {
  return mayClaim(task, owner) && openBlockers(task, view).length === 0;
}

/** In review, not taken by a reviewer, not escalated, and not `reviewer`'s own work. */
export function mayReview(task: Task, reviewer: string | undefined): boolean {
  return task.status === 'review' && !task.reviewer && !task.review_escalated && (reviewer === undefined || task.owner !== reviewer);
}

// ---- operations ---------------------------------------------------------------------------------

/** A new task with id `id` and what it writes to its blockers' `blocks`. */
export function planCreate(created: CreateTaskInput, id: number, now: string, view: BoardView, by?: string): { task: Task; changes: TaskChange[] } {
  const input = scrubStrings(created); // what an agent writes on the board, every agent reads: no secret in it
  const subject = input.subject.trim();
  if (!subject) throw new TaskBoardError('a task needs a subject: one line saying what is to be done');
  // Assigning is the lead's (authority.ts); a task created already assigned is no exception.
  if (input.owner !== undefined && !(by !== undefined && isOverseer(by)))
    throw new TaskBoardError('only the lead creates a task already assigned; create it, then claim it');
  const blockers: Task[] = [];
  for (const blocker of unique(input.blockedBy ?? [])) {
    const task = view.require(blocker);
    if (task.status !== 'completed') blockers.push(task); // a finished dependency is already met
  }
  const task: Task = {
    id,
    subject,
    description: input.description ?? '',
    status: 'pending',
    owner: input.owner ?? null,
    blockedBy: blockers.map((b) => b.id),
    blocks: [],
    created_at: now,
    updated_at: now,
    ...(input.requires_review ? { requires_review: true } : {}),
    ...(input.verify?.trim() ? { verify: input.verify.trim() } : {}),
    ...(input.review_domains ? { review_domains: input.review_domains } : {}),
    ...(input.workflow ? { workflow: { name: input.workflow.name, phase: input.workflow.phase, step: input.workflow.step } } : {}),
  };
  const changes: TaskChange[] = [{ action: 'created', task }];
  for (const blocker of blockers) changes.push({ action: 'updated', task: { ...blocker, blocks: unique([...blocker.blocks, id]) } });
  return { task, changes };
}

/** Claims `task` (as just read) for `owner`, or says why not. */
export function planClaim(task: Task, owner: string, view: BoardView): Task {
  const id = task.id;
  if (task.status === 'completed') throw new TaskBoardError(`task #${id} is already completed`);
  if (task.owner !== null && task.owner !== owner) throw claimedBy(id, task.owner, task.status);
  if (task.status !== 'pending') throw new TaskBoardError(`task #${id} is already yours, ${owner} (${task.status})`);
  const open = openBlockers(task, view);
  if (open.length > 0) throw blockedError(id, open);
  return claimed(task, owner);
}

/** The task in progress with `owner`; its (met) blockers are dropped. */
export function claimed(task: Task, owner: string): Task {
  return { ...task, status: 'in_progress', owner, blockedBy: [] };
}

/**
 * Removes `done` from the blockedBy of every task that waits for it. `done` is the completed task
 * as it is being stored: its own `blocks` names the dependents the board wrote.
 */
export function planUnblock(done: Task, view: BoardView): TaskChange[] {
  const candidates = new Set<number>([...done.blocks, ...view.dependentsOf(done.id)]);
  const changes: TaskChange[] = [];
  for (const id of [...candidates].sort((a, b) => a - b)) {
    if (id === done.id) continue;
    const task = view.find(id);
    if (!task?.blockedBy.includes(done.id)) continue;
    changes.push({ action: 'updated', task: { ...task, blockedBy: task.blockedBy.filter((b) => b !== done.id) } });
  }
  return changes;
}

/**
 * A reviewer's verdict on `task` (as just read): approved (completed, dependents unblocked),
 * changes requested (back to in_progress with the same owner, `review_rounds` + 1), or, when
 * changes were already requested `maxRounds` times, escalated: it stays in review for the lead.
 */
export function planReviewDecision(task: Task, by: string, asked: ReviewDecision, view: BoardView): { result: ReviewOutcome; changes: TaskChange[] } {
  const id = task.id;
  // Taking over another reviewer's review, or an escalated one, is the lead's alone (authority.ts).
  const decision: ReviewDecision = { ...asked, override: asked.override === true && isOverseer(by) };
  if (task.status !== 'review') {
    const why =
      task.status === 'in_progress' && task.requires_review
        ? `it comes to review when ${task.owner ?? 'its owner'} completes it`
        : task.requires_review
          ? 'only a task in review can be approved or sent back'
          : 'it does not require review';
    throw new TaskBoardError(`task #${id} is ${task.status}, not in review; ${why}`);
  }
  if (task.owner === by) {
    throw new TaskBoardError(`you cannot review your own task #${id}; a teammate with role reviewer (or the lead) decides it`);
  }
  if (!decision.override && task.reviewer && task.reviewer !== by) {
    throw new TaskBoardError(`task #${id} is being reviewed by ${task.reviewer}; pick another task in review (task_list)`);
  }
  if (!decision.override && task.review_escalated) {
    throw new TaskBoardError(`task #${id} was escalated to the lead after ${task.review_rounds ?? 0} rounds of changes; the lead decides it now`);
  }
  const { review_escalated: _escalated, ...found } = task;
  const round = (task.review_rounds ?? 0) + 1;
  // This review's findings join the earlier ones: the task keeps every round's.
  const rest: Task = decision.findings?.length
    ? { ...found, review_findings: [...(task.review_findings ?? []), ...decision.findings.map((f) => ({ ...f, round, reviewer: by }))] }
    : found;
  if (decision.approve) {
    const blocking = decision.findings?.filter((f) => f.blocking) ?? [];
    // A blocking finding (docs/playbooks.md#review-domains) keeps the task in review until it is fixed; the lead may still decide.
    if (blocking.length && !decision.override)
      throw new TaskBoardError(
        `task #${id} cannot be approved with a blocking finding (${blocking.map((f) => findingLine(f)).join('; ')}): request changes so its owner fixes it`,
      );
    const comment = decision.comment?.trim();
    const done: Task = { ...rest, status: 'completed', reviewer: by, ...(comment ? { review_comment: comment } : {}) };
    return { result: { task: done, outcome: 'approved' }, changes: [{ action: 'review_approved', task: done }, ...planUnblock(done, view)] };
  }
  const feedback = decision.feedback?.trim() ?? '';
  if (!feedback) throw new TaskBoardError('say what must change: feedback is required when requesting changes');
  if (task.owner === null) {
    throw new TaskBoardError(`task #${id} has no owner to send changes to; approve it, or have the lead reassign the work`);
  }
  const rounds = task.review_rounds ?? 0;
  if (!decision.override && rounds >= (decision.maxRounds ?? Infinity)) {
    const held: Task = { ...rest, reviewer: by, review_feedback: feedback, review_escalated: true };
    return { result: { task: held, outcome: 'escalated' }, changes: [{ action: 'updated', task: held }] };
  }
  const back: Task = { ...rest, status: 'in_progress', reviewer: null, review_rounds: rounds + 1, review_feedback: feedback };
  return { result: { task: back, outcome: 'changes_requested' }, changes: [{ action: 'changes_requested', task: back }] };
}

/**
 * What releasing `owner` (an agent that is gone) writes for one task: its unfinished work back to
 * pending and unowned, a review it had taken back to the other reviewers. Undefined: nothing.
 */
export function releaseChange(task: Task, owner: string, by: string): TaskChange | undefined {
  requireRelease(owner, by);
  if (task.owner !== owner && task.status === 'review' && task.reviewer === owner && !task.review_escalated) {
    return { action: 'released', task: { ...task, reviewer: null } };
  }
  if (task.owner !== owner || task.status === 'completed') return undefined;
  return { action: 'released', task: { ...task, status: 'pending', owner: null } };
}

// ---- refusals -----------------------------------------------------------------------------------

export function claimedBy(id: number, owner: string, status: string): TaskBoardError {
  return new TaskBoardError(
    status === 'pending' ? `task #${id} is already claimed by ${owner} (assigned, not started yet)` : `task #${id} is already claimed by ${owner}`,
  );
}

export function blockedError(id: number, open: OpenBlocker[]): TaskBoardError {
  const what = open.map((t) => `#${t.id} (${t.status}${t.owner ? `, ${t.owner}` : ''})`).join(', ');
  return new TaskBoardError(`task #${id} is blocked by ${what}; wait for those to be completed or pick another task`);
}

export { cycleError };

export function unique(ids: number[]): number[] {
  return [...new Set(ids)];
}
