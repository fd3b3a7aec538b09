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
import { describeNameRule, isAgentName } from '../runtime/vocabulary.js';
import { channelSource, storeSource, type ToolSource } from '../session/team-tool-source.js';

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
    if ('refused' in opened) return fail(opened.refused);
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

function fail(message: string): number {
  process.stderr.write(`huddle mcp: ${message}\n`);
  return 2;
}
