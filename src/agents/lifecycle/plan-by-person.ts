// plans.approver person or auto-after (docs/headless.md#plan-approval): a plan-mode teammate's plan waits in
// the person's needs-you queue instead of going to the lead. The person approves it (maybe with their own edit
// of it, which is then what the teammate follows) or sends it back; auto-after approves it when nobody has
// answered within the minutes set, and an edit starts that wait over.
import type { Approvals } from '../../runtime/store/approvals.js';
import { oneLine } from '../../runtime/store/memory-approvals.js';
import type { Protocols } from './protocols.js';

export interface PlanForPerson {
  teammate: string;
  requestId: string;
  plan: string;
  /** auto-after: the minutes a plan waits for the person before huddle approves it. */
  autoApproveMinutes?: number | undefined;
}

export async function askPersonAboutPlan(
  approvals: Approvals,
  protocols: Pick<Protocols, 'decidePlan' | 'askLeadAboutPlan'>,
  { teammate, requestId, plan, autoApproveMinutes }: PlanForPerson,
): Promise<void> {
  const waiting = approvals.request({
    agent: teammate,
    kind: 'plan',
    tool: 'plan',
    summary: oneLine(plan),
    reason:
      `y approves ${teammate}'s plan · e edits it · n sends it back to be revised` +
      (autoApproveMinutes ? ` · approved by huddle after ${autoApproveMinutes} min without an answer` : ''),
    prefixes: [],
    detail: plan,
  });
  // request() queues synchronously: the newest plan of this teammate is this one.
  const entry = approvals.list().findLast((r) => r.kind === 'plan' && r.agent === teammate && r.detail === plan);
  const stopTimer = entry && autoApproveMinutes ? autoApprove(approvals, entry.id, autoApproveMinutes) : () => undefined;
  const outcome = await waiting.finally(stopTimer);
  try {
    if (outcome.kind === 'approved') {
      // The person's edit: given with the answer, or made in the queue before it.
      const edited = outcome.edited ?? (entry?.detail !== undefined && entry.detail !== plan ? entry.detail : undefined);
      const by = outcome.note ?? 'approved by the person';
      await protocols.decidePlan(requestId, true, by, 'person', edited);
    } else if (outcome.kind === 'denied') {
      const said = outcome.reason ? `: ${outcome.reason}` : '';
      await protocols.decidePlan(requestId, false, `the person did not approve it${said}; revise the plan and send it again`, 'person');
    }
    // Nobody left to answer (the console closed): the lead decides after all.
    else await protocols.askLeadAboutPlan(teammate, requestId, plan);
  } catch {
    // Already decided (auto-approval) or the team is closing: nothing left to do.
  }
}

/** Approves the request after `minutes` without an answer; an edit of it starts the wait over. Returns the stop. */
function autoApprove(approvals: Approvals, id: string, minutes: number): () => void {
  const ms = minutes * 60_000;
  const approve = () => approvals.resolve(id, 'approve', 'huddle', `auto-approved after ${minutes} min`);
  let timer = setTimeout(approve, ms);
  let seen = approvals.list().find((r) => r.id === id)?.detail;
  const offChange = approvals.onChange(() => {
    const detail = approvals.list().find((r) => r.id === id)?.detail;
    if (detail === undefined || detail === seen) return;
    seen = detail;
    clearTimeout(timer);
    timer = setTimeout(approve, ms);
  });
  return () => {
    clearTimeout(timer);
    offChange();
  };
}
