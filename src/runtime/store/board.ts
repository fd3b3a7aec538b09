// The task board (docs/contract.md#tasks): the contract every backend keeps (store/file/board/ today).
// Agents, tools and the console know only this interface; the task model and the rules every
// backend applies live in store/board/.
//
// Every backend guarantees: ids are integers from 1 on a fresh board, never reused or
// overwritten; a claim is atomic (two claimers never both win), also across processes and hosts;
// completing a task removes its id from every blockedBy; dependency cycles are refused with their
// path, and those already stored (made by hand) are reported.
import type { CreateTaskInput, ReviewDecision, ReviewOutcome, Task, TaskAction, UpdateTaskInput } from './board/task.js';

export {
  type CreateTaskInput,
  type ReviewDecision,
  type ReviewOutcome,
  type Task,
  type TaskAction,
  type TaskStatus,
  TASK_STATUSES,
  TaskBoardError,
  type UpdateTaskInput,
} from './board/task.js';

/** What onChange listeners receive: a write through a board of this process, or changes made by someone else. */
export type BoardChange = { source: 'local'; action: TaskAction; task: Task; agent: string } | { source: 'external'; ids: number[] };

export type BoardChangeListener = (change: BoardChange) => void;

/** A stored entry that is not a usable task, skipped by every read. */
export interface BoardProblem {
  /** Where it is stored, as a person would look for it (a file, in the file backend). */
  file: string;
  /** What is wrong with it. */
  error: string;
  /** One line for a person: what was skipped, why, and what to do. */
  message: string;
}

export interface BoardScan {
  /** Every readable task, by id. */
  tasks: Task[];
  /** The entries skipped, and why. */
  problems: BoardProblem[];
  /**
   * Dependency loops among unfinished tasks (only a hand-made edit can store one): each a path of
   * ids that starts and ends at the same task, [1, 3, 1] meaning #1 blocks #3 and #3 blocks #1.
   */
  cycles: number[][];
}

export interface Board {
  /** Every readable task, by id. Unreadable entries are skipped and reported as warnings. */
  list(): Promise<Task[]>;
  /** list() plus the entries that were skipped and why, and any dependency loops. */
  scan(): Promise<BoardScan>;
  /** One task; TaskBoardError naming the existing ids when there is none. */
  get(id: number): Promise<Task>;
  /** Tasks anyone may claim now: pending, no owner, nothing open in blockedBy. */
  claimable(): Promise<Task[]>;
  /**
   * Whether claimable() would list anything, found without listing the board (an idle teammate asks it
   * often). Given `owner`: whether claimNext(owner) would take anything, a pending task assigned to it too.
   */
  hasClaimable(owner?: string): Promise<boolean>;
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
