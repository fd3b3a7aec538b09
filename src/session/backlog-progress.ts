// A backlog run as rows, kept live (docs/backlog.md#phases): each issue's phase, approver, branch,
// pull request, checks and cost, read again from the run (session/backlog-run.ts) whenever the
// team's events or the board say something happened — the same events the headless run records.
import { issuePhase, type IssuePhase, type IssueProgress } from '../runtime/backlog/issue-phase.js';
import type { BacklogRun } from './backlog-run.js';
import type { TeamSession } from './team-session.js';

export interface BacklogRow extends IssueProgress {
  phase: IssuePhase;
  /** Who approves its plan: lead, person, `auto-after N min`, or `none` (no plan asked for). */
  approver: string;
}

/** Rows read again at most this often while events pour in (a turn streams many). */
const REFRESH_MS = 150;

export class BacklogProgress {
  readonly #session: TeamSession;
  readonly #run: BacklogRun;
  readonly #planFirst: boolean;

  constructor(session: TeamSession, run: BacklogRun, planFirst: boolean) {
    this.#session = session;
    this.#run = run;
    this.#planFirst = planFirst;
  }

  async rows(): Promise<BacklogRow[]> {
    // The builder's role decides (its role file's plan_approver over plans.approver), as it does for its plans.
    const approver = this.#planFirst ? this.#session.planApprover(this.#run.builderRole) : 'none';
    return (await this.#run.snapshot()).map((issue) => ({ ...issue, phase: issuePhase(issue, this.#planFirst), approver }));
  }

  /** Calls `onRows` with the rows now and after every change; returns the way to stop. */
  watch(onRows: (rows: BacklogRow[]) => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const refresh = () => {
      if (timer || stopped) return;
      timer = setTimeout(() => {
        timer = undefined;
        void this.rows().then((rows) => {
          if (!stopped) onRows(rows);
        });
      }, REFRESH_MS);
      timer.unref();
    };
    const stops = [this.#session.subscribe(refresh), this.#session.onTasksChanged(refresh)];
    refresh();
    return () => {
      stopped = true;
      clearTimeout(timer);
      for (const stop of stops) stop();
    };
  }
}
