// `huddle mcp --as NAME`: huddle's own MCP server (SPEC section 6), on stdio, named `huddle`, for
// an external agent CLI that is teammate NAME of the team in the workspace. It serves the team
// tools (all but the file and shell tools, which the agent has of its own): the board, messages,
// reviews over the team's store (opened to join, not to run: the team belongs to the live huddle),
// and the lifecycle answers that need the live team (idle, shutdown_response, plan_approval),
// which it forwards through the control socket of the huddle process running the team.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { reviewTools } from '../agents/review-tools.js';
import type { TeamContext } from '../agents/team-context.js';
import { planSubmissionTool, teammateTools, type TeamControl } from '../agents/team-tools.js';
import { resolveConfig } from '../runtime/config.js';
import { agentEmitter, EventHub } from '../runtime/events/events.js';
import type { ModelBackend } from '../runtime/model/model-client.js';
import { fileBackend } from '../runtime/store/file/file-store.js';
import type { TeamStore } from '../runtime/store/team-store.js';
import { messageTools } from '../runtime/tools/message-tools.js';
import { ToolRegistry } from '../runtime/tools/registry.js';
import { taskTools } from '../runtime/tools/task-tools.js';
import { defineTool, ToolError, type Tool } from '../runtime/tools/types.js';
import { describeNameRule, isAgentName } from '../runtime/vocabulary.js';
import { Workspace } from '../runtime/workspace/workspace.js';
import { controlRequest, NoLiveHuddleError } from '../session/control-endpoint.js';

/** The server's name: its tools reach Claude Code as mcp__huddle__<tool>. */
export const HUDDLE_MCP_NAME = 'huddle';

/** The tools that need the live team: forwarded to its control socket. */
const LIVE_TOOLS = ['idle', 'shutdown_response', 'plan_approval'];

export interface McpServeOptions {
  as: string;
  cwd: string | undefined;
  version: string;
}

export async function runMcpServer(options: McpServeOptions): Promise<number> {
  if (!isAgentName(options.as)) return fail(describeNameRule(options.as));
  const root = path.resolve(options.cwd ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) return fail(`workspace ${root} is not a directory`);
  const workspace = new Workspace(root);
  const hub = new EventHub();
  const secrets = [process.env.ANTHROPIC_API_KEY, process.env.ANTHROPIC_AUTH_TOKEN].filter((s): s is string => Boolean(s));
  let store: TeamStore;
  try {
    store = await fileBackend(workspace).open({ hub, secrets, mode: 'join' });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (!store.roster.get(options.as)) {
    process.stderr.write(`huddle mcp: '${options.as}' is not on the roster of the team in ${root}; its messages cannot reach it until huddle spawns it\n`);
  }
  const registry = new ToolRegistry(teamToolsFor(workspace, store, hub, root));
  const server = new Server({ name: HUDDLE_MCP_NAME, version: options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: registry.definitions().map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input_schema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await registry.run(request.params.name, request.params.arguments ?? {}, {
      workspace,
      agent: options.as,
      signal: extra.signal,
      events: agentEmitter(hub, options.as),
    });
    return { content: [{ type: 'text' as const, text: result.content }], ...(result.isError ? { isError: true } : {}) };
  });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
  await store.close('the MCP client went away');
  return 0;
}

/** The team tools an external teammate gets from huddle (SPEC section 6, all but files and shell). */
function teamToolsFor(workspace: Workspace, store: TeamStore, hub: EventHub, root: string): Tool[] {
  const config = resolveConfig({ cwd: workspace.root }, {});
  const noModel: ModelBackend = {
    call: () => Promise.reject(new Error('huddle mcp makes no model calls')),
  };
  const ctx: TeamContext = {
    config,
    workspace,
    hub,
    backend: noModel,
    bus: store.bus,
    board: store.board,
    roster: store.roster,
    teamName: store.teamName,
    transcripts: store.events,
    shutdownGraceMs: 0,
    planAutoApproveMs: 0,
  };
  const messages = messageTools(store.bus);
  return [
    ...taskTools(store.board, { agents: () => store.roster.names() }),
    messages.sendMessage,
    messages.readInbox,
    ...reviewTools(ctx),
    ...liveTools(root),
  ];
}

/** idle, shutdown_response and plan_approval as the live team defines them, run there. */
function liveTools(root: string): Tool[] {
  // The definitions only (names, descriptions, schemas): their team is never called here.
  const unreachable = new Proxy({} as TeamControl, {
    get: () => () => {
      throw new Error('not here');
    },
  });
  const defined = [...teammateTools(unreachable), planSubmissionTool(unreachable)].filter((tool) => LIVE_TOOLS.includes(tool.name));
  return defined.map((tool) =>
    defineTool({
      ...tool,
      run: async (input, context) => {
        let response;
        try {
          response = await controlRequest(root, { op: 'tool', as: context.agent, tool: tool.name, input }, { timeoutMs: 60_000 });
        } catch (error) {
          if (error instanceof NoLiveHuddleError) throw new ToolError(`${tool.name} needs the huddle running this team, and ${error.message}`);
          throw error;
        }
        if (!response.ok) throw new ToolError(response.error);
        const result = response.result as { content: string; isError?: boolean };
        return result;
      },
    }),
  );
}

function fail(message: string): number {
  process.stderr.write(`huddle mcp: ${message}\n`);
  return 2;
}
