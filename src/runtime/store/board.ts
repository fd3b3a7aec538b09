// The task board (SPEC section 3): the task model and the contract every backend keeps
// (store/file/file-board.ts today). Agents, tools and the console know only this interface.
//
// Every backend guarantees: ids are integers from 1, never reused; a claim is atomic (two
// claimers never both win), also across processes and hosts; completing a task removes its id
// from every blockedBy; dependency cycles are refused with their path.

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
  /** A command that must exit 0 in the completing agent's workspace before the task is completed (SPEC section 3). */
  verify?: string;
  [extra: string]: unknown;
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

export interface CreateTaskInput {
  subject: string;
  description?: string;
  blockedBy?: number[];
  requires_review?: boolean;
  verify?: string;
}

export interface UpdateTaskInput {
  status?: TaskStatus;
  /** A name assigns a pending task; null unassigns it. */
  owner?: string | null;
  addBlockedBy?: number[];
  addBlocks?: number[];
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
}

export interface ReviewOutcome {
  task: Task;
  outcome: 'approved' | 'changes_requested' | 'escalated';
}

/** What onChange listeners receive: a write through a board of this process, or files changed by someone else. */
export type BoardChange =
  | { source: 'local'; action: TaskAction; task: Task; agent: string }
  | { source: 'external'; ids: number[] };

export type BoardChangeListener = (change: BoardChange) => void;

export interface BoardProblem {
  file: string;
  error: string;
}

/** A refusal the caller can act on (unknown id, lost race, forbidden transition, cycle...). */
export class TaskBoardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskBoardError';
  }
}

export interface Board {
  /** Every readable task, by id. Unreadable entries are skipped and reported as warnings. */
  list(): Promise<Task[]>;
  /** list() plus the entries that were skipped and why. */
  scan(): { tasks: Task[]; problems: BoardProblem[] };
  /** One task; TaskBoardError naming the existing ids when there is none. */
  get(id: number): Promise<Task>;
  /** Tasks anyone may claim now: pending, no owner, nothing open in blockedBy. */
  claimable(): Promise<Task[]>;
  create(input: CreateTaskInput, by?: string): Promise<Task>;
  update(id: number, patch: UpdateTaskInput, by?: string): Promise<Task>;
  /** Claims one task for `owner` (atomic). */
  claim(id: number, owner: string): Promise<Task>;
  /** Atomically claims the first task by id `owner` may take; undefined when there is none. */
  claimNext(owner: string): Promise<Task | undefined>;
  /** Tasks in review that `reviewer` may take. */
  reviewable(reviewer?: string): Promise<Task[]>;
  /** Atomically takes the first task waiting in review for `reviewer`. */
  claimReview(reviewer: string): Promise<Task | undefined>;
  /** A reviewer's verdict on a task in review. */
  decideReview(id: number, by: string, decision: ReviewDecision): Promise<ReviewOutcome>;
  /** Puts the unfinished tasks (and taken reviews) of an agent that is gone back on the board. */
  release(owner: string, by?: string): Promise<Task[]>;
  /** Every change, by this process or another (or a person editing the board). */
  onChange(listener: BoardChangeListener): () => void;
  close(): void;
}
