// The `explore` tool (docs/contract.md#subagents): an agent hands up to MAX_SUBAGENTS questions to
// read-only helpers that run in parallel, each its own turn loop with only the tools that read, and
// gets their final texts back as the tool's result. A subagent is not a member: its events carry
// the parent's name with `subagent` and `parent_tool_use_id`, its model calls count in the parent's
// totals (and so in the team's budget), and the parent's transcript leaves them out.
import * as z from 'zod';
import type { AgentEmitter, EventFields, EventOf } from '../../runtime/events/events.js';
import type { ModelBackend } from '../../runtime/model/model-client.js';
import { describeHit, type Budget } from '../../runtime/budget/budget.js';
import { ToolRegistry } from '../../runtime/tools/registry.js';
import { defineTool, ToolError, type Tool, type ToolContext } from '../../runtime/tools/types.js';
import { AgentLoop, type TurnOutcome } from '../loop/agent-loop.js';

export const MAX_SUBAGENTS = 4;
/** Model calls one subagent may make: enough to look around, not to wander. */
const SUBAGENT_MAX_TURNS = 20;

export interface SubagentDeps {
  backend: ModelBackend;
  model: string;
  maxTokens: number;
  /** The tools a subagent gets: only those whose every effect is `read` (the caller filters, through its pipeline). */
  readTools: Tool[];
  budget?: Budget | undefined;
  /** The project's instructions (CLAUDE.md, AGENTS.md) as they are now, added to a helper's system prompt. */
  instructions?: () => string | undefined;
}

export function subagentSystem(id: string, parent: string): string {
  return [
    `You are '${id}', a read-only helper of '${parent}' in a huddle team.`,
    'Answer the question you are given by reading the workspace with read_file, glob and grep; you cannot change files, run commands or message anyone.',
    'End with a short, self-contained summary of what you found (paths and line numbers where they help): it is all your parent sees.',
  ].join('\n');
}

export function subagentTool(deps: SubagentDeps): Tool {
  const registry = new ToolRegistry(deps.readTools);
  /** Per parent: how many subagents it has started, for ids that stay unique in its pane and logs. */
  const started = new Map<string, number>();
  return defineTool({
    name: 'explore',
    effects: ['read'],
    description: `Run up to ${MAX_SUBAGENTS} read-only helpers in parallel, each with its own context and only read_file, glob and grep; each answers one question and you get their summaries back together. Use it to look through the codebase without filling your own context.`,
    input: z.object({
      tasks: z
        .array(
          z.object({
            prompt: z.string().min(1).describe('the question, with what to look for and what to report'),
            description: z.string().optional().describe('a short label shown in the console (3-5 words)'),
          }),
        )
        .min(1)
        .max(MAX_SUBAGENTS)
        .describe('one entry per helper'),
    }),
    summarize: (input) => `${input.tasks.length} helper${input.tasks.length === 1 ? '' : 's'}`,
    run: async (input, ctx) => {
      const first = started.get(ctx.agent) ?? 0;
      started.set(ctx.agent, first + input.tasks.length);
      const runs = input.tasks.map((task, i) => runOne(`${ctx.agent}/explore-${first + i + 1}`, task, ctx, deps, registry));
      const outcomes = await Promise.all(runs);
      if (ctx.signal.aborted) throw new ToolError('interrupted: the helpers were stopped');
      return outcomes.map(({ id, task, outcome }) => `## ${id}${task.description ? ` (${task.description})` : ''}\n${describe(outcome)}`).join('\n\n');
    },
  });
}

async function runOne(
  id: string,
  task: { prompt: string; description?: string | undefined },
  ctx: ToolContext,
  deps: SubagentDeps,
  tools: ToolRegistry,
): Promise<{ id: string; task: typeof task; outcome: TurnOutcome }> {
  const loop = new AgentLoop({
    name: id,
    model: deps.model,
    system: [subagentSystem(id, ctx.agent), deps.instructions?.()].filter(Boolean).join('\n\n'),
    tools,
    backend: deps.backend,
    events: nestedEmitter(ctx, id),
    workspace: ctx.workspace,
    maxTokens: deps.maxTokens,
    maxTurns: SUBAGENT_MAX_TURNS,
    // The parent's budget (and the team's): a reached limit stops its helpers at once; the parent
    // meets it at its own next call, where the person is asked once, not once per helper.
    hooks: { budgetGate: () => budgetReached(deps.budget, ctx.agent) },
  });
  // The parent's interrupt (or shutdown) stops every helper.
  const stop = () => loop.interrupt();
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    if (ctx.signal.aborted) return { id, task, outcome: { kind: 'interrupted' } };
    return { id, task, outcome: await loop.runTurn(task.prompt, 'system', ctx.agent) };
  } finally {
    ctx.signal.removeEventListener('abort', stop);
  }
}

/**
 * The subagent's emitter: its events go out as the parent's, marked with `subagent`; its usage is
 * charged to the parent (one `usage` event with the parent's totals), and the subagent's own loop
 * still sees the event its transcript needs.
 */
function nestedEmitter(ctx: ToolContext, id: string): AgentEmitter {
  const marks = { subagent: id, ...(ctx.toolUseId ? { parent_tool_use_id: ctx.toolUseId } : {}) };
  return {
    agent: ctx.agent,
    emit(type, fields) {
      if (type === 'usage' && ctx.chargeUsage) {
        const usage = fields as EventFields['usage'];
        ctx.chargeUsage(
          {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
          },
          usage.cost_usd,
          { ...marks, ...(usage.message_id ? { message_id: usage.message_id } : {}), stop_reason: usage.stop_reason ?? null },
        );
        return { ts: new Date().toISOString(), agent: ctx.agent, type, ...fields } as EventOf<typeof type>;
      }
      // The hub's event carries the marks; the subagent's own transcript gets it without them.
      const { subagent: _id, parent_tool_use_id: _parent, ...own } = ctx.events.emit(type, { ...fields, ...marks });
      return own as EventOf<typeof type>;
    },
  };
}

function budgetReached(budget: Budget | undefined, parent: string): string | undefined {
  const hit = budget?.check(parent);
  return hit ? describeHit(hit) : undefined;
}

function describe(outcome: TurnOutcome): string {
  switch (outcome.kind) {
    case 'end_turn':
      return outcome.text.trim() || '(no summary)';
    case 'stopped':
      return `(stopped: ${outcome.text})`;
    case 'interrupted':
      return '(interrupted)';
    case 'turn_limit':
      return `(no summary: it reached its limit of ${outcome.limit} model calls)`;
    case 'failed':
      return `(failed: ${outcome.error})`;
  }
}
