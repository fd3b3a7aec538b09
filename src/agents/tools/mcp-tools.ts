// MCP servers' tools for one agent (docs/contract.md#tools): those its role may use. huddle cannot see
// what an MCP tool does, so each declares what its server says of it (`readOnlyHint`: effect `read`,
// else `external`; runtime/mcp/mcp-servers.ts), and the tool pipeline's permission step goes by that:
// in plan mode only read-only tools run; in ask mode any other tool waits for the person (`a` allows
// it for good: its name goes on the allow-list); in auto mode they all run.
import type { McpServers } from '../../runtime/mcp/mcp-servers.js';
import type { ToolAccess } from '../../runtime/mcp/tool-names.js';
import type { Tool } from '../../runtime/tools/types.js';

/** What the agents need of the session's MCP servers. */
export type McpToolSource = Pick<McpServers, 'tools'>;

export function mcpToolsFor(mcp: McpToolSource | undefined, access: ToolAccess, options: { readOnly?: boolean } = {}): Tool[] {
  return mcp ? mcp.tools(access, options) : [];
}
