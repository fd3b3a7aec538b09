// `huddle mcp --as NAME`: huddle's own MCP server (docs/contract.md#tools), on stdio, named `huddle`, for
// an external agent CLI that is teammate NAME of the team in the workspace. It serves the team
// tools (all but the file and shell tools, which the agent has of its own: agents/external/
// huddle-tools.ts) in one of two ways:
// - `--socket PATH` (how huddle starts it for its own external teammates, inside their sandbox):
//   through that teammate's channel to the live huddle (agents/external/agent-channel.ts), which
//   runs each tool as its teammate and only as it (a request naming anyone else is refused); this
//   process opens no store (the sandbox keeps the team's state read-only) and holds no other capability.
// - without it (a person wiring an agent by hand): over the team's store, opened to join, not to
//   run (the team belongs to the live huddle), with the lifecycle answers that need the live team
//   (idle, shutdown_response, plan_approval) forwarded to the control socket of the huddle
//   process running the team. It acts for the person, so it needs the person's key
//   (session/person-key.ts), which no sandboxed command can read, and NAME must be on the roster.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { callResult, channelRequest, type ToolDefinitionParam } from '../agents/external/agent-channel.js';
import { huddleServerTools, liveTeamTools } from '../agents/external/huddle-tools.js';
import type { TeamContext } from '../agents/team-context.js';
import type { TeamControl } from '../agents/tools/team-tools.js';
import { resolveConfig } from '../runtime/config.js';
import { agentEmitter, EventHub } from '../runtime/events/events.js';
import type { ModelBackend } from '../runtime/model/model-client.js';
import type { TeamStore } from '../runtime/store/team-store.js';
import { ToolRegistry } from '../runtime/tools/registry.js';
import { defineTool, effectsOf, ToolError, type Tool, type ToolResult } from '../runtime/tools/types.js';
import { describeNameRule, isAgentName } from '../runtime/vocabulary.js';
import { Workspace } from '../runtime/workspace/workspace.js';
import { controlRequest, NoLiveHuddleError } from '../session/control-endpoint.js';
import { whyNotPerson } from '../session/person-key.js';
import { resolveSettings } from '../session/settings.js';

/** The server's name: its tools reach Claude Code as mcp__huddle__<tool>. */
export const HUDDLE_MCP_NAME = 'huddle';

export interface McpServeOptions {
  as: string;
  cwd: string | undefined;
  /** The teammate's channel to the live huddle (given by huddle); absent: the store. */
  socket?: string | undefined;
  /** --team URL: the team on PostgreSQL (else the settings' or HUDDLE_TEAM_URL's, else the files). */
  team?: string | undefined;
  version: string;
}

/** What the server serves, however it does. */
interface ToolSource {
  definitions(): Promise<ToolDefinitionParam[]>;
  call(name: string, input: unknown, signal: AbortSignal): Promise<ToolResult>;
  close(): Promise<void>;
}

/** The tools that only read the team's state: the board, a task, the inbox (read_inbox marks nothing read twice). */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['task_list', 'task_get', 'list_teammates']);

export async function runMcpServer(options: McpServeOptions): Promise<number> {
  if (!isAgentName(options.as)) return fail(describeNameRule(options.as));
  let source: ToolSource;
  if (options.socket) {
    source = await channelSource(options.socket, options.as);
    // The channel says at once whose it is: a name that is not its teammate's ends here, in one line.
    try {
      await source.definitions();
    } catch (error) {
      return fail((error as Error).message);
    }
  } else {
    const opened = await storeSource(options);
    if (typeof opened === 'number') return opened;
    source = opened;
  }
  const server = new Server({ name: HUDDLE_MCP_NAME, version: options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await source.definitions()).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema,
      // A client may run read-only tools without asking (MCP's tool annotations).
      annotations: { readOnlyHint: READ_ONLY_TOOLS.has(tool.name) },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await source.call(request.params.name, request.params.arguments ?? {}, extra.signal);
    return { content: [{ type: 'text' as const, text: result.content }], ...(result.isError ? { isError: true } : {}) };
  });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
  await source.close();
  return 0;
}

/** Through the teammate's channel: the live huddle runs every tool as this teammate. */
async function channelSource(socket: string, as: string): Promise<ToolSource> {
  let definitions: ToolDefinitionParam[] | undefined;
  return {
    async definitions() {
      if (!definitions) {
        const response = await channelRequest(socket, { op: 'list', as });
        if (!response.ok) throw new Error(response.error);
        definitions = response.result as ToolDefinitionParam[];
      }
      return definitions;
    },
    async call(name, input, signal) {
      try {
        return callResult(await channelRequest(socket, { op: 'call', as, tool: name, input }, signal));
      } catch (error) {
        return { content: `${name} failed: ${(error as Error).message}`, isError: true };
      }
    },
    close: async () => undefined,
  };
}

/** Over the workspace's store (joined), as a person runs it by hand. */
async function storeSource(options: McpServeOptions): Promise<ToolSource | number> {
  const root = path.resolve(options.cwd ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) return fail(`workspace ${root} is not a directory`);
  const workspace = new Workspace(root);
  const notPerson = whyNotPerson(workspace.teamDir);
  if (notPerson) return fail(`--as ${options.as} over the team's store acts for the person, and ${notPerson}`);
  const hub = new EventHub();
  // stdout is the MCP protocol's: the database going away (and coming back) is said on stderr.
  hub.subscribe((event) => {
    if (event.type === 'warning' && (event as { database?: unknown }).database !== undefined) process.stderr.write(`huddle mcp: ${String(event.message)}\n`);
  });
  let store: TeamStore;
  try {
    // The same backend a run in this workspace uses: the files, or the team on PostgreSQL.
    const settings = await resolveSettings(
      {
        prompt: undefined,
        json: false,
        resume: false,
        fresh: false,
        cwd: root,
        model: undefined,
        apiKeyFile: undefined,
        maxTurns: undefined,
        command: 'mcp',
        team: options.team,
      },
      { missingKey: 'explain', untrusted: 'ignore' },
    );
    store = await settings.backend.open({ hub, secrets: settings.secrets, mode: 'join' });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (!store.roster.get(options.as)) {
    const names = store.roster.names();
    await store.close('huddle mcp refused the name');
    return fail(
      `'${options.as}' is not on the roster of the team in ${root} (${names.length ? `members: ${names.join(', ')}` : 'it has no members'}); huddle spawns a teammate before anyone acts as it`,
    );
  }
  const registry = new ToolRegistry(teamToolsFor(workspace, store, hub, root));
  return {
    definitions: async () => registry.definitions(),
    call: (name, input, signal) => registry.run(name, input, { workspace, agent: options.as, signal, events: agentEmitter(hub, options.as) }),
    close: () => store.close('the MCP client went away'),
  };
}

/** The team tools over a joined store; the live ones go to the live huddle's control socket. */
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
  return huddleServerTools(ctx, forwardedLiveTools(root));
}

/** idle, shutdown_response and plan_approval as the live team defines them, run there. */
function forwardedLiveTools(root: string): Tool[] {
  // The definitions only (names, descriptions, schemas): their team is never called here.
  const unreachable = new Proxy({} as TeamControl, {
    get: () => () => {
      throw new Error('not here');
    },
  });
  return liveTeamTools(unreachable).map((tool) =>
    defineTool({
      ...tool,
      effects: effectsOf(tool),
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
