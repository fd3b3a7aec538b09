// Everything an external teammate is started with, made in one place from the team's parts: its
// program (launch.ts), its environment (huddle's secrets removed; the model endpoint and key only
// as that CLI's own variables), huddle's MCP server acting as it, its instructions, its
// permission mode.
import type { HuddleConfig } from '../../runtime/config.js';
import type { PermissionGate } from '../../runtime/permissions/guarded-tools.js';
import { childEnvironment, type SpawnLike } from '../../runtime/process/spawn.js';
import type { Identity } from '../prompts.js';
import type { ExternalSetup } from './external-teammate.js';
import { externalInstructions } from './instructions.js';
import { ExternalAgentError, type AgentKind, type LaunchSpec } from './launch.js';

export interface SetupOptions {
  kind: AgentKind;
  launch: LaunchSpec;
  identity: Identity;
  model: string | undefined;
  /** Where it works: the workspace, or its worktree. */
  cwd: string;
  workspaceRoot: string;
  roleBody?: string | undefined;
  worktreeNote?: string | undefined;
  planMode: boolean;
  config: HuddleConfig;
  permissions: PermissionGate;
  session?: string | undefined;
  spawn?: SpawnLike | undefined;
  answerShutdown(requestId: string): Promise<void>;
  env?: NodeJS.ProcessEnv;
}

/** How long a program gets to end after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 3000;

export function externalSetup(options: SetupOptions): ExternalSetup {
  const { kind, launch, identity, config } = options;
  const env = childEnvironment({ ...modelVariables(kind, config), ...launch.env, HUDDLE_AGENT: identity.name, HUDDLE_WORKSPACE: options.workspaceRoot }, options.env);
  return {
    kind,
    permissions: options.permissions,
    spawn: options.spawn,
    answerShutdown: options.answerShutdown,
    driver: {
      name: identity.name,
      cwd: options.cwd,
      command: launch.command,
      args: launch.args,
      env,
      model: options.model,
      instructions: externalInstructions({
        identity,
        kind,
        cwd: options.cwd,
        workspaceRoot: options.workspaceRoot,
        roleBody: options.roleBody,
        worktreeNote: options.worktreeNote,
        planMode: options.planMode,
      }),
      // A program in a terminal calls no tools: it needs no MCP server.
      mcp: kind === 'command' ? { command: '', args: [] } : huddleMcpCommand(identity.name, options.workspaceRoot, options.env),
      permissionMode: options.permissions.modeOf(identity.name),
      session: options.session,
      killGraceMs: KILL_GRACE_MS,
    },
  };
}

/** The model endpoint and key reach Claude Code as its own variables, and nothing else of huddle's. */
function modelVariables(kind: AgentKind, config: HuddleConfig): Record<string, string> {
  if (kind !== 'claude-code') return {};
  const vars: Record<string, string> = {};
  if (config.apiKey) vars.ANTHROPIC_API_KEY = config.apiKey;
  else if (config.authToken) vars.ANTHROPIC_AUTH_TOKEN = config.authToken;
  if (config.baseURL) vars.ANTHROPIC_BASE_URL = config.baseURL;
  return vars;
}

/**
 * `huddle mcp --as NAME --cwd ROOT` as a command: this very huddle (the Node that runs it and its
 * cli.js), so the server speaks the same store format. HUDDLE_CLI names cli.js where huddle runs
 * embedded (tests driving the team in-process).
 */
export function huddleMcpCommand(name: string, workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  const cli = env.HUDDLE_CLI ?? (/cli\.m?js$/.test(process.argv[1] ?? '') ? process.argv[1] : undefined);
  if (!cli) throw new ExternalAgentError('cannot tell where huddle\'s cli.js is for its MCP server; set HUDDLE_CLI to its path');
  return { command: process.execPath, args: [cli, 'mcp', '--as', name, '--cwd', workspaceRoot] };
}
