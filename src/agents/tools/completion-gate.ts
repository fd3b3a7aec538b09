// Completion gates (docs/contract.md#tasks, docs/contract.md#hooks) before the tools that finish a task run. task_update to
// `completed` (or to `review`, for a task that requires one) first runs the task's verify command
// (its own, else its completer's role's, else the settings' default) in the completing agent's
// workspace: anything but exit 0 refuses the update, and the command's output (head and tail) goes
// back as the tool error so the agent can fix it and try again. Then TaskCompleted hooks run (also
// for review_approve): exit 2 keeps the task open with the hook's stderr as the error.
import type { Settings } from '../../runtime/settings/schema.js';
import type { SpawnLike } from '../../runtime/process/spawn.js';
import { childEnvironment } from '../../runtime/process/spawn.js';
import type { Board, Task } from '../../runtime/store/board.js';
import type { Roster } from '../../runtime/store/roster.js';
import type { ToolContext } from '../../runtime/tools/types.js';
import { runVerify, verifyCommandFor, verifyFailureMessage } from '../../runtime/verify/verify.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { isReviewerRole } from './review-tools.js';
import type { TeamHooks } from './team-hooks.js';

export interface CompletionGateOptions {
  board: Board;
  roster: Pick<Roster, 'get'>;
  teamName: string;
  /** Read on every completion, so the verify settings of this session apply. */
  settings: () => Settings | undefined;
  hooks?: TeamHooks | undefined;
  spawn?: SpawnLike | undefined;
}

/** The tools that finish a task, and what each checks first. */
const GATES: Record<string, (input: never, context: ToolContext, options: CompletionGateOptions) => Promise<Verdict>> = {
  task_update: beforeUpdate,
  review_approve: beforeApprove,
};

/** What a call of `tool` must pass before it runs (tool-pipeline.ts): nothing, unless it finishes a task. */
export async function completionVerdict(tool: string, input: unknown, context: ToolContext, options: CompletionGateOptions): Promise<Verdict> {
  const gate = GATES[tool];
  return gate ? gate(input as never, context, options) : {};
}

interface UpdateInput {
  task_id: number;
  status?: string;
}

/** What a gate decided: refuse with this tool error, or go on (with a note for the result). */
export type Verdict = { refuse: string } | { note?: string };

async function beforeUpdate(input: UpdateInput, context: ToolContext, options: CompletionGateOptions): Promise<Verdict> {
  if (input.status !== 'completed' && input.status !== 'review') return {};
  // A task that cannot be read counts as absent; the caller says so.
  const task = await options.board.get(input.task_id).catch(() => undefined);
  // Anything the board will refuse anyway (unknown id, a task not in progress) is its to explain.
  if (!task || task.status !== 'in_progress') return {};
  const to = input.status === 'completed' && task.requires_review ? 'review' : input.status;
  if (to === 'review' && !task.requires_review) return {};

  let note: string | undefined;
  const role = context.agent === LEAD_NAME ? 'lead' : options.roster.get(context.agent)?.role;
  const command = verifyCommandFor(task, role, options.settings()?.verify);
  if (command) {
    const result = await runVerify({
      command,
      cwd: context.workspace.root,
      env: childEnvironment(),
      signal: context.signal,
      ...(options.settings()?.verify?.timeoutMs ? { timeoutMs: options.settings()!.verify!.timeoutMs! } : {}),
      ...(options.spawn ? { spawn: options.spawn } : {}),
    });
    context.events.emit('verify', {
      task_id: task.id,
      command,
      ok: result.ok,
      exit_code: result.exitCode ?? null,
      duration_ms: result.durationMs,
      ...(result.timedOut ? { timed_out: true } : {}),
      summary: result.summary,
      to,
    });
    if (!result.ok) return { refuse: verifyFailureMessage(task.id, result) };
    note = result.summary;
  }
  if (to === 'completed') {
    const refused = await taskCompletedHooks(task, context, options);
    if (refused) return { refuse: refused };
  }
  return note ? { note } : {};
}

async function beforeApprove(input: { task_id: number }, context: ToolContext, options: CompletionGateOptions): Promise<Verdict> {
  // A task that cannot be read counts as absent; the caller says so.
  const task = await options.board.get(input.task_id).catch(() => undefined);
  // Only an approval review_approve will accept: the rest it refuses with its own words.
  if (!task || task.status !== 'review' || task.owner === context.agent) return {};
  if (context.agent !== LEAD_NAME && !isReviewerRole(options.roster.get(context.agent)?.role)) return {};
  const refused = await taskCompletedHooks(task, context, options);
  return refused ? { refuse: refused } : {};
}

/** Runs the TaskCompleted hooks; the tool error when one keeps the task open. */
async function taskCompletedHooks(task: Task, context: ToolContext, options: CompletionGateOptions): Promise<string | undefined> {
  const hooks = options.hooks;
  if (!hooks?.has('TaskCompleted')) return undefined;
  const outcome = await hooks.run(
    context.events,
    {
      hook_event_name: 'TaskCompleted',
      task_id: task.id,
      task_subject: task.subject,
      ...(task.description ? { task_description: task.description } : {}),
      teammate_name: context.agent,
      team_name: options.teamName,
      task: { ...task },
    },
    { cwd: context.workspace.root, signal: context.signal },
    { task_id: task.id },
  );
  if (!outcome.blocked) return undefined;
  return `Task #${task.id} was not completed: a TaskCompleted hook kept it open: ${outcome.reason}. Deal with that, then update the task again.`;
}
