// /workflows: the step agents the view lists, in order (phase by phase), which ↑/↓ select and r, Enter act on.
import type { StepView, WorkflowRunState } from '../../workflow/run-state.js';

export function workflowAgents(workflow: WorkflowRunState | undefined): StepView[] {
  return workflow ? workflow.phases.flatMap((phase) => phase.steps) : [];
}
