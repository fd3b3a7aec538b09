// `${VAR}` and `${VAR:-default}` in MCP server entries, as Claude Code expands .mcp.json: in the
// command, args, env values, url and header values. A variable that is unset and has no default
// is an error naming it, so the server fails to start with a reason instead of with an empty token.
// huddle's own secrets (HIDDEN_ENV) are never expanded.
import { HIDDEN_ENV } from '../process/spawn.js';
import type { McpServerSettings } from '../settings/schema.js';

export class ExpansionError extends Error {}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandText(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    // huddle's own credentials (the model's key, the team's database) go to no server, as to no
    // command: a .mcp.json could otherwise send them in a URL or an argument (docs/trust.md).
    if (HIDDEN_ENV.includes(name))
      throw new ExpansionError(`\${${name}} is huddle's own credential and goes to no MCP server; give the server a variable of its own`);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new ExpansionError(`\${${name}} is not set (set it, or write \${${name}:-default})`);
  });
}

export function expandServer(server: McpServerSettings, env: NodeJS.ProcessEnv): McpServerSettings {
  const map = (record: Record<string, string> | undefined) =>
    record ? Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expandText(value, env)])) : undefined;
  if ('command' in server) {
    const args = server.args?.map((arg) => expandText(arg, env));
    const vars = map(server.env);
    return { ...server, command: expandText(server.command, env), ...(args ? { args } : {}), ...(vars ? { env: vars } : {}) };
  }
  const headers = map(server.headers);
  return { ...server, url: expandText(server.url, env), ...(headers ? { headers } : {}) };
}
