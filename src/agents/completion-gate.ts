// Completion gates (docs/contract.md#tasks, docs/contract.md#hooks) around the tools that finish a task. task_update to
// `completed` (or to `review`, for a task that requires one) first runs the task's verify command
// (its own, else its completer's role's, else the settings' default) in the completing agent's
// workspace: anything but exit 0 refuses the update, and the command's output (head and tail) goes
// back as the tool error so the agent can fix it and try again. Then TaskCompleted hooks run (also
// for review_approve): exit 2 keeps the task open with the hook's stderr as the error.
import type { Settings } from '../runtime/settings/schema.js';
import type { SpawnLike } from '../runtime/process/spawn.js';
import { childEnvironment } from '../runtime/process/spawn.js';
import type { Board, Task } from '../runtime/store/board.js';
import type { Roster } from '../runtime/store/roster.js';
import type { Tool, ToolContext, ToolResult } from '../runtime/tools/types.js';
import { runVerify, verifyCommandFor, verifyFailureMessage } from '../runtime/verify/verify.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
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

/** task_update and review_approve behind the verify gate and TaskCompleted hooks; other tools as they are. */
export function gateCompletions(tools: Tool[], options: CompletionGateOptions): Tool[] {
  return tools.map((tool) => {
    if (tool.name === 'task_update') return gated(tool, (input, context) => beforeUpdate(input as UpdateInput, context, options));
    if (tool.name === 'review_approve') return gated(tool, (input, context) => beforeApprove(input as { task_id: number }, context, options));
    return tool;
  });
}

interface UpdateInput {
  task_id: number;
  status?: string;
}

/** What a gate decided: refuse with this tool error, or go on (with a note for the result). */
type Verdict = { refuse: string } | { note?: string };

function gated(tool: Tool, check: (input: unknown, context: ToolContext) => Promise<Verdict>): Tool {
  return {
    ...tool,
    run: async (input, context): Promise<string | ToolResult> => {
      const verdict = await check(input, context);
      if ('refuse' in verdict) return { content: verdict.refuse, isError: true };
      const output = await tool.run(input, context);
      if (!verdict.note) return output;
      const result = typeof output === 'string' ? { content: output } : output;
      return { ...result, content: `${result.content} (${verdict.note})` };
    },
  };
}

async function beforeUpdate(input: UpdateInput, context: ToolContext, options: CompletionGateOptions): Promise<Verdict> {
  if (input.status !== 'completed' && input.status !== 'review') return {};
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
