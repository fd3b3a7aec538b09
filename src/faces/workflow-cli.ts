// `huddle workflow run FILE` (docs/workflows.md): loads a workflow module (JavaScript, or TypeScript on a
// Node that strips types), opens the workspace's team (continuing it: a workflow's progress is on its
// board) and runs the workflow's phases headless. stdout: the results of every phase as one JSON
// object; stderr: a line per step and gate. Exit 0 done, 1 failed (a step's agent stopped, a gate
// denied), 2 usage or configuration, 3 a budget gate, 130 interrupted. Run again, it goes on where it stopped.
import { scrub } from '../runtime/secrets.js';
import type { CliOptions } from '../session/cli-options.js';
import { openControl } from '../session/control-intents.js';
import { openSession } from '../session/open-session.js';
import { resolveSettings, StartupError } from '../session/settings.js';
import type { TeamSession } from '../session/team-session.js';
import type { Workflow } from '../workflow/definition.js';
import { loadWorkflow } from '../workflow/load.js';
import { WorkflowRunner, WorkflowStop } from '../workflow/runner.js';

export interface WorkflowCommand {
  file: string;
  cwd: string | undefined;
  team: string | undefined;
  trust: boolean;
}

const INTERRUPTED = 130;

export async function runWorkflowCommand(command: WorkflowCommand): Promise<number> {
  let workflow: Workflow;
  try {
    workflow = await loadWorkflow(command.file);
  } catch (error) {
    return fail((error as Error).message);
  }
  const options: CliOptions = {
    prompt: undefined,
    json: false,
    // The board holds the workflow's progress: the team in the workspace is continued, never archived.
    resume: true,
    fresh: false,
    cwd: command.cwd,
    model: undefined,
    apiKeyFile: undefined,
    maxTurns: undefined,
    command: undefined,
    ...(command.team ? { team: command.team } : {}),
    ...(command.trust ? { trust: true } : {}),
  };
  let session: TeamSession;
  let secrets: string[] = [];
  try {
    const settings = await resolveSettings(options, { missingKey: 'refuse' });
    secrets = settings.secrets;
    const opened = await openSession(settings, { resume: true, unfinished: 'refuse' });
    if (opened === 'quit') return 0;
    session = opened;
  } catch (error) {
    if (error instanceof StartupError) return fail(scrub(error.message, secrets));
    throw error;
  }
  await openControl(session, 'workflow');
  const say = (line: string) => process.stderr.write(session.scrub(`huddle workflow: ${line}\n`));

  let onSignal!: () => void;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    onSignal = () => {
      process.once('SIGINT', () => process.exit(INTERRUPTED));
      resolve('interrupted');
    };
  });
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

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
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (results) process.stdout.write(`${session.scrub(JSON.stringify({ workflow: workflow.name, phases: results }))}\n`);
  return code;
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
