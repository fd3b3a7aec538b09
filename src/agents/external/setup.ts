// Everything an external teammate is started with, made in one place from the team's parts: its
// program (launch.ts), its environment (huddle's secrets removed; for Claude Code the model
// endpoint as huddle's relay and a stand-in key, as its own variables: model-relay.ts; its CLI's
// config in a private directory of its own), huddle's MCP server acting as it through its
// channel, its instructions, its permission mode, and the sandbox it all runs in
// (external-sandbox.ts).
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { HuddleConfig } from '../../runtime/config.js';
import type { PermissionGate } from '../../runtime/permissions/permission-gate.js';
import { childEnvironment } from '../../runtime/process/spawn.js';
import { agentSocketPath, agentStateDir, sandboxStatus } from '../../runtime/sandbox/index.js';
import type { Workspace } from '../../runtime/workspace/workspace.js';
import type { Identity } from '../prompts/prompts.js';
import type { AgentChannel } from './agent-channel.js';
import { externalSandbox } from './external-sandbox.js';
import { ModelGrant } from './model-relay.js';
import type { ExternalSetup } from './external-teammate.js';
import { externalInstructions } from './instructions.js';
import { huddleEntry } from '../../runtime/process/huddle-entry.js';
import { ExternalAgentError, type AgentKind, type LaunchSpec } from './launch.js';

export interface SetupOptions {
  kind: AgentKind;
  launch: LaunchSpec;
  identity: Identity;
  model: string | undefined;
  /** Where it works: the team's workspace, or its own checkout (its sandbox roots say what it may write). */
  workspace: Workspace;
  workspaceRoot: string;
  roleBody?: string | undefined;
  worktreeNote?: string | undefined;
  planMode: boolean;
  config: HuddleConfig;
  permissions: PermissionGate;
  session?: string | undefined;
  /** Its way into the team (none for a program in a PTY, which calls no tools). */
  channel?: AgentChannel | undefined;
  answerShutdown(requestId: string): Promise<void>;
  env?: NodeJS.ProcessEnv;
}

/** The CLIs that speak Anthropic's API with a key from their environment: huddle's relay can serve them. */
const RELAYED = new Set<AgentKind>(['claude-code', 'opencode']);

/** How long a program gets to end after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 3000;

export function externalSetup(options: SetupOptions): ExternalSetup {
  const { kind, launch, identity, config } = options;
  const cwd = options.workspace.root;
  // Its CLI's own config and sessions: private to this teammate of this workspace, kept across runs.
  const configDir = kind === 'command' ? undefined : agentStateDir(options.workspaceRoot, identity.name, kind, options.env);
  // Claude Code and OpenCode reach huddle's model endpoint through the relay, with a stand-in key: the
  // real one never enters their sandbox. A key or token of their own in `agents.<kind>.env` is the person's choice.
  const ownKey = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].some((name) => launch.env[name] !== undefined);
  const model =
    RELAYED.has(kind) && !ownKey && (config.apiKey || config.authToken)
      ? new ModelGrant({ apiKey: config.apiKey, authToken: config.authToken, baseURL: launch.env.ANTHROPIC_BASE_URL ?? config.baseURL })
      : undefined;
  const env = childEnvironment(
    {
      ...(kind === 'claude-code' && !model ? modelVariables(config) : {}),
      ...providerKeys(kind, options.env ?? process.env),
      ...launch.env,
      ...configVariables(kind, configDir),
      HUDDLE_AGENT: identity.name,
      HUDDLE_WORKSPACE: options.workspaceRoot,
    },
    options.env,
  );
  // A program in a terminal calls no tools: it needs no MCP server.
  const mcp =
    kind === 'command' || !options.channel
      ? { command: '', args: [] }
      : huddleMcpCommand(identity.name, options.workspaceRoot, agentSocketPath(options.channel.socket), options.env);
  const sandbox = externalSandbox({
    owner: identity.name,
    workspace: options.workspace,
    readOnly: () => options.permissions.modeOf(identity.name) === 'plan',
    configDir,
    channel: options.channel,
    model,
    programs: [launch.command, mcp.command, mcp.args[0] ?? ''],
    libraries: packageLibraries(launch.command),
  });
  return {
    kind,
    permissions: options.permissions,
    spawn: sandbox.spawn,
    commandLine: sandbox.commandLine,
    channel: options.channel,
    model,
    answerShutdown: options.answerShutdown,
    driver: {
      name: identity.name,
      cwd,
      command: launch.command,
      args: launch.args,
      env,
      // OpenCode on huddle's endpoint uses huddle's model unless the spawn names one.
      model: options.model ?? (kind === 'opencode' && model ? config.model : undefined),
      modelRelayKey: model?.keyVariable,
      instructions: externalInstructions({
        identity,
        kind,
        cwd,
        workspaceRoot: options.workspaceRoot,
        roleBody: options.roleBody,
        worktreeNote: options.worktreeNote,
        planMode: options.planMode,
      }),
      mcp,
      configDir,
      sandboxed: () => sandboxStatus().available,
      permissionMode: options.permissions.modeOf(identity.name),
      session: options.session,
      killGraceMs: KILL_GRACE_MS,
    },
  };
}

/** Without the relay (no key of huddle's to hide, or one of the person's own): the endpoint as before. */
function modelVariables(config: HuddleConfig): Record<string, string> {
  return config.baseURL ? { ANTHROPIC_BASE_URL: config.baseURL } : {};
}

/**
 * The CLI's own provider key, passed on by name: credential-named variables reach no program huddle
 * starts (docs/trust.md#secrets-and-files), but Gemini CLI and Codex talk to their provider with the
 * person's key (no relay stands in for it yet). huddle's own key is never among them.
 */
const PROVIDER_KEYS: Partial<Record<AgentKind, readonly string[]>> = {
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
};

function providerKeys(kind: AgentKind, env: NodeJS.ProcessEnv): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const name of PROVIDER_KEYS[kind] ?? []) if (env[name]) keys[name] = env[name];
  return keys;
}

/**
 * Where each CLI keeps its config, sessions and credentials, pointed at the teammate's private
 * directory (the person's own ~/.claude, ~/.gemini, ~/.codex are hidden from the sandbox). These
 * win over the same variables in the settings' `agents.<kind>.env`.
 */
function configVariables(kind: AgentKind, dir: string | undefined): Record<string, string> {
  if (!dir) return {};
  switch (kind) {
    case 'claude-code':
      return { CLAUDE_CONFIG_DIR: dir };
    case 'gemini':
      // Gemini keeps everything in $GEMINI_CLI_HOME/.gemini.
      return { GEMINI_CLI_HOME: dir };
    case 'codex':
      return { CODEX_HOME: dir };
    case 'opencode':
      // OpenCode keeps its config, sessions (a database), logs and credentials in the XDG directories.
      return { XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data'), XDG_STATE_HOME: path.join(dir, 'state') };
    case 'command':
      return {};
  }
}

/**
 * `huddle mcp --as NAME --cwd ROOT --socket PATH` as a command: this very huddle (the Node that
 * runs it and its cli.js), working through the teammate's channel at PATH (the path its sandbox
 * shows it at). HUDDLE_CLI names cli.js where huddle runs embedded (tests driving the team
 * in-process); otherwise the bundle's own entry, wherever it is installed (huddle-entry.ts).
 */
export function huddleMcpCommand(
  name: string,
  workspaceRoot: string,
  socket: string,
  env: NodeJS.ProcessEnv = process.env,
): { command: string; args: string[] } {
  return { command: process.execPath, args: [huddleCliPath(env), 'mcp', '--as', name, '--cwd', workspaceRoot, '--socket', socket] };
}

/** huddle's own cli.js, for its MCP server; checked before a teammate is recorded, so a failed spawn leaves no member. */
export function huddleCliPath(env: NodeJS.ProcessEnv = process.env): string {
  const cli = env.HUDDLE_CLI ?? huddleEntry();
  if (!cli) throw new ExternalAgentError("cannot tell where huddle's cli.js is for its MCP server; set HUDDLE_CLI to its path");
  return path.resolve(cli);
}

/**
 * An npm-installed CLI's program is a link into its package, which loads its platform package
 * beside it (codex): the node_modules directory that holds them, for a checkout under the temp dir.
 */
function packageLibraries(command: string): string[] {
  let real: string;
  try {
    real = realpathSync(command);
  } catch {
    return [];
  }
  const at = real.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return at < 0 ? [] : [real.slice(0, at + `${path.sep}node_modules`.length)];
}
