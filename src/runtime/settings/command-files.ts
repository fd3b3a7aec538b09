// The workspace files the settings run: hook scripts and MCP server programs (`./scripts/guard.sh`,
// `node tools/server.js`). The file tools never write them (docs/trust.md), else an agent could
// rewrite the guard that watches it.
import { filesNamedBy } from '../workspace/config-paths.js';
import type { Settings } from './schema.js';

export function settingsCommandFiles(root: string, settings: Settings | undefined): string[] {
  if (!settings) return [];
  const commands: string[] = [];
  for (const matchers of Object.values(settings.hooks ?? {})) {
    for (const matcher of matchers ?? []) for (const hook of matcher.hooks) commands.push(hook.command);
  }
  for (const server of Object.values(settings.mcpServers ?? {})) {
    if ('command' in server) commands.push([server.command, ...(server.args ?? [])].join(' '));
  }
  return filesNamedBy(root, commands);
}
