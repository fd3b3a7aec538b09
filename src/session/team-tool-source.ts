// The team's tools for an agent outside huddle's own loop (`huddle mcp --as NAME`, docs/contract.md#tools), as a
// source the MCP face serves: through a teammate's channel to the live huddle (agents/external/agent-channel.ts),
// which runs each tool as that teammate; or over the team's store, opened to join, with the lifecycle answers
// that need the live team forwarded to its control socket. The face speaks MCP; this knows the team.
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
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
import { Workspace } from '../runtime/workspace/workspace.js';
import { controlRequest, NoLiveHuddleError } from './control-endpoint.js';
import { whyNotPerson } from './person-key.js';
import { resolveSettings } from './settings.js';

/** What the server serves, however it does. */
export interface ToolSource {
  definitions(): Promise<ToolDefinitionParam[]>;
  call(name: string, input: unknown, signal: AbortSignal): Promise<ToolResult>;
  close(): Promise<void>;
}

export interface StoreSourceOptions {
  /** The teammate the tools act as (on the roster). */
  as: string;
  cwd: string | undefined;
  /** --team URL: the team on PostgreSQL (else the settings' or HUDDLE_TEAM_URL's, else the files). */
  team?: string | undefined;
}

/** Through the teammate's channel: the live huddle runs every tool as this teammate. */
export async function channelSource(socket: string, as: string): Promise<ToolSource> {
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

/** Over the workspace's store (joined), as a person runs it by hand; `refused`: one line saying why not. */
export async function storeSource(options: StoreSourceOptions): Promise<ToolSource | { refused: string }> {
  const root = path.resolve(options.cwd ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) return refuse(`workspace ${root} is not a directory`);
  const workspace = new Workspace(root);
  const notPerson = whyNotPerson(workspace.teamDir);
  if (notPerson) return refuse(`--as ${options.as} over the team's store acts for the person, and ${notPerson}`);
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
    return refuse(error instanceof Error ? error.message : String(error));
  }
  if (!store.roster.get(options.as)) {
    const names = store.roster.names();
    await store.close('huddle mcp refused the name');
    return refuse(
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

function refuse(refused: string): { refused: string } {
  return { refused };
}
