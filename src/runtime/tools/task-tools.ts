// The task tools every agent has (docs/contract.md#tools), over one Board. The acting agent is
// ctx.agent; results are short text the model can act on; refusals become ToolErrors.
import * as z from 'zod';
import { MalformedFileError } from '../fs/atomic-file.js';
import { type Board, TASK_STATUSES, TaskBoardError, type Task } from '../store/board.js';
import { defineTool, ToolError, type Tool } from './types.js';

/** A task id; models sometimes send "3" or "#3", so those are accepted too. */
const TaskId = z.preprocess(
  (value) => (typeof value === 'string' && /^\s*#?\d+\s*$/.test(value) ? Number(value.trim().replace('#', '')) : value),
  z.number().int().positive(),
);
const taskId = (what: string) => TaskId.describe(what);
const taskIds = (what: string) => z.preprocess((value) => (Array.isArray(value) || value === undefined ? value : [value]), z.array(TaskId)).describe(what);

const AGENT_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

export interface TaskToolOptions {
  /** The names of the team's agents; when given, assigning a task to anyone else is refused. */
  agents?: () => string[];
}

export function taskTools(board: Board, options: TaskToolOptions = {}): Tool[] {
  const checkOwner = (owner: string | null | undefined): void => {
    if (owner === null || owner === undefined) return;
    if (!AGENT_NAME.test(owner)) throw new ToolError(`'${owner}' is not an agent name (lowercase letters, digits, - and _)`);
    const known = options.agents?.();
    if (known && !known.includes(owner)) {
      throw new ToolError(`no agent named '${owner}'; the team is: ${known.join(', ')}`);
    }
  };

  const taskCreate = defineTool({
    name: 'task_create',
    effects: ['board'],
    description: 'Add a task to the shared task board. It starts pending and unowned; teammates claim it when nothing in blockedBy is left open.',
    input: z.object({
      subject: z.string().min(1).describe('One line saying what is to be done, e.g. "Write tests for the parser"'),
      description: z.string().optional().describe('Details: what done looks like, files involved, constraints'),
      blockedBy: taskIds('Ids of tasks that must be completed before this one can start').optional(),
      requires_review: z.boolean().optional().describe('If true the task must go through status review (checked by a reviewer) before it is completed'),
      verify: z
        .string()
        .optional()
        .describe('A shell command that must exit 0 (in the workspace of whoever completes the task) before the task can be completed, e.g. "npm test"'),
    }),
    summarize: (input) => input.subject,
    async run(input, ctx) {
      const task = await boardCall(() => board.create(input, ctx.agent));
      const skipped = (input.blockedBy ?? []).filter((id) => !task.blockedBy.includes(id));
      return [
        `created task #${task.id}: ${task.subject}${task.blockedBy.length ? ` (blocked by ${refs(task.blockedBy)})` : ''}${task.verify ? ` (verify: ${task.verify})` : ''}`,
        skipped.length ? `(${refs(skipped)} already completed, so not a blocker)` : '',
      ]
        .filter(Boolean)
        .join(' ');
    },
  });

  const taskUpdate = defineTool({
    name: 'task_update',
    effects: ['board'],
    description:
      'Change a task: status (pending → in_progress → completed; a task that requires review goes to review instead of completed, and a reviewer completes it; in_progress → pending to give it back), owner (assign a pending task; null unassigns), or add dependencies. Completed tasks are final.',
    input: z.object({
      task_id: taskId('The id of the task to change'),
      status: z.enum(TASK_STATUSES).optional().describe('The new status'),
      owner: z.string().nullable().optional().describe('Agent to assign a pending task to, or null to unassign it'),
      addBlockedBy: taskIds('Ids of tasks this task must wait for').optional(),
      addBlocks: taskIds('Ids of tasks that must wait for this task').optional(),
      result: z.string().optional().describe('What the task produced, kept on the task for whoever waits on it (give it when completing)'),
    }),
    summarize: (input) => `#${input.task_id}${input.status ? ` → ${input.status}` : ''}`,
    async run(input, ctx) {
      const { task_id, ...patch } = input;
      if (Object.values(patch).every((value) => value === undefined)) {
        throw new ToolError('nothing to change: give status, owner, addBlockedBy, addBlocks or result');
      }
      checkOwner(patch.owner);
      const before = await boardCall(() => board.get(task_id));
      // Done with a task that requires review: it goes to review, and a reviewer completes it.
      if (patch.status === 'completed' && before.status === 'in_progress' && before.requires_review) patch.status = 'review';
      if (before.status === 'review' && patch.status !== undefined && patch.status !== 'review') {
        throw new ToolError(
          `task #${task_id} is in review${before.reviewer ? ` with ${before.reviewer}` : ''}; a reviewer (or the lead) decides it with review_approve {"task_id": ${task_id}} or review_request_changes {"task_id": ${task_id}, "feedback": "..."}`,
        );
      }
      const task = await boardCall(() => board.update(task_id, patch, ctx.agent));
      const changes: string[] = [];
      if (task.status !== before.status) changes.push(`status ${before.status} → ${task.status}`);
      if (task.owner !== before.owner) changes.push(`owner ${before.owner ?? '-'} → ${task.owner ?? '-'}`);
      if (patch.result !== undefined) changes.push('result kept');
      const addedBlockers = task.blockedBy.filter((id) => !before.blockedBy.includes(id));
      const addedBlocks = task.blocks.filter((id) => !before.blocks.includes(id));
      if (addedBlockers.length) changes.push(`now blocked by ${refs(addedBlockers)}`);
      if (addedBlocks.length) changes.push(`now blocks ${refs(addedBlocks)}`);
      let text = `task #${task.id} (${task.subject}): ${changes.length ? changes.join('; ') : 'no change'}`;
      if (task.status === 'review' && before.status !== 'review') {
        text += '. It requires review: an idle reviewer takes it; if changes are needed you get the feedback as a message';
      }
      if (task.status === 'completed' && task.blocks.length > 0) {
        const freed: number[] = [];
        for (const id of task.blocks) {
          // A task that cannot be read counts as absent; the caller says so.
          const other = await board.get(id).catch(() => undefined);
          if (other && other.status === 'pending' && other.owner === null && other.blockedBy.length === 0) freed.push(other.id);
        }
        if (freed.length) text += `. Now claimable: ${refs(freed)}`;
      }
      return text;
    },
  });

  const taskList = defineTool({
    name: 'task_list',
    effects: ['read'],
    description: 'Show the task board: one line per task with its status, owner and open blockers.',
    input: z.object({}),
    async run() {
      const { tasks, problems, cycles } = await boardCall(() => board.scan());
      const lines = tasks.map(formatLine);
      if (tasks.length === 0) lines.push('no tasks yet; add one with task_create');
      else {
        const open = await board.claimable();
        lines.push(open.length ? `claimable now: ${refs(open.map((t) => t.id))}` : 'nothing is claimable right now');
      }
      for (const problem of problems) lines.push(`warning: skipped ${problem.file}: ${problem.error}`);
      for (const cycle of cycles) {
        lines.push(
          `warning: ${cycle.map((id) => `#${id}`).join(' → ')} wait for each other (each arrow: blocks), so none of them can ever start; a person must remove one of these dependencies (task_update cannot), or create new tasks for that work`,
        );
      }
      return lines.join('\n');
    },
  });

  const taskGet = defineTool({
    name: 'task_get',
    effects: ['read'],
    description: 'Show one task in full (as JSON), including its description and dependencies.',
    input: z.object({ task_id: taskId('The id of the task to show') }),
    async run(input) {
      const task = await boardCall(() => board.get(input.task_id));
      return JSON.stringify(task, null, 2);
    },
  });

  const claimTask = defineTool({
    name: 'claim_task',
    effects: ['board'],
    description:
      'Claim a pending, unblocked task for yourself: it becomes in_progress with you as owner. Fails if someone else got it first or it is still blocked.',
    input: z.object({ task_id: taskId('The id of the task to claim') }),
    async run(input, ctx) {
      const task = await boardCall(() => board.claim(input.task_id, ctx.agent));
      const review = task.requires_review ? ' (it requires review: it then goes to a reviewer)' : '';
      return `claimed task #${task.id}: ${task.subject}. It is in_progress and yours; when done, call task_update {"task_id": ${task.id}, "status": "completed"}${review}.`;
    },
  });

  return [taskCreate, taskUpdate, taskList, taskGet, claimTask] as Tool[];
}

function formatLine(task: Task): string {
  const details = [`owner: ${task.owner ?? '-'}`];
  if (task.blockedBy.length) details.push(`blocked by: ${refs(task.blockedBy)}`);
  if (task.requires_review && task.status !== 'completed') details.push('requires review');
  if (task.status === 'review') details.push(task.review_escalated ? `escalated to the lead by ${task.reviewer}` : `reviewer: ${task.reviewer ?? 'none yet'}`);
  if (task.review_rounds) details.push(`review rounds: ${task.review_rounds}`);
  if (task.verify && task.status !== 'completed') details.push(`verify: ${task.verify}`);
  return `#${task.id} [${task.status}] ${task.subject} (${details.join(', ')})`;
}

function refs(ids: number[]): string {
  return ids.map((id) => `#${id}`).join(', ');
}

/** Board refusals and unreadable files become ToolErrors: their messages already say what to do. */
export async function boardCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof TaskBoardError || error instanceof MalformedFileError) throw new ToolError(error.message);
    throw error;
  }
}
