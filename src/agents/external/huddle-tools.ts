// The team tools huddle's MCP server (`huddle mcp --as NAME`, docs/contract.md#tools) offers an external
// teammate: all but the file and shell tools (the agent has its own). One list for both ways the
// server works — over the workspace's store, run by a person by hand, and through the live huddle's
// channel for that teammate (agent-channel.ts), when huddle starts it for its own external
// teammates — so that a tool answers the same either way.
import { agentEmitter } from '../../runtime/events/events.js';
import { messageTools } from '../../runtime/tools/message-tools.js';
import { ToolRegistry } from '../../runtime/tools/registry.js';
import { taskTools } from '../../runtime/tools/task-tools.js';
import type { Tool } from '../../runtime/tools/types.js';
import { completionReportsFor } from '../tools/completion-report.js';
import { reviewTools } from '../tools/review-tools.js';
import type { TeamContext } from '../team-context.js';
import { planSubmissionTool, teammateTools, type TeamControl } from '../tools/team-tools.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import { throughPipeline } from '../tools/tool-pipeline.js';
import { AgentChannel } from './agent-channel.js';

/** The tools that need the live team (its lifecycle), not only its store. */
export const LIVE_TOOLS: readonly string[] = ['idle', 'shutdown_response', 'plan_approval'];

/** The server's tools over the team's store parts in `ctx`, with the live ones as given. */
export function huddleServerTools(ctx: TeamContext, live: readonly Tool[]): Tool[] {
  const messages = messageTools(ctx.bus, { annotate: completionReportsFor(ctx.hub).annotate });
  return [...taskTools(ctx.board, { agents: () => ctx.roster.names() }), messages.sendMessage, messages.readInbox, ...reviewTools(ctx), ...live];
}

/**
 * The channel through which teammate `name` (an external agent) works with the live team, as itself
 * only. Its task completions pass the same gates as an in-process agent's (tool-pipeline.ts): the
 * verify command runs in its own workspace (`workspace`: its clone, for a worktree teammate), then
 * TaskCompleted hooks.
 */
export function teamChannel(ctx: TeamContext, team: TeamControl, name: string, workspace: Workspace = ctx.workspace): AgentChannel {
  // The tool pipeline's completion step only: the agent's own CLI asks about, and hooks, its own tools.
  const completion = { board: ctx.board, roster: ctx.roster, teamName: ctx.teamName, settings: () => ctx.settings, hooks: ctx.hooks, spawn: ctx.spawn };
  const tools = throughPipeline(huddleServerTools(ctx, liveTeamTools(team)), { teamRoot: ctx.workspace.root, completion });
  return new AgentChannel({ agent: name, workspace, events: agentEmitter(ctx.hub, name) }, new ToolRegistry(tools));
}

/** idle, shutdown_response and plan_approval as the live team defines them. */
export function liveTeamTools(team: TeamControl): Tool[] {
  return [...teammateTools(team), planSubmissionTool(team)].filter((tool) => LIVE_TOOLS.includes(tool.name));
}
