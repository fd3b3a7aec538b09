// `huddle workflow run FILE` (docs/workflows.md): loads a workflow module (JavaScript, or TypeScript on a
// Node that strips types), opens the workspace's team (continuing it: a workflow's progress is on its
// board) and runs the workflow's phases headless. stdout: the results of every phase as one JSON
// object; stderr: a line per step and gate. Exit 0 done, 1 failed (a step's agent stopped, a gate
// denied), 2 usage or configuration, 3 a budget gate, 130 interrupted. Run again, it goes on where it stopped.
import { openControl } from '../session/control-intents.js';
import { continueTeam } from '../session/continue-team.js';
import { INTERRUPTED, untilInterrupted } from '../session/until-interrupted.js';
import type { Workflow } from '../workflow/definition.js';
import { loadWorkflow } from '../workflow/load.js';
import { WorkflowRunner, WorkflowStop } from '../workflow/runner.js';

export interface WorkflowCommand {
  file: string;
  cwd: string | undefined;
  team: string | undefined;
  trust: boolean;
}

export async function runWorkflowCommand(command: WorkflowCommand): Promise<number> {
  let workflow: Workflow;
  try {
    workflow = await loadWorkflow(command.file);
  } catch (error) {
    return fail((error as Error).message);
  }
  const opened = await continueTeam({ cwd: command.cwd, team: command.team, trust: command.trust });
  if (opened === 'quit') return 0;
  if ('error' in opened) return fail(opened.error);
  const session = opened;
  await openControl(session, 'workflow');
  const say = (line: string) => process.stderr.write(session.scrub(`huddle workflow: ${line}\n`));

  const { interrupted, stop: stopListening } = untilInterrupted();

  const runner = new WorkflowRunner(session, workflow, { say });
  let code: number;
  let results: Awaited<ReturnType<WorkflowRunner['run']>> | undefined;
  try {
    const outcome = await Promise.race([runner.run(), interrupted]);
    if (outcome === 'interrupted') {
      say(`interrupted; run it again to go on where it stopped`);
      code = INTERRUPTED;
    } else {
      results = outcome;
      code = 0;
    }
  } catch (error) {
    if (!(error instanceof WorkflowStop)) say(`failed: ${(error as Error).message}`);
    else say(`${error.message}; run it again to go on where it stopped`);
    code = error instanceof WorkflowStop && error.kind === 'budget' ? 3 : 1;
  }
  // Finished, the team is closed as done; otherwise it is left as it is, for the next run.
  await session.close({ reason: code === 0 ? `workflow ${workflow.name} done` : `workflow ${workflow.name} stopped`, resumable: code !== 0 });
  stopListening();
  if (results) process.stdout.write(`${session.scrub(JSON.stringify({ workflow: workflow.name, phases: results }))}\n`);
  return code;
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
