// What `/mcp` shows of the session's MCP servers, kept apart from the client (mcp-servers.ts) so a
// face can format it without loading the MCP SDK.
import type { McpServerState } from './server-connection.js';

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http' | 'sse';
  state: McpServerState;
  /** Qualified names: mcp__<server>__<tool>. */
  tools: string[];
  lastError?: string;
  restarts: number;
  pid?: number;
}

/** A plain-text listing for `/mcp`: server, state, tools, last error. */
export function formatMcpStatus(statuses: McpServerStatus[]): string {
  if (!statuses.length) return 'No MCP servers (add them to .mcp.json or "mcpServers" in .team/settings.json).';
  return statuses
    .map((status) => {
      const head = `${status.name} (${status.transport}): ${status.state}${status.restarts ? `, restarted ${status.restarts}×` : ''}`;
      const tools = status.tools.length ? `  tools: ${status.tools.join(', ')}` : '  no tools';
      return [head, tools, ...(status.lastError ? [`  last error: ${status.lastError}`] : [])].join('\n');
    })
    .join('\n');
}
