// Where an issue of a backlog run is, in one word (docs/backlog.md#phases): what the console's
// backlog view and `huddle watch` show. Derived from the same facts the run record is made of
// (the issue's task on the board, its plan's last word, its pull request and checks), never kept apart.

export const ISSUE_PHASES = ['queued', 'exploring', 'planning', 'awaiting approval', 'building', 'in review', 'shipping', 'checks', 'done', 'failed'] as const;

export type IssuePhase = (typeof ISSUE_PHASES)[number];

/** What a backlog run knows of one issue at a moment (session/backlog-run.ts, `snapshot`). */
export interface IssueProgress {
  number: number;
  title: string;
  url?: string | undefined;
  /** The issue's teammate (`issue-<n>-<slug>`): its pane in the console. */
  name: string;
  branch: string;
  base: string;
  taskId: number;
  /** The task's status on the board (pending, in_progress, review, completed), when it could be read. */
  taskStatus?: string | undefined;
  started: boolean;
  shipped: boolean;
  /** The teammate's plan: sent and not answered yet, approved, sent back; absent: none sent. */
  plan?: 'waiting' | 'approved' | 'revising' | undefined;
  /** Explorers of the issue at work (a playbook's explore step). */
  exploring?: boolean | undefined;
  /** The teammate failed (its loop ended on an error). */
  failed?: boolean | undefined;
  pullRequest?: { number: number; url: string } | undefined;
  checks?: { state: 'pending' | 'passed' | 'failed'; failed: string[] } | undefined;
  /** Checks are being read (a pull request was opened and its check runs have not all finished). */
  watchingChecks?: boolean | undefined;
  costUsd: number;
}

export function issuePhase(issue: IssueProgress, planFirst: boolean): IssuePhase {
  if (issue.failed || issue.checks?.state === 'failed') return 'failed';
  if (issue.shipped) {
    if (issue.watchingChecks || issue.checks?.state === 'pending') return 'checks';
    return 'done';
  }
  if (!issue.started) return 'queued';
  if (issue.taskStatus === 'completed') return 'shipping';
  if (issue.taskStatus === 'review') return 'in review';
  if (issue.exploring) return 'exploring';
  if (issue.plan === 'waiting') return 'awaiting approval';
  if (planFirst && issue.plan !== 'approved') return 'planning';
  return 'building';
}
