// What a team session is opened from, resolved from the settings files, the environment and the
// command line (runtime/settings: one schema, each value with where it came from): the workspace,
// where the team's state lives (a StoreBackend), the model client, the permission mode, the
// budgets, MCP servers, hooks, verify gates. The start-up checks every face shares are here,
// written once; a failed check is a StartupError: one line for the person, exit code 2.
import { existsSync, statSync } from 'node:fs';
import { ConfigError, MISSING_KEY_MESSAGE, hasCredentials, type HuddleConfig } from '../runtime/config.js';
import { ModelClient, ModelError, modelClientOptions, type ModelBackend } from '../runtime/model/model-client.js';
import type { SpawnLike } from '../runtime/process/spawn.js';
import { configureSandbox, sandboxStatus } from '../runtime/sandbox/index.js';
import { SANDBOX_OFF_SOURCE } from '../runtime/sandbox/status.js';
import { sandboxSpawnLike } from '../runtime/sandbox/spawn-like.js';
import { SettingsError } from '../runtime/settings/errors.js';
import type { LoadedSettings } from '../runtime/settings/load.js';
import type { UntrustedFile } from '../runtime/settings/trust.js';
import path from 'node:path';
import { resolveSettingsConfig } from '../runtime/settings/to-config.js';
import { fileBackend } from '../runtime/store/file/file-store.js';
import { parseTeamUrl } from '../runtime/store/team-url.js';
import { registerSecret } from '../runtime/secrets.js';
import { StoreError, type StoreBackend } from '../runtime/store/team-store.js';
import { Workspace } from '../runtime/workspace/workspace.js';
import type { CliOptions } from './cli-options.js';

/** A start-up check failed: `message` is one line for the person; the face exits with `exitCode`. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface SessionSettings {
  config: HuddleConfig;
  workspace: Workspace;
  /** Where the team's shared state lives: the workspace's files unless a face says otherwise. */
  backend: StoreBackend;
  model: ModelBackend;
  /** Strings never written anywhere (logs, screen, files agents read): the API key, the token. */
  secrets: string[];
  /** No credentials: the console still opens (every model call says what to set). */
  keyMissing: boolean;
  /** `huddle demo`: a scripted model in a throwaway workspace. */
  demo: boolean;
  /**
   * The merged settings with where each value came from (`/config`), and the warnings of loading
   * them (deprecated files). Absent: a session opened from a bare config (tests), with no MCP
   * servers, hooks, verify gates or role overrides.
   */
  loaded?: LoadedSettings;
  /** How hooks, verify commands and stdio MCP servers are started (the sandbox's spawn, once it exists). */
  spawn?: SpawnLike;
  /** The user's home, for ~/.claude/CLAUDE.md (default: os.homedir()); tests point it at a temp dir. */
  home?: string;
  /** Commands run unsandboxed: why, in one line for the status bar (absent: sandboxed). */
  sandboxOff?: { line: string; onPurpose: boolean };
}

/**
 * How a face starts: headless refuses what the console tolerates. Broken settings (a settings
 * file, .mcp.json, .team/budget.json) are refused by every face: a file that holds the team's
 * guard hooks must never be skipped silently.
 */
export interface FaceRules {
  /** Without credentials: refuse (headless) or open with a model client that says what to set (console). */
  missingKey: 'refuse' | 'explain';
  /**
   * Workspace settings that widen trust and wait for the person (docs/trust.md): refuse the run
   * (headless, worker: nobody to ask) or open without them (the console, which asks; huddle mcp,
   * which serves a run that already decided). Default refuse.
   */
  untrusted?: 'refuse' | 'ignore';
}

/** Without a key the console still opens; every model call says what to set. */
class NoKeyBackend implements ModelBackend {
  async call(): Promise<never> {
    throw new ModelError(MISSING_KEY_MESSAGE.replace(/^huddle: /, ''), undefined);
  }
}

/** The settings of a session from the command line; throws StartupError when a check fails. */
export async function resolveSettings(options: CliOptions, rules: FaceRules, env: NodeJS.ProcessEnv = process.env): Promise<SessionSettings> {
  const demo = options.command === 'demo';
  let cwd = options.cwd;
  if (demo) {
    const { createDemoWorkspace } = await import('../agents/demo/demo-workspace.js');
    cwd = (await createDemoWorkspace()).dir;
  }
  let config: HuddleConfig;
  let loaded: LoadedSettings;
  try {
    const flags = {
      model: options.model,
      maxTurns: options.maxTurns,
      permissionMode: options.permissionMode,
      budget: options.budget,
      team: options.team,
      disallowedTools: options.disallowedTools,
      mcpConfig: options.mcpConfig,
      runChoices: options.runChoices,
    };
    ({ config, loaded } = resolveSettingsConfig({
      cwd: cwd ?? process.cwd(),
      env,
      flags,
      apiKeyFile: options.apiKeyFile,
      ...(options.trust ? { trust: true } : {}),
      ...(options.settings ? { claudeSettings: options.settings } : {}),
      ...(options.settingSources ? { sources: options.settingSources } : {}),
      ...(options.strictMcpConfig ? { strictMcp: true } : {}),
    }));
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SettingsError) throw new StartupError(error.message);
    throw error;
  }
  // Claude Code's flags that shape the run (docs/contract.md#claude-code-flags): the lead's instructions, allowed commands.
  if (options.systemPrompt || options.appendSystemPrompt) config.leadInstructions = { replace: options.systemPrompt, append: options.appendSystemPrompt };
  if (options.allowedCommands?.length) config.allowedCommands = options.allowedCommands;
  if (options.fallbackModel) config.fallbackModel = options.fallbackModel;
  if (loaded.untrusted.length && (rules.untrusted ?? 'refuse') === 'refuse') throw new StartupError(untrustedMessage(loaded.untrusted, env));
  const keyMissing = !demo && !hasCredentials(config);
  if (keyMissing && rules.missingKey === 'refuse') throw new StartupError(MISSING_KEY_MESSAGE.replace(/^huddle: /, ''));
  if (!existsSync(config.cwd) || !statSync(config.cwd).isDirectory()) throw new StartupError(`workspace ${config.cwd} is not a directory`);
  const workspace = new Workspace(config.cwd);
  const team = loaded.settings.team;
  const backend = team ? await postgresTeam(team, workspace, loaded.settings) : fileBackend(workspace);
  // The team URL's credentials are secrets too: redacted from tool results, logs and the screen.
  const teamSecrets = team ? await teamUrlSecrets(team, env) : [];
  for (const secret of teamSecrets) registerSecret(secret);
  const spawn = sandboxFromSettings(loaded, env);
  const sandbox = sandboxStatus(env);
  return {
    config,
    workspace,
    backend,
    model: demo ? await demoModel(config, env) : keyMissing ? new NoKeyBackend() : new ModelClient(modelClientOptions(config)),
    // The team URL's password is a secret too: never in a log, a transcript or on screen.
    secrets: [config.apiKey, config.authToken, ...teamSecrets].filter((s): s is string => Boolean(s)),
    keyMissing,
    demo,
    loaded,
    ...(spawn ? { spawn } : {}),
    ...(sandbox.available ? {} : { sandboxOff: { line: sandbox.line, onPurpose: sandbox.onPurpose } }),
  };
}

/**
 * The settings' `sandbox` section applied to the sandbox of this process, and the spawn hooks,
 * verify commands and stdio MCP servers start through: the sandbox's own where the machine can
 * sandbox (docs/contract.md#sandbox), else none (they run as they are, and the bash tool says so).
 */
function sandboxFromSettings(loaded: LoadedSettings, env: NodeJS.ProcessEnv): SpawnLike | undefined {
  const sandbox = loaded.settings.sandbox;
  // A file turning the sandbox off is overruled by HUDDLE_SANDBOX in the environment (settings order);
  // the messages name the file, not a variable nobody set.
  if (sandbox?.enabled === false && env.HUDDLE_SANDBOX === undefined) {
    env.HUDDLE_SANDBOX = 'off';
    env[SANDBOX_OFF_SOURCE] = loaded.provenance.get('sandbox.enabled')?.at(-1) ?? 'settings';
  }
  configureSandbox({
    ...(sandbox?.network ? { network: { ...sandbox.network } } : {}),
    ...(sandbox?.writablePaths || sandbox?.caches ? { writable: [...(sandbox.writablePaths ?? []), ...(sandbox.caches ?? [])] } : {}),
    // Caches named in the settings are the person's own: share them rather than huddle's private ones.
    ...(sandbox?.caches?.length ? { hostCaches: true } : {}),
    ...(sandbox?.hidden?.length ? { hidden: [...sandbox.hidden] } : {}),
  });
  if (!sandboxStatus(env).available) return undefined;
  return sandboxSpawnLike({ rootsFor: (cwd) => new Workspace(cwd).sandboxRoots() });
}

/** The one line a run refused for untrusted workspace settings says: which, and the three ways on. */
export function untrustedMessage(untrusted: UntrustedFile[], env: NodeJS.ProcessEnv = process.env): string {
  const files = untrusted.map((u) => `${u.file} (${u.settings.join(', ')})`);
  const listed = files.length === 1 ? files[0]! : `${files.slice(0, -1).join(', ')} and ${files.at(-1)!}`;
  const user = env.XDG_CONFIG_HOME?.trim() ? path.join(env.XDG_CONFIG_HOME, 'huddle', 'settings.json') : '~/.config/huddle/settings.json';
  return (
    `${listed} ${files.length === 1 ? 'asks' : 'ask'} for what only you can allow, and you have not trusted ${files.length === 1 ? 'it' : 'them'} in this workspace: ` +
    `run with --trust to trust ${files.length === 1 ? 'it' : 'them'} as ${files.length === 1 ? 'it is' : 'they are'} (recorded), review with 'huddle trust', or move ${files.length === 1 ? 'it' : 'them'} to ${user}`
  );
}

/**
 * The team's backend on PostgreSQL; a URL that is no team URL is one line (exit 2). Loaded only for a team on
 * PostgreSQL: a run on the workspace's files never loads node-postgres.
 */
async function postgresTeam(url: string, workspace: Workspace, settings: LoadedSettings['settings']): Promise<StoreBackend> {
  const { postgresBackend } = await import('../runtime/store/postgres/pg-store.js');
  const leaseMs = settings.timeouts?.leaseMs;
  const { pollSeconds, poolSize, pooler } = settings.postgres ?? {};
  const { retentionDays } = settings;
  try {
    return postgresBackend(url, workspace, {
      ...(leaseMs ? { leaseMs } : {}),
      ...(pollSeconds ? { pollMs: pollSeconds * 1_000 } : {}),
      ...(poolSize ? { poolSize } : {}),
      ...(pooler ? { pooler } : {}),
      ...(retentionDays !== undefined ? { retentionDays } : {}),
    });
  } catch (error) {
    if (error instanceof StoreError) throw new StartupError(error.message);
    throw error;
  }
}

/** The URL's own credentials, and the passwords PGPASSWORD and the password file hold for its database. */
async function teamUrlSecrets(url: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { teamPasswords } = await import('../runtime/store/postgres/pg-passwords.js');
  try {
    const parsed = parseTeamUrl(url, 'team');
    return [...new Set([...parsed.secrets, ...teamPasswords(parsed.connectionString, env)])];
  } catch {
    return [];
  }
}

/** `huddle demo`: the built-in scripted team. HUDDLE_DEMO_SPEED=10 plays it ten times faster (tests, the impatient). */
async function demoModel(config: HuddleConfig, env: NodeJS.ProcessEnv): Promise<ModelBackend> {
  const { ScriptedDemoBackend, DEFAULT_DEMO_PACE, DEFAULT_THINK_MS, DEMO_MODEL } = await import('../agents/demo/scripted-backend.js');
  const speed = Math.max(1, Number(env.HUDDLE_DEMO_SPEED) || 1);
  config.model = DEMO_MODEL;
  // The scripted team runs its tests with bash in a throwaway directory: no questions, unless asked for.
  config.permissionMode ??= 'auto';
  return new ScriptedDemoBackend({
    pace: { charsPerChunk: DEFAULT_DEMO_PACE.charsPerChunk * speed, chunkDelayMs: DEFAULT_DEMO_PACE.chunkDelayMs },
    thinkMs: DEFAULT_THINK_MS / speed,
  });
}
