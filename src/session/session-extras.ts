// What the settings add to a session besides the team's config (docs/contract.md#settings-files): the project's
// instructions (CLAUDE.md, AGENTS.md), the hooks, and the MCP servers, started once per session and
// shared by every agent. Each is made here from the loaded settings, with the start-up notices the
// person should read: deprecated files, a hook matcher that does not compile, a server that did
// not start, and which hooks and servers the repository itself brings (they run without asking).
import { randomUUID } from 'node:crypto';
import { ProjectMemory } from '../agents/prompts/memory.js';
import type { HookRunner } from '../runtime/hooks/hook-runner.js';
import type { McpServers } from '../runtime/mcp/mcp-servers.js';
import type { SpawnLike } from '../runtime/process/spawn.js';
import type { LoadedSettings } from '../runtime/settings/load.js';
import type { Settings } from '../runtime/settings/schema.js';

/** Sources a repository brings along (committed): what runs from them is said at start-up. */
const PROJECT_SOURCES = new Set(['.team/settings.json', '.claude/settings.json', '.mcp.json']);

export interface SessionExtras {
  memory: ProjectMemory;
  hooks?: HookRunner;
  mcp?: McpServers;
  /** Claude Code's `session_id` for hooks. */
  sessionId: string;
  /** One line each, for the person (headless: stderr; the console: the lead's pane). */
  notices: string[];
}

export interface ExtrasOptions {
  loaded: LoadedSettings | undefined;
  root: string;
  home?: string | undefined;
  spawn?: SpawnLike | undefined;
  env?: NodeJS.ProcessEnv;
}

export async function startExtras({ loaded, root, home, spawn, env = process.env }: ExtrasOptions): Promise<SessionExtras> {
  const settings: Settings = loaded?.settings ?? {};
  const notices = [...(loaded?.warnings ?? [])];
  const sessionId = randomUUID();
  const memory = new ProjectMemory({
    workspaceRoot: root,
    ...(home ? { home } : {}),
    ...(settings.memory?.maxChars ? { maxChars: settings.memory.maxChars } : {}),
  });
  for (const note of memory.current().instructions.notes) notices.push(note);

  let hooks: HookRunner | undefined;
  if (Object.values(settings.hooks ?? {}).some((matchers) => matchers?.length)) {
    const { HookRunner } = await import('../runtime/hooks/hook-runner.js');
    hooks = new HookRunner({ hooks: settings.hooks, sessionId, projectDir: root, ...(spawn ? { spawn } : {}) });
    notices.push(...hooks.configErrors);
  }

  let mcp: McpServers | undefined;
  const disabled = new Set(settings.mcp?.disabled ?? []);
  const servers = Object.fromEntries(Object.entries(settings.mcpServers ?? {}).filter(([name]) => !disabled.has(name)));
  if (Object.keys(servers).length) {
    // The MCP SDK loads only for a workspace that has servers.
    const { McpServers } = await import('../runtime/mcp/mcp-servers.js');
    mcp = await McpServers.start({
      servers,
      cwd: root,
      env,
      ...(spawn ? { spawn } : {}),
      ...(settings.mcp?.startupTimeoutMs ? { startupTimeoutMs: settings.mcp.startupTimeoutMs } : {}),
      ...(settings.mcp?.toolTimeoutMs ? { toolTimeoutMs: settings.mcp.toolTimeoutMs } : {}),
      onWarning: (message) => notices.push(message),
    });
  }
  const brought = projectBrought(loaded, servers);
  if (brought) notices.push(brought);
  return { memory, ...(hooks ? { hooks } : {}), ...(mcp ? { mcp } : {}), sessionId, notices };
}

/**
 * The hooks and MCP servers that come from the repository's own files, which huddle runs without
 * asking (as `claude -p` does): said once at start-up, so nobody runs them unawares.
 */
function projectBrought(loaded: LoadedSettings | undefined, servers: Record<string, unknown>): string | undefined {
  if (!loaded) return undefined;
  const fromProject = (key: string) => (loaded.provenance.get(key) ?? []).filter((source) => PROJECT_SOURCES.has(source));
  const hooks = Object.entries(loaded.settings.hooks ?? {}).flatMap(([event, matchers]) => {
    const sources = fromProject(`hooks.${event}`);
    return matchers?.length && sources.length ? [`${event} (${sources.join(', ')})`] : [];
  });
  const mcp = Object.keys(servers).flatMap((name) => {
    const sources = fromProject(`mcpServers.${name}`).concat(fromProject(`mcpServers[${JSON.stringify(name)}]`));
    return sources.length ? [`${name} (${sources.join(', ')})`] : [];
  });
  if (!hooks.length && !mcp.length) return undefined;
  const parts = [hooks.length ? `hooks for ${hooks.join(', ')}` : '', mcp.length ? `MCP servers ${mcp.join(', ')}` : ''].filter(Boolean);
  return `this repository's settings run ${parts.join(' and ')} on your machine without asking; read them first in a repository you do not trust`;
}
