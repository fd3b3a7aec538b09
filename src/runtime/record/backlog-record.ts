// The record of a backlog run (docs/backlog.md#the-record): per issue, where its work is, what
// became of it, and what it cost; and the one line per issue a headless run ends with.
import type { CommitRecord, FileChange } from './git-changes.js';
import type { ReviewFinding } from '../store/board/findings.js';

export interface BacklogIssueRecord {
  issue: number;
  title: string;
  url?: string;
  task_id: number;
  branch: string;
  /** What the branch was made from and its pull request goes into: the base, or the dependency's branch. */
  base: string;
  worktree: string;
  /**
   * open: not reviewed yet; reviewed: approved, not shipped; shipped: pushed (and a pull request opened when there is GitHub);
   * failed: a retry cap of its playbook was reached (failed_because says which).
   */
  state: 'not started' | 'open' | 'reviewed' | 'shipped' | 'failed';
  failed_because?: string;
  /** The playbook phase it is in (docs/playbooks.md#phases), as far as huddle can tell from outside the builder. */
  phase?: string;
  /** Who approves its plan: lead, person or auto-after N min (absent: no plan asked for). */
  approver?: string;
  pushed?: { remote: string; commit: string };
  pull_request?: { number: number; url: string; state: string; draft: boolean };
  plan?: string;
  /**
   * findings: every review's (docs/playbooks.md#review-domains), security: those in the security domain again, listed apart;
   * feedback: the last request for changes.
   */
  review: { reviewer?: string; rounds: number; findings: ReviewFinding[]; security: ReviewFinding[]; feedback?: string; comment?: string };
  verify: Array<{ ok: boolean; summary: string }>;
  /** The pull request's check runs when huddle last read them. */
  checks?: { state: 'pending' | 'passed' | 'failed'; failed: string[] };
  files: { changed: number; added: number; removed: number; list: FileChange[] };
  commits: CommitRecord[];
  cost_usd: number;
  model_calls: number;
  wall_ms: number;
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  const s = Math.max(1, Math.round(ms / 1000));
  return m < 1 ? `${s} second${s === 1 ? '' : 's'}` : `${m} minute${m === 1 ? '' : 's'}`;
}

/** "PR ready: 5 files · +120 −45 · tests passing · $3.20 · 12 turns · 8 minutes" (or what the issue came to instead). */
export function issueLine(record: BacklogIssueRecord): string {
  const head =
    record.pull_request !== undefined
      ? `PR ${record.pull_request.draft ? 'draft' : record.pull_request.state === 'open' ? 'ready' : record.pull_request.state}`
      : record.state === 'shipped'
        ? 'pushed'
        : record.state;
  const last = record.verify.at(-1);
  const tests =
    record.checks?.state === 'failed'
      ? `checks failing (${record.checks.failed.join(', ')})`
      : record.checks?.state === 'passed' && (last === undefined || last.ok)
        ? 'tests passing'
        : last === undefined
          ? 'no verify run'
          : last.ok
            ? 'tests passing'
            : 'tests failing';
  const files = `${record.files.changed} file${record.files.changed === 1 ? '' : 's'}`;
  const parts = [
    files,
    `+${record.files.added} −${record.files.removed}`,
    tests,
    `$${record.cost_usd.toFixed(2)}`,
    `${record.model_calls} turn${record.model_calls === 1 ? '' : 's'}`,
    minutes(record.wall_ms),
  ];
  const where = record.pull_request ? ` ${record.pull_request.url}` : ` ${record.branch}`;
  return `#${record.issue} ${head}: ${parts.join(' · ')} ·${where}`;
}
