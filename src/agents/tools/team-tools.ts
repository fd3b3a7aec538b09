// Every agent's tools (docs/contract.md#tools): the team tools defined here — the lead's (spawn, roster,
// broadcast, shutdown, plan decisions) and the teammates' (idle, shutdown answers, plan
// submission) — and the assembly of each agent's tool set from them and the runtime's tools.
import * as z from 'zod';
import { defineTool, effectsOf, isReadOnly, ToolError, type Tool } from '../../runtime/tools/types.js';
import { bashTool } from '../../runtime/tools/bash.js';
import { coreTools } from '../../runtime/tools/core-tools.js';
import { broadcastInput, messageTools } from '../../runtime/tools/message-tools.js';
import { ToolRegistry } from '../../runtime/tools/registry.js';
import { taskTools } from '../../runtime/tools/task-tools.js';
import { toolAllowed, type ToolAccess } from '../../runtime/mcp/tool-names.js';
import { whyNotReadOnly } from '../../runtime/permissions/read-only-shell.js';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import { PERMISSION_MODES, type PermissionMode } from '../../runtime/permissions/permission-mode.js';
import { roleSettings } from '../../runtime/settings/role-settings.js';
import { mcpToolsFor } from './mcp-tools.js';
import { isReviewerRole, REVIEW_TOOL_NAMES, reviewTools } from './review-tools.js';
import { AGENT_KINDS, type TeammateKind } from '../external/launch.js';
import type { Shipper, TeamContext } from '../team-context.js';
import type { SandboxStatus } from '../../runtime/sandbox/status.js';
import { throughPipeline, type PipelineDeps } from './tool-pipeline.js';
import { shipTools } from './ship-tools.js';
import { subagentTool } from './subagent-tool.js';
import { verdictTools } from './verdict-tool.js';
import { completionReportsFor } from './completion-report.js';

/** What the tool sets are made from: the team's stores, each agent's permission mode, the session's sandbox. */
export interface ToolDeps {
  ctx: TeamContext;
  permissions: PermissionGate;
  /** Read once when the session opened; every call's context carries it. */
  sandbox: SandboxStatus;
}

/** Tools no allow- or deny-list takes away: without them the team's protocols break. */
const TEAMMATE_ESSENTIALS = ['idle', 'shutdown_response', 'send_message', 'read_inbox'];
const LEAD_ESSENTIALS = ['send_message', 'read_inbox', 'shutdown_request', 'plan_approval'];

/**
 * Only who may decide a review is offered its tools (docs/contract.md#reviewers-and-the-lead): a reviewer all three;
 * the lead, which decides past the round limit or when asked, approves or sends back without filing
 * findings by domain; other teammates none (they were refused every call, and the schemas rode
 * along in every request of theirs).
 */
const LEAD_REVIEW_TOOLS = ['review_approve', 'review_request_changes'] as const;

/**
 * The tools every huddle agent of the team has, whatever its role, first and in this order: byte for
 * byte the same block at the head of every request, which the prompt cache then holds once for the
 * lead and all roles (docs/cost.md#a-prefix-shared-by-the-team).
 */
function teamWideTools(deps: ToolDeps): Tool[] {
  const { ctx } = deps;
  // A teammate's report to the lead carries the results of the tasks it completed (completion-report.ts).
  const messages = messageTools(ctx.bus, { annotate: completionReportsFor(ctx.hub).annotate });
  return [...coreTools(), ...taskTools(ctx.board), messages.sendMessage, messages.readInbox, exploreTool(deps)];
}

/**
 * Every agent's tools: the team-wide ones, the review tools it may decide with (reviewTools), then
 * the MCP servers' tools; `teamWide` holds the team-wide ones' names.
 */
function sharedTools(deps: ToolDeps, reviews: readonly string[]): { tools: Tool[]; teamWide: ReadonlySet<string> } {
  const teamWide = teamWideTools(deps);
  const tools = [...teamWide, ...reviewTools(deps.ctx).filter((tool) => reviews.includes(tool.name)), ...mcpToolsFor(deps.ctx.mcp, {})];
  return { tools, teamWide: new Set(teamWide.map((tool) => tool.name)) };
}

/** `explore`: its helpers get the file tools that only read, through the same pipeline (hooks, permissions). */
function exploreTool(deps: ToolDeps): Tool {
  const readTools = throughPipeline(
    coreTools().filter((tool) => effectsOf(tool).every((effect) => effect === 'read')),
    pipelineDeps(deps),
  );
  const { ctx } = deps;
  const instructions = () => ctx.memory?.current().instructions.text;
  return subagentTool({ backend: ctx.backend, model: ctx.config.model, maxTokens: ctx.config.maxTokens, readTools, budget: ctx.budget, instructions });
}

/**
 * The registry an agent calls its tools through: each call runs the tool pipeline (tool-pipeline.ts):
 * hooks, task completion behind verify gates, the agent's permission mode, checkpoints.
 */
function registryOf(tools: Tool[], deps: ToolDeps, teamWide?: ReadonlySet<string>): ToolRegistry {
  return new ToolRegistry(throughPipeline(tools, pipelineDeps(deps)), teamWide);
}

function pipelineDeps({ ctx, permissions, sandbox }: ToolDeps): PipelineDeps {
  const completion = { board: ctx.board, roster: ctx.roster, teamName: ctx.teamName, settings: () => ctx.settings, hooks: ctx.hooks, spawn: ctx.spawn };
  return { teamRoot: ctx.workspace.root, sandbox, permissions, hooks: ctx.hooks, completion };
}

/**
 * Which tools a role may have: the settings' `roles.<role>.tools` (else the role file's `tools`) as
 * an allow-list, `denyTools` over it; names, `*` globs, and `mcp__server` for a server's tools.
 */
export function roleToolFilter(ctx: TeamContext, role: string, roleFileTools: string[] | undefined, essentials: readonly string[]): (name: string) => boolean {
  const override = ctx.settings ? roleSettings(ctx.settings, role) : {};
  const access: ToolAccess = { tools: override.tools ?? roleFileTools, denyTools: override.denyTools };
  const kept = new Set(essentials);
  return (name) => kept.has(name) || toolAllowed(name, access);
}

/** The lead's shipping tools (a backlog run), through the same pipeline as its other tools. */
export function leadShipTools(ship: Shipper, deps: ToolDeps): Tool[] {
  const allowed = roleToolFilter(deps.ctx, 'lead', undefined, LEAD_ESSENTIALS);
  const registry = registryOf(
    shipTools(ship).filter((tool) => allowed(tool.name)),
    deps,
  );
  return registry.names.map((name) => registry.get(name)!);
}

export function leadToolset(team: TeamControl, deps: ToolDeps): ToolRegistry {
  const allowed = roleToolFilter(deps.ctx, 'lead', undefined, LEAD_ESSENTIALS);
  const shared = sharedTools(deps, LEAD_REVIEW_TOOLS);
  const tools = [...shared.tools, ...leadTools(team)].filter((tool) => allowed(tool.name));
  return registryOf(tools, deps, shared.teamWide);
}

/**
 * A teammate's tools: `full` (what its role allows), and `start`: the same, or in plan mode the
 * read-only ones and plan submission until its plan is approved.
 */
export function teammateToolsets(
  team: TeamControl,
  deps: ToolDeps,
  teammate: { name?: string; role: string; roleTools: string[] | undefined; planModeRequired: boolean },
): { start: ToolRegistry; full: ToolRegistry } {
  // A reviewer is handed reviews whatever its allow-list says; it must be able to decide them.
  const essentials = isReviewerRole(teammate.role) ? [...TEAMMATE_ESSENTIALS, ...REVIEW_TOOL_NAMES] : TEAMMATE_ESSENTIALS;
  const allowed = roleToolFilter(deps.ctx, teammate.role, teammate.roleTools, essentials);
  // A best-of-N reviewer's verdict tool is its task: no allow-list takes it away.
  const reviews = isReviewerRole(teammate.role) ? REVIEW_TOOL_NAMES : [];
  const shared = sharedTools(deps, reviews);
  const full = [...shared.tools, ...teammateTools(team)].filter((tool) => allowed(tool.name)).concat(verdictTools(deps.ctx.verdicts, teammate.name));
  const start = teammate.planModeRequired ? [...full.filter(isReadOnly), readOnlyBashTool(), ...teammateTools(team), planSubmissionTool(team)] : full;
  return { start: registryOf(start, deps, shared.teamWide), full: registryOf(full, deps, shared.teamWide) };
}

export interface SpawnRequest {
  name: string;
  role: string;
  prompt: string;
  model?: string | undefined;
  worktree?: boolean | undefined;
  planModeRequired?: boolean | undefined;
  /** plan, ask or auto; default: the role's, else the run's. The lead cannot make it looser than the run. */
  permissionMode?: PermissionMode | undefined;
  /** Which agent runs it: huddle's own loop (the default) or an external CLI (agents/external/). */
  agent?: TeammateKind | undefined;
  /** For agent `command`: the command line to run in its terminal (default: settings, else the shell). */
  command?: string | undefined;
}

/** What the team tools need from the team; implemented by Team. */
export interface TeamControl {
  spawn(request: SpawnRequest, by: string): Promise<string>;
  describeRoster(): string;
  broadcast(from: string, content: string): Promise<number>;
  requestShutdown(teammate: string): Promise<string>;
  answerShutdown(teammate: string, requestId: string, approve: boolean, reason?: string): Promise<void>;
  submitPlan(teammate: string, plan: string): Promise<string>;
  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<string>;
  goIdle(teammate: string): void;
}

const name = z.string().describe("the teammate's name: lowercase letters, digits, '-' or '_', starting with a letter");

export function leadTools(team: TeamControl): Tool[] {
  return [
    defineTool({
      name: 'spawn_teammate',
      effects: ['team'],
      description:
        'Start a teammate: an agent with its own context that works in parallel, claims tasks from the board by itself when idle, and reports back by message.',
      input: z.object({
        name,
        role: z.string().min(1).describe('its role, e.g. coder, tester or reviewer (role files in .team/roles add more)'),
        prompt: z.string().min(1).describe('its first instruction: what to do and how to report'),
        model: z.string().optional().describe("a model id (default: the role's model, else the lead's)"),
        worktree: z.boolean().optional().describe('its own git worktree and branch huddle/<name>, merged back later; needs a repository with a commit'),
        plan_mode_required: z.boolean().optional().describe('it may only read until you approve its plan'),
        permission_mode: z
          .enum(PERMISSION_MODES)
          .optional()
          .describe(
            "plan: read only, for good; ask: commands off the allow-list wait for the person; auto: no questions. Default: the role's, else the run's; never looser than the run's",
          ),
        agent: z
          .enum(['huddle', ...AGENT_KINDS])
          .optional()
          .describe(
            "who runs it: huddle (default); claude-code, gemini, codex or opencode (that CLI, with the team's tools through huddle); command (a program in a terminal pane)",
          ),
        command: z.string().min(1).optional().describe('for agent command: the command line (default: settings agents.command, else a shell)'),
      }),
      summarize: (input) => `${input.name} (${input.role})`,
      run: async (input, ctx) =>
        team.spawn(
          {
            name: input.name,
            role: input.role,
            prompt: input.prompt,
            model: input.model,
            worktree: input.worktree,
            planModeRequired: input.plan_mode_required,
            permissionMode: input.permission_mode,
            agent: input.agent,
            command: input.command,
          },
          ctx.agent,
        ),
    }),
    defineTool({
      name: 'list_teammates',
      effects: ['read'],
      description: 'The roster: every member with role, status and why.',
      input: z.object({}),
      run: async () => team.describeRoster(),
    }),
    defineTool({
      name: 'broadcast',
      effects: ['message'],
      description: 'Send one message to every other member of the team.',
      input: broadcastInput,
      run: async (input, ctx) => `sent to ${await team.broadcast(ctx.agent, input.content)} members`,
    }),
    defineTool({
      name: 'shutdown_request',
      effects: ['team'],
      description: 'Ask a teammate to shut down. It answers with a shutdown_response message; one that does not answer in time is stopped anyway.',
      input: z.object({ teammate: z.string().describe('the teammate to stop, by name') }),
      summarize: (input) => input.teammate,
      run: async (input) => {
        const requestId = await team.requestShutdown(input.teammate);
        return `shutdown requested from ${input.teammate} (request_id ${requestId}); its answer will arrive in your inbox`;
      },
    }),
    defineTool({
      name: 'plan_approval',
      effects: ['team'],
      description: "Approve or reject a teammate's plan (a plan_approval_request message).",
      input: z.object({
        request_id: z.string().min(1).describe('the request_id of the plan_approval_request'),
        approve: z.boolean().describe('true to let it carry out the plan'),
        feedback: z.string().optional().describe('what to change (with a rejection) or to keep in mind'),
      }),
      summarize: (input) => `${input.request_id} ${input.approve ? 'approve' : 'reject'}`,
      run: async (input) => {
        const teammate = await team.decidePlan(input.request_id, input.approve, input.feedback);
        return `plan of ${teammate} ${input.approve ? 'approved' : 'rejected'}`;
      },
    }),
  ];
}

export function teammateTools(team: TeamControl): Tool[] {
  return [
    defineTool({
      name: 'idle',
      effects: ['team'],
      description: 'Say you have no more work now. You wait, and are woken by messages and by new unblocked tasks.',
      input: z.object({}),
      run: async (_input, ctx) => {
        team.goIdle(ctx.agent);
        return 'going idle';
      },
    }),
    defineTool({
      name: 'shutdown_response',
      effects: ['team'],
      description: 'Answer a shutdown_request. Approving ends your work after this call.',
      input: z.object({
        request_id: z.string().min(1).describe('the request_id of the shutdown_request'),
        approve: z.boolean().describe('true to shut down'),
        reason: z.string().optional().describe('why not, when refusing'),
      }),
      summarize: (input) => `${input.request_id} ${input.approve ? 'approve' : 'refuse'}`,
      run: async (input, ctx) => {
        await team.answerShutdown(ctx.agent, input.request_id, input.approve, input.reason);
        return input.approve ? 'shutting down' : 'refusal sent to the lead';
      },
    }),
  ];
}

/** For plan mode: submit a plan to the lead. */
export function planSubmissionTool(team: TeamControl): Tool {
  return defineTool({
    name: 'plan_approval',
    effects: ['team'],
    description:
      'Send your plan to the lead for approval. Until it is approved you can only read. After sending, end your turn; the answer arrives as a message.',
    input: z.object({ plan: z.string().min(1).describe('the plan: steps, files to change, how you will check it') }),
    summarize: () => 'plan sent',
    run: async (input, ctx) => {
      const requestId = await team.submitPlan(ctx.agent, input.plan);
      return `plan sent to the lead (request_id ${requestId}); end your turn and wait for the answer`;
    },
  });
}

/** bash restricted to commands that only read, for plan mode: it declares `read`, and keeps to it. */
export function readOnlyBashTool(): Tool {
  const tool = bashTool as unknown as Tool<z.ZodType<{ command: string; timeout_ms?: number }>>;
  return defineTool({
    ...tool,
    prepare: undefined, // a read-only sandbox is one-shot: nothing to start ahead
    effects: ['read'],
    description: `${tool.description} In plan mode only commands that read are allowed (ls, cat, grep, git status/log/diff…).`,
    run: async (input, ctx) => {
      const why = whyNotReadOnly(input.command, ctx.workspace.root);
      if (why) throw new ToolError(`refused in plan mode: ${why}. Send your plan with plan_approval first.`);
      return tool.run(input, { ...ctx, permissionMode: 'plan' }); // a read-only sandbox too
    },
  });
}
