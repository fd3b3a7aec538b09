// MCP tools reach agents as `mcp__<server>__<tool>` (docs/contract.md#tools, Claude Code's names), and a
// role's tool lists may name them one by one, by server (`mcp__server`, `mcp__server__*`) or by glob.

export const MCP_PREFIX = 'mcp__';
/** The API's limit for a tool name is 64 characters of [a-zA-Z0-9_-]. */
const MAX_NAME = 64;

function safe(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `${MCP_PREFIX}${safe(server)}__${safe(tool)}`.slice(0, MAX_NAME);
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_PREFIX);
}

/** Whether `name` is matched by a tools-list entry: exact, a glob with `*`, or `mcp__server` for all its tools. */
export function toolPatternMatches(pattern: string, name: string): boolean {
  if (pattern === name) return true;
  if (pattern.includes('*')) {
    const regex = new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`);
    return regex.test(name);
  }
  // `mcp__server` (no tool part) stands for every tool of that server.
  return isMcpToolName(pattern) && !pattern.slice(MCP_PREFIX.length).includes('__') && name.startsWith(`${pattern}__`);
}

export interface ToolAccess {
  /** The only tools allowed; undefined: all. */
  tools?: readonly string[] | undefined;
  /** Tools never allowed; wins over `tools`. */
  denyTools?: readonly string[] | undefined;
}

export function toolAllowed(name: string, access: ToolAccess): boolean {
  if (access.denyTools?.some((pattern) => toolPatternMatches(pattern, name))) return false;
  if (!access.tools) return true;
  return access.tools.some((pattern) => toolPatternMatches(pattern, name));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
