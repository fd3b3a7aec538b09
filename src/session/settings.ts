// What a team session is opened from, resolved from the command line and the environment: the
// workspace, where the team's state lives (a StoreBackend), the model client, the permission mode
// and the budgets. The start-up checks every face shares are here, written once; a failed check
// is a StartupError: one line for the person, exit code 2.
import { existsSync, statSync } from 'node:fs';
import { ConfigError, MISSING_KEY_MESSAGE, hasCredentials, resolveConfig, type HuddleConfig } from '../runtime/config.js';
import { BudgetConfigError, loadBudgetSettings } from '../runtime/budget/budget.js';
import { ModelClient, ModelError, modelClientOptions, type ModelBackend } from '../runtime/model/model-client.js';
import { fileBackend } from '../runtime/store/file/file-store.js';
import type { StoreBackend } from '../runtime/store/team-store.js';
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
}

/** How a face starts: headless refuses what the console tolerates, and the console can ask. */
export interface FaceRules {
  /** Without credentials: refuse (headless) or open with a model client that says what to set (console). */
  missingKey: 'refuse' | 'explain';
  /** A broken .team/budget.json: refuse (headless), or warn and use the --budget-* flags alone (console). */
  brokenBudgetFile: 'refuse' | 'warn';
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
  try {
    config = resolveConfig({ cwd, model: options.model, apiKeyFile: options.apiKeyFile, maxTurns: options.maxTurns, permissionMode: options.permissionMode }, env);
  } catch (error) {
    if (error instanceof ConfigError) throw new StartupError(error.message);
    throw error;
  }
  config.budget = options.budget; // --budget-* flags: the team's limits (runtime/budget)
  const keyMissing = !demo && !hasCredentials(config);
  if (keyMissing && rules.missingKey === 'refuse') throw new StartupError(MISSING_KEY_MESSAGE.replace(/^huddle: /, ''));
  if (!existsSync(config.cwd) || !statSync(config.cwd).isDirectory()) throw new StartupError(`workspace ${config.cwd} is not a directory`);
  const workspace = new Workspace(config.cwd);
  if (rules.brokenBudgetFile === 'refuse') {
    try {
      loadBudgetSettings(workspace.teamDir, config.budget);
    } catch (error) {
      if (error instanceof BudgetConfigError) throw new StartupError(error.message);
      throw error;
    }
  }
  return {
    config,
    workspace,
    backend: fileBackend(workspace),
    model: demo ? await demoModel(config, env) : keyMissing ? new NoKeyBackend() : new ModelClient(modelClientOptions(config)),
    secrets: [config.apiKey, config.authToken].filter((s): s is string => Boolean(s)),
    keyMissing,
    demo,
  };
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
