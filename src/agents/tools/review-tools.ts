// The review loop: a task created with requires_review goes to `review` when its owner completes
// it; an idle teammate with role `reviewer` takes it (FileBoard.claimReview, atomic like a claim)
// and decides with review_approve (completed, dependents unblocked) or review_request_changes
// (back to in_progress with the same owner, who gets the feedback as a message). After
// `reviewMaxRounds` requests for changes the next one goes to the lead instead, and the task
// stays in review until the lead decides. While it reviews, a reviewer files what it finds with
// review_finding (docs/playbooks.md#review-domains): each kept on the task with the decision, and a
// blocking one (a security finding of high severity, by default) refuses the approval.
import * as z from 'zod';
import type { ReviewDecision, Task } from '../../runtime/store/board.js';
import { blocks, DEFAULT_DOMAINS, FindingInput, findingLine, type ReviewDomains } from '../../runtime/store/board/findings.js';
import { boardCall } from '../../runtime/tools/task-tools.js';
import { defineTool, ToolError, type Tool } from '../../runtime/tools/types.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { fill } from '../prompts/templates.js';
import type { TeamContext } from '../team-context.js';

/** The role whose teammates review (and only review: they do not auto-claim pending tasks). */
export const REVIEWER_ROLE = 'reviewer';

export const DEFAULT_REVIEW_MAX_ROUNDS = 3;

/** The tools a reviewer decides with (kept even when its role file has a tools allow-list). */
export const REVIEW_TOOL_NAMES = ['review_approve', 'review_request_changes', 'review_finding'] as const;

/** The domains a task's review covers: its own (a playbook's), else the defaults. */
export function reviewDomainsOf(task: Pick<Task, 'review_domains'>): ReviewDomains {
  return task.review_domains ?? DEFAULT_DOMAINS;
}

export function isReviewerRole(role: string | undefined): boolean {
  return role === REVIEWER_ROLE;
}

export function reviewMaxRounds(ctx: Pick<TeamContext, 'config'>): number {
  return ctx.config.reviewMaxRounds ?? DEFAULT_REVIEW_MAX_ROUNDS;
}

/** The user turn a reviewer gets when it takes a task: the exact first line, then what it needs to judge. */
export function reviewRequestedTurn(task: Task, maxRounds: number): string {
  const rounds = task.review_rounds ?? 0;
  return fill('turn-review-requested', {
    id: task.id,
    subject: task.subject,
    description: task.description ?? '',
    owner: task.owner ?? 'nobody (no owner)',
    rounds,
    once: rounds === 1,
    review: rounds + 1,
    maxRounds,
    feedback: task.review_feedback ?? '',
    // A run that chose its review domains (a playbook) says them; other reviews read as before.
    domains: task.review_domains ? task.review_domains.domains.join(', ') : '',
    blocking: task.review_domains
      ? Object.entries(task.review_domains.blocksAt)
          .map(([domain, at]) => `${domain} ${at} or worse`)
          .join(', ')
      : '',
  });
}

const TaskId = z
  .preprocess(
    (value) => (typeof value === 'string' && /^\s*#?\d+\s*$/.test(value) ? Number(value.trim().replace('#', '')) : value),
    z.number().int().positive(),
  )
  .describe('The id of the task in review');

export function reviewTools(ctx: TeamContext): Tool[] {
  const { board, bus, roster } = ctx;

  /** Who may decide: the lead, or a teammate with role reviewer that is not the task's owner. */
  const check = async (taskId: number, agent: string): Promise<Task> => {
    const task = await boardCall(() => board.get(taskId));
    if (task.owner === agent) {
      throw new ToolError(`you cannot review your own task #${taskId}; a teammate with role ${REVIEWER_ROLE} (or the lead) decides it`);
    }
    if (agent !== LEAD_NAME) {
      const role = roster.get(agent)?.role;
      if (!isReviewerRole(role)) {
        throw new ToolError(
          `only a teammate with role ${REVIEWER_ROLE} (or the lead) may approve or send back a task; you are ${role ? `a ${role}` : 'not on the roster'}. Tell the lead or the task's owner what you found with send_message`,
        );
      }
    }
    return task;
  };

  /** Findings filed in the review under way, by `agent:task`: they go onto the task with its decision. */
  const filed = new Map<string, Array<FindingInput & { blocking: boolean }>>();

  const decide = async (taskId: number, agent: string, decision: Omit<ReviewDecision, 'override' | 'maxRounds' | 'findings'>) => {
    const key = `${agent}:${taskId}`;
    const findings = filed.get(key) ?? [];
    const outcome = await boardCall(() =>
      board.decideReview(taskId, agent, {
        ...decision,
        maxRounds: reviewMaxRounds(ctx),
        override: agent === LEAD_NAME,
        ...(findings.length ? { findings } : {}),
      }),
    );
    filed.delete(key);
    return { ...outcome, findings };
  };

  const finding = defineTool({
    name: 'review_finding',
    effects: ['board'],
    description:
      "File one finding of the review you are doing (reviewers and the lead): its domain, severity, file and line, and what must change. Call it once per finding, a pass per domain, before you decide; the findings go onto the task with your decision. A blocking one (the task's review says which) means you must request changes, not approve.",
    input: FindingInput.extend({ task_id: TaskId }),
    summarize: (input) => `#${input.task_id} ${input.domain} ${input.severity} ${input.file}${input.line ? `:${input.line}` : ''}`,
    async run(input, toolCtx) {
      const task = await check(input.task_id, toolCtx.agent);
      if (task.status !== 'review') throw new ToolError(`task #${task.id} is ${task.status}, not in review: findings belong to a review under way`);
      const domains = reviewDomainsOf(task);
      if (!domains.domains.includes(input.domain))
        throw new ToolError(`'${input.domain}' is not a domain of this review; its domains are ${domains.domains.join(', ')}`);
      const { task_id: _id, ...rest } = input;
      const entry = { ...rest, blocking: blocks(domains, input) };
      const key = `${toolCtx.agent}:${task.id}`;
      filed.set(key, [...(filed.get(key) ?? []), entry]);
      return `filed: ${findingLine(entry)}${entry.blocking ? '. It blocks the approval: request changes (review_request_changes) so the owner fixes it' : ''}`;
    },
  });

  const approve = defineTool({
    name: 'review_approve',
    effects: ['board'],
    description:
      'Accept a task that is in review (reviewers and the lead only; not your own task): it becomes completed and the tasks waiting on it are unblocked.',
    input: z.object({
      task_id: TaskId,
      comment: z.string().optional().describe('An optional remark kept on the task'),
    }),
    summarize: (input) => `#${input.task_id}`,
    async run(input, toolCtx) {
      await check(input.task_id, toolCtx.agent);
      const { task } = await decide(input.task_id, toolCtx.agent, { approve: true, ...(input.comment ? { comment: input.comment } : {}) });
      let text = `approved task #${task.id} (${task.subject}) by ${task.owner ?? 'nobody'}: completed`;
      const freed: number[] = [];
      for (const id of task.blocks) {
        // A task that cannot be read counts as absent; the caller says so.
        const other = await board.get(id).catch(() => undefined);
        if (other && other.status === 'pending' && other.owner === null && other.blockedBy.length === 0) freed.push(other.id);
      }
      if (freed.length) text += `. Now claimable: ${freed.map((id) => `#${id}`).join(', ')}`;
      return text;
    },
  });

  const requestChanges = defineTool({
    name: 'review_request_changes',
    effects: ['board'],
    description:
      'Send a task in review back to its owner with what must change (reviewers and the lead only). The owner gets your feedback as a message and completes the task again, which brings it back to review. After a set number of rounds the lead decides instead.',
    input: z.object({
      task_id: TaskId,
      feedback: z.string().min(1, 'say what must change').describe('What must change, concretely: file, line, expected behaviour'),
    }),
    summarize: (input) => `#${input.task_id}: ${input.feedback}`,
    async run(input, toolCtx) {
      const agent = toolCtx.agent;
      await check(input.task_id, agent);
      const max = reviewMaxRounds(ctx);
      // The owner reads what was found with what must change.
      const found = filed.get(`${agent}:${input.task_id}`) ?? [];
      const feedback = found.length ? `${input.feedback}\n\nFindings:\n${found.map((f) => `- ${findingLine(f)}`).join('\n')}` : input.feedback;
      const { task, outcome } = await decide(input.task_id, agent, { approve: false, feedback });
      const owner = task.owner!;
      if (outcome === 'escalated') {
        await bus.send({
          type: 'message',
          from: agent,
          to: LEAD_NAME,
          content: fill('message-review-limit', {
            id: task.id,
            subject: task.subject,
            owner,
            rounds: task.review_rounds ?? 0,
            once: task.review_rounds === 1,
            maxRounds: max,
            feedback: task.review_feedback ?? '',
          }),
        });
        return `task #${task.id} reached the review limit (${max} rounds of changes): it stays in review and the lead decides; your feedback was sent to the lead. You are done with this task.`;
      }
      const rounds = task.review_rounds ?? 0;
      await bus.send({
        type: 'message',
        from: agent,
        to: owner,
        content: fill('message-changes-requested', { id: task.id, subject: task.subject, rounds, maxRounds: max, feedback: task.review_feedback ?? '' }),
      });
      let text = `sent task #${task.id} back to ${owner} (in_progress; changes requested ${rounds} of at most ${max} times); ${owner} has your feedback in its inbox and the task comes back to review when done`;
      const member = roster.get(owner);
      if (owner !== LEAD_NAME && member && (member.status === 'shutdown' || member.status === 'failed')) {
        // Nobody would act on the feedback: the lead must hand the task to someone else.
        await bus.send({
          type: 'message',
          from: agent,
          to: LEAD_NAME,
          content: fill('message-review-owner-gone', {
            id: task.id,
            subject: task.subject,
            owner,
            status: member.status,
            feedback: task.review_feedback ?? '',
          }),
        });
        text += `. Note: ${owner} is ${member.status}, so the lead was told too`;
      }
      return text;
    },
  });

  return [approve, requestChanges, finding] as Tool[];
}
