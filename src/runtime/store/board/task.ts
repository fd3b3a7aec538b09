// The task model (docs/contract.md#tasks) and its schema, shared by every board backend: what a task is,
// what may be asked of the board, and how a stored task is checked before anyone trusts it.
import * as z from 'zod';
import { lazy } from '../../lazy.js';
import type { ReviewDomains, ReviewFinding } from './findings.js';

export const TASK_STATUSES = ['pending', 'in_progress', 'review', 'completed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface Task {
  id: number;
  subject: string;
  description: string;
  status: TaskStatus;
  owner: string | null;
  blockedBy: number[];
  blocks: number[];
  created_at: string;
  updated_at: string;
  /** When true the task goes in_progress → review → completed instead of straight to completed. */
  requires_review?: boolean;
  /** The reviewer who took the task while it is in review (null: waiting for one). */
  reviewer?: string | null;
  /** How many times a review sent the task back for changes. */
  review_rounds?: number;
  /** The last feedback of a review that asked for changes. */
  review_feedback?: string;
  /** The review hit the round limit: the lead decides; reviewers do not pick it up again. */
  review_escalated?: boolean;
  /** The domains its review covers and what blocks in them (docs/playbooks.md#review-domains); absent: the defaults. */
  review_domains?: ReviewDomains;
  /** Every review's findings, oldest first (findings.ts). */
  review_findings?: ReviewFinding[];
  /** A command that must exit 0 in the completing agent's workspace before the task is completed (docs/contract.md#tasks). */
  verify?: string;
  /** What the task produced, as its owner said when completing it (a workflow's next phase reads it). */
  result?: string;
  /** The workflow step this task is (docs/workflows.md): how a resumed run finds its progress. */
  workflow?: WorkflowTag;
  [extra: string]: unknown;
}

/** Which workflow, phase and step (or gate) a task stands for. */
export interface WorkflowTag {
  name: string;
  phase: string;
  step: string;
}

export type TaskAction =
  | 'created'
  | 'updated'
  | 'claimed'
  | 'completed'
  | 'released'
  // The review loop (tasks with requires_review): entered review, taken by a reviewer, sent
  // back to its owner, accepted (completed).
  | 'review_requested'
  | 'review_claimed'
  | 'changes_requested'
  | 'review_approved';

/** One write a board operation makes: the task as it is to be stored, and why. */
export interface TaskChange {
  action: TaskAction;
  task: Task;
}

export interface CreateTaskInput {
  subject: string;
  description?: string;
  blockedBy?: number[];
  requires_review?: boolean;
  verify?: string;
  review_domains?: ReviewDomains;
  /** Assigned from the start: only the lead (or huddle) may (docs/trust.md#authority). */
  owner?: string;
  workflow?: WorkflowTag;
}

export interface UpdateTaskInput {
  status?: TaskStatus;
  /** A name assigns a pending task; null unassigns it. */
  owner?: string | null;
  addBlockedBy?: number[];
  addBlocks?: number[];
  /** What the task produced: set by its owner (or the lead), kept on the task. */
  result?: string;
}

export interface ReviewDecision {
  approve: boolean;
  /** What must change; required when not approving. */
  feedback?: string;
  /** An approval's remark, kept on the task as `review_comment`. */
  comment?: string;
  /** Changes may be requested this many times; one request more escalates instead. */
  maxRounds?: number;
  /** The lead: may decide a review another reviewer holds or that was escalated, and is not bound by maxRounds. */
  override?: boolean;
  /** What the reviewer found in this review (its review_finding calls): kept on the task; a blocking one refuses an approval. */
  findings?: Array<Omit<ReviewFinding, 'round' | 'reviewer'>>;
}

export interface ReviewOutcome {
  task: Task;
  outcome: 'approved' | 'changes_requested' | 'escalated';
}

/** A refusal the caller can act on (unknown id, lost race, forbidden transition, cycle...). */
export class TaskBoardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskBoardError';
  }
}

// ---- the stored shape --------------------------------------------------------------------------

/** A task id: a positive integer that is exact in JSON and in JavaScript (1e20 is not). Built at first use (lazy.ts). */
export const taskIdSchema = lazy(() => z.number().int().positive().max(Number.MAX_SAFE_INTEGER));

const taskSchema = lazy(() =>
  z.looseObject({
    id: taskIdSchema(),
    subject: z.string(),
    description: z.string().default(''),
    status: z.enum(TASK_STATUSES),
    owner: z.string().nullable().default(null),
    blockedBy: z.array(taskIdSchema()).default([]),
    blocks: z.array(taskIdSchema()).default([]),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

export function isTaskId(id: number): boolean {
  return Number.isSafeInteger(id) && id > 0;
}

/** A stored task checked against the schema: the task, or what is wrong with it. */
export function parseTaskRecord(raw: unknown): { task: Task } | { error: string } {
  const parsed = taskSchema().safeParse(raw);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'task'}: ${i.message}`).join('; ');
    return { error: `not a task: ${detail}` };
  }
  return { task: parsed.data as Task };
}

/** Ascending ids for a message, runs of four or more as ranges: 1, 2, 3, 5, 7, 8, 9, 10 → "1, 2, 3, 5, 7-10". */
export function formatIds(ids: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length;) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(j - i >= 3 ? `${ids[i]}-${ids[j]}` : ids.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}

/** "#1 → #3 → #1": a path of tasks, each waiting for the next (a blocks b: b waits for a). */
export function formatPath(ids: number[]): string {
  return ids.map((id) => `#${id}`).join(' → ');
}
