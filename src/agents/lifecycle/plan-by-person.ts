// HUDDLE_PLAN_APPROVAL=person: a plan-mode teammate's plan waits in the person's needs-you queue
// instead of going to the lead; y approves it, n sends it back to be revised.
import type { Approvals } from '../../runtime/store/approvals.js';
import type { Protocols } from './protocols.js';

export async function askPersonAboutPlan(
  approvals: Approvals,
  protocols: Pick<Protocols, 'decidePlan' | 'askLeadAboutPlan'>,
  { teammate, requestId, plan }: { teammate: string; requestId: string; plan: string },
): Promise<void> {
  const summary = plan.replace(/\s+/g, ' ').trim();
  const outcome = await approvals.request({
    agent: teammate,
    kind: 'plan',
    tool: 'plan',
    summary: summary.length > 200 ? `${summary.slice(0, 199)}…` : summary,
    reason: `y approves ${teammate}'s plan (full text in its pane) · n sends it back to be revised`,
    prefixes: [],
  });
  try {
    if (outcome.kind === 'approved') await protocols.decidePlan(requestId, true, 'approved by the person', 'person');
    else if (outcome.kind === 'denied') {
      const said = outcome.reason ? `: ${outcome.reason}` : '';
      await protocols.decidePlan(requestId, false, `the person did not approve it${said}; revise the plan and send it again`, 'person');
    }
    // Nobody left to answer (the console closed): the lead decides after all.
    else await protocols.askLeadAboutPlan(teammate, requestId, plan);
  } catch {
    // Already decided (auto-approval) or the team is closing: nothing left to do.
  }
}
