// Today's HuddleConfig (src/runtime/config.ts) derived from the settings, so that moving the team,
// the console and headless runs onto settings is a swap of one call. Credentials are not settings:
// they still come from the environment and --api-key-file, exactly as resolveConfig reads them.
import path from 'node:path';
import { BUDGET_KINDS, emptySettings, type BudgetLimits, type BudgetSettings } from '../budget/budget.js';
import { resolveConfig, type HuddleConfig } from '../config.js';
import { registerEnvSecrets, registerSecret } from '../secrets.js';
import { loadSettings, type LoadedSettings, type LoadSettingsOptions } from './load.js';
import type { Settings } from './schema.js';

const CREDENTIAL_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_CUSTOM_HEADERS'] as const;

export interface ConfigFromSettingsOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  apiKeyFile?: string | undefined;
}

/** HuddleConfig plus what settings add that HuddleConfig does not hold yet. */
export interface SettingsConfig extends HuddleConfig {
  /** A response stream silent this long counts as cut (docs/contract.md#command-line, HUDDLE_STREAM_IDLE_MS). */
  streamIdleMs: number;
}

export function configFromSettings(settings: Settings, options: ConfigFromSettingsOptions): SettingsConfig {
  const env = options.env ?? process.env;
  const credentials: NodeJS.ProcessEnv = {};
  for (const name of CREDENTIAL_VARIABLES) if (env[name] !== undefined) credentials[name] = env[name];
  // resolveConfig with nothing but credentials: its key handling (and its errors) stay the one truth.
  const base = resolveConfig({ cwd: options.cwd, apiKeyFile: options.apiKeyFile }, credentials);
  registerEnvSecrets(env); // the tokens of the whole environment, not only the model's credentials
  registerSecret(settings.notifications?.webhook?.url); // a webhook URL is its own token: scrubbed wherever it would be written
  const team = budgetSettingsFrom(settings).team;
  return {
    ...base,
    cwd: path.resolve(options.cwd),
    model: settings.model ?? base.model,
    maxTokens: settings.maxTokens ?? base.maxTokens,
    maxTurns: settings.maxTurns ?? base.maxTurns,
    maxRetries: settings.retries?.max ?? base.maxRetries,
    retryBaseMs: settings.retries?.baseMs ?? base.retryBaseMs,
    maxConcurrentCalls: settings.maxConcurrentCalls ?? base.maxConcurrentCalls,
    freshContextPerTask: settings.freshContextPerTask ?? base.freshContextPerTask,
    leadCoalesceMs: settings.timeouts?.leadCoalesceMs ?? base.leadCoalesceMs,
    cacheWarmupMs: settings.timeouts?.cacheWarmupMs ?? base.cacheWarmupMs,
    requestTimeoutMs: settings.timeouts?.requestMs ?? base.requestTimeoutMs,
    idleTimeoutMs: settings.timeouts?.idleMs ?? base.idleTimeoutMs,
    stallMs: settings.timeouts?.stallMs ?? base.stallMs,
    streamIdleMs: settings.timeouts?.streamIdleMs ?? 60_000,
    planApproval: settings.plans?.approver ?? settings.planApproval ?? base.planApproval,
    planAutoApproveMinutes: settings.plans?.autoApproveMinutes ?? base.planAutoApproveMinutes,
    worktrees: settings.worktrees ?? base.worktrees,
    reviewMaxRounds: settings.reviewMaxRounds ?? base.reviewMaxRounds,
    trimAt: settings.context?.trimAt ?? base.trimAt,
    trimKeepTurns: settings.context?.trimKeepTurns ?? base.trimKeepTurns,
    compactAt: settings.context?.compactAt ?? base.compactAt,
    permissionMode: settings.permissionMode,
    ...(Object.keys(team).length ? { budget: team } : {}),
  };
}

/** The budget module's settings (what `.team/budget.json` used to give Budget) from the merged settings. */
export function budgetSettingsFrom(settings: Settings): BudgetSettings {
  const out = emptySettings();
  const budget = settings.budget;
  if (!budget) return out;
  out.team = limits(budget.team);
  out.step = limits(budget.step);
  for (const [name, agentLimits] of Object.entries(budget.agents ?? {})) out.agents[name] = limits(agentLimits);
  if (budget.soft !== undefined) out.soft = budget.soft;
  return out;
}

function limits(value: Partial<Record<string, number | undefined>> | undefined): BudgetLimits {
  const out: BudgetLimits = {};
  for (const kind of BUDGET_KINDS) if (value?.[kind] !== undefined) out[kind] = value[kind];
  return out;
}

/** The drop-in for resolveConfig: same flags, settings files in between. Throws SettingsError or ConfigError. */
export function resolveSettingsConfig(options: LoadSettingsOptions & { apiKeyFile?: string | undefined }): { config: SettingsConfig; loaded: LoadedSettings } {
  const loaded = loadSettings(options);
  // The settings' `env` (Claude Code's key) is the session's environment: its commands, hooks and servers inherit it.
  const env = options.env ?? process.env;
  for (const [name, value] of Object.entries(loaded.settings.env ?? {})) env[name] = value;
  const config = configFromSettings(loaded.settings, { cwd: options.cwd, env, apiKeyFile: options.apiKeyFile });
  return { config, loaded };
}
