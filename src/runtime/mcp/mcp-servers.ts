// The MCP servers of one huddle process (docs/contract.md#tools): all started once, shared by every agent;
// their tools offered as huddle tools named mcp__<server>__<tool> with the server's own input schema;
// a server that does not start is one warning and the rest goes on; a status listing for `/mcp`.
import * as z from 'zod';
import { plainSpawn, type SpawnLike } from '../process/spawn.js';
import { oneLine } from '../tools/registry.js';
import { ToolError, type Tool, type ToolResult } from '../tools/types.js';
import type { McpServerSettings } from '../settings/schema.js';
import { McpCallError, McpServerConnection, type RestartPolicy } from './server-connection.js';
import { mcpToolName, toolAllowed, type ToolAccess } from './tool-names.js';
import { mapMcpResult } from './tool-result.js';
import type { McpServerStatus } from './status.js';

export { formatMcpStatus, type McpServerStatus } from './status.js';

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
export const DEFAULT_TOOL_TIMEOUT_MS = 600_000;
/** Long server descriptions cost every request; the schema says the rest. */
const MAX_DESCRIPTION = 2_000;

export interface McpServersOptions {
  /** By name; from the settings' `mcpServers` (which include .mcp.json's). */
  servers: Record<string, McpServerSettings>;
  /** Names not to start (settings `mcp.disabled`). */
  disabled?: readonly string[];
  /** The workspace root: stdio servers' cwd. */
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** How stdio servers are started: the sandbox's spawn, or plain child_process. */
  spawn?: SpawnLike;
  startupTimeoutMs?: number;
  toolTimeoutMs?: number;
  restart?: RestartPolicy;
  /** One line per server that did not start (or could not be restarted): show it as a warning. */
  onWarning?: (message: string) => void;
  /** Any server changed state or tools (the `/mcp` view refreshes). */
  onChange?: () => void;
}

const passThroughInput = z.record(z.string(), z.unknown());

export class McpServers {
  readonly #connections: McpServerConnection[];

  private constructor(connections: McpServerConnection[]) {
    this.#connections = connections;
  }

  /** Starts every server at once; resolves when each is ready or has failed. Never throws for a server. */
  static async start(options: McpServersOptions): Promise<McpServers> {
    const disabled = new Set(options.disabled ?? []);
    const warned = new Set<string>();
    const warn = (connection: McpServerConnection, what: string) => {
      const message = `MCP server '${connection.name}' ${what}: ${connection.lastError ?? 'unknown error'}; its tools are unavailable and the rest goes on`;
      if (warned.has(message)) return;
      warned.add(message);
      options.onWarning?.(message);
    };
    const connections = Object.entries(options.servers)
      .filter(([name]) => !disabled.has(name))
      .map(
        ([name, server]) =>
          new McpServerConnection({
            name,
            server,
            cwd: options.cwd,
            env: options.env ?? process.env,
            spawn: options.spawn ?? plainSpawn,
            startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
            toolTimeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
            ...(options.restart ? { restart: options.restart } : {}),
            onStateChange: (connection) => {
              // A server that ran and could not be brought back is worth a second warning.
              if (connection.state === 'failed' && connection.restarts > 0) warn(connection, 'stopped and could not be restarted');
              options.onChange?.();
            },
          }),
      );
    await Promise.all(connections.map((connection) => connection.start()));
    for (const connection of connections) if (connection.state === 'failed') warn(connection, 'did not start');
    return new McpServers(connections);
  }

  /**
   * The tools of every ready server that `access` allows (a role's tools/denyTools), as huddle
   * tools; with `readOnly`, only those their server marks `readOnlyHint: true`.
   */
  tools(access: ToolAccess = {}, options: { readOnly?: boolean } = {}): Tool[] {
    const tools: Tool[] = [];
    for (const connection of this.#connections) {
      for (const info of connection.tools) {
        const name = mcpToolName(connection.name, info.name);
        if (!toolAllowed(name, access)) continue;
        if (options.readOnly && !info.readOnly) continue;
        tools.push(this.#tool(connection, info.name, name, info.description, info.inputSchema, info.readOnly));
      }
    }
    return tools;
  }

  status(): McpServerStatus[] {
    return this.#connections.map((connection) => {
      const status: McpServerStatus = {
        name: connection.name,
        transport: connection.transportKind,
        state: connection.state,
        tools: connection.tools.map((tool) => mcpToolName(connection.name, tool.name)),
        restarts: connection.restarts,
      };
      if (connection.lastError) status.lastError = connection.lastError;
      if (connection.pid !== undefined) status.pid = connection.pid;
      return status;
    });
  }

  /** Calls a server's tool by its own name; errors (a dead server, the server's own isError) are results. */
  async call(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
    const connection = this.#connections.find((c) => c.name === server);
    if (!connection) return { content: `no MCP server named '${server}'`, isError: true };
    try {
      return mapMcpResult(await connection.callTool(tool, args, signal));
    } catch (error) {
      if (error instanceof McpCallError) return { content: error.message, isError: true };
      throw error;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#connections.map((connection) => connection.close()));
  }

  #tool(connection: McpServerConnection, tool: string, name: string, description: string, inputSchema: Tool['inputJsonSchema'], readOnly: boolean): Tool {
    return {
      name,
      // huddle cannot see what an MCP tool does: it goes by what the server says (readOnlyHint).
      effects: readOnly ? ['read'] : ['external'],
      description: description.length > MAX_DESCRIPTION ? `${description.slice(0, MAX_DESCRIPTION - 1)}…` : description,
      input: passThroughInput,
      ...(inputSchema ? { inputJsonSchema: inputSchema } : {}),
      run: async (input, context) => {
        if (context.signal.aborted) throw new ToolError('interrupted');
        return this.call(connection.name, tool, input as Record<string, unknown>, context.signal);
      },
      summarize: (input) => oneLine(JSON.stringify(input)),
    };
  }
}
