// MCP servers' tools for one agent (docs/contract.md#tools): those its role may use, behind its permission
// mode. huddle cannot see what an MCP tool does, so it goes by what the server says of it
// (`readOnlyHint`): in plan mode only read-only tools run; in ask mode any other tool waits for the
// person (`a` allows it for good: its name goes on the allow-list); in auto mode they all run.
import type { McpServers } from '../runtime/mcp/mcp-servers.js';
import type { ToolAccess } from '../runtime/mcp/tool-names.js';
import type { PermissionGate } from '../runtime/permissions/guarded-tools.js';
import { oneLine } from '../runtime/tools/registry.js';
import type { Tool, ToolResult } from '../runtime/tools/types.js';

/** What the agents need of the session's MCP servers. */
export type McpToolSource = Pick<McpServers, 'tools' | 'isReadOnly'>;

export function mcpToolsFor(mcp: McpToolSource | undefined, access: ToolAccess, gate: PermissionGate, options: { readOnly?: boolean } = {}): Tool[] {
  if (!mcp) return [];
  return mcp.tools(access, options).map((tool) => (mcp.isReadOnly(tool.name) ? tool : guarded(tool, gate)));
}

function guarded(tool: Tool, gate: PermissionGate): Tool {
  return {
    ...tool,
    run: async (input, context): Promise<string | ToolResult> => {
      const mode = gate.modeOf(context.agent);
      if (mode === 'plan') {
        return {
          content: `refused in plan mode (read-only): ${tool.name} is not marked read-only by its MCP server (readOnlyHint), so it may change things. Say what it should do instead.`,
          isError: true,
        };
      }
      if (mode === 'ask' && !gate.isAllowListed(tool.name)) {
        try {
          await gate.askPerson(context, {
            tool: tool.name,
            summary: describeInput(input),
            reason: `${tool.name}: an MCP tool its server does not mark read-only`,
            prefixes: [tool.name],
            headless: `${tool.name} needs approval (its MCP server does not mark it read-only), which a headless run cannot ask for; run with --permission-mode auto or add "${tool.name}" to "permissions": {"allow": […]} in .team/settings.local.json`,
          });
        } catch (error) {
          return { content: (error as Error).message, isError: true };
        }
      }
      return tool.run(input, context);
    },
  };
}

/** The call's arguments in one line, for the needs-you queue. */
function describeInput(input: unknown): string {
  const json = JSON.stringify(input ?? {});
  return json === '{}' ? '(no arguments)' : oneLine(json, 200);
}
