// Resolves huddle's settings from flags and the environment (docs/contract.md#command-line).
// Flags win over environment variables, which win over defaults.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from './permissions/permission-mode.js';
import type { BudgetLimits } from './budget/budget.js';
import { customHeaders } from './custom-headers.js';
import { registerEnvSecrets, registerSecret, registerSecretFile } from './secrets.js';

export const DEFAULT_MODEL = 'claude-sonnet-4-6';

export interface HuddleConfig {
  cwd: string;
  apiKey: string | undefined;
  /** Where the key came from, for messages (never the key itself). */
  apiKeySource: 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN' | '--api-key-file' | undefined;
  /** With --api-key-file: the file's path (shown by /config; never its content). */
  apiKeyFile?: string | undefined;
  /** Sent as a bearer token instead of an API key (ANTHROPIC_AUTH_TOKEN, as the SDK does). */
  authToken: string | undefined;
  baseURL: string | undefined;
  model: string;
  maxTokens: number;
  /** Model calls one agent may make for one user turn before the turn is stopped. */
  maxTurns: number;
  maxRetries: number;
  retryBaseMs: number;
  /** The lead reads reports once its inbox has been quiet this long (HUDDLE_LEAD_COALESCE_MS, default 1000; 0: at once). */
  leadCoalesceMs?: number;
  /** A call waits at most this long for a sibling's call to write the prompt-cache prefix they share (HUDDLE_CACHE_WARMUP_MS, default 10000; 0: never). */
  cacheWarmupMs?: number;
  /** A teammate starts each task it takes from the board from a fresh context (HUDDLE_FRESH_CONTEXT_PER_TASK, default on). */
  freshContextPerTask?: boolean;
  /** Model calls in flight at once for the whole team (HUDDLE_MAX_CONCURRENT_CALLS, default 8; 0: no cap). */
  maxConcurrentCalls?: number;
  requestTimeoutMs: number;
  /** A response stream with no event for this long counts as cut and is retried (HUDDLE_STREAM_IDLE_MS, default 60 s). */
  streamIdleMs?: number;
  idleTimeoutMs: number;
  /** A working agent with no event for this long is interrupted by the stall watchdog (HUDDLE_STALL_MS, default 10 min; 0: off). */
  stallMs?: number;
  /** Who decides plan-mode teammates' plans: the lead (default), the person (needs-you queue, huddle approve), or the person with a timer (docs/headless.md#plan-approval). */
  planApproval?: 'lead' | 'person' | 'auto-after';
  /** auto-after: minutes a plan waits for the person before huddle approves it (plans.autoApproveMinutes, default 30). */
  planAutoApproveMinutes?: number;
  /** Teammates get their own git worktree unless a spawn says otherwise (HUDDLE_WORKTREES=1). */
  worktrees?: boolean;
  /** Times a reviewer may send a task back for changes before the lead is asked to decide (default 3). */
  reviewMaxRounds?: number;
  /** Fraction of the context window above which old tool results are cut to stubs (HUDDLE_TRIM_AT, default 0.6; 0: never). */
  trimAt?: number;
  /** Tool results of this many latest assistant turns are never cut (HUDDLE_TRIM_KEEP_TURNS, default 3). */
  trimKeepTurns?: number;
  /** Fraction of the context window at which the transcript is summarised and replaced (HUDDLE_COMPACT_AT, default 0.8; 0: never). */
  compactAt?: number;
  /** --permission-mode / HUDDLE_PERMISSION_MODE; undefined: ask in the console, auto headless. */
  permissionMode?: PermissionMode | undefined;
  /** --system-prompt replaces the lead's instructions; --append-system-prompt adds to them (a caller's, e.g. the Agent SDK's). */
  leadInstructions?: { replace?: string; append?: string };
  /** --allowedTools 'Bash(git *)': command prefixes allowed without a question for this run, beside the stored allow-list. */
  allowedCommands?: string[];
  /** --fallback-model: the model calls switch to once the configured one stays overloaded (529) after every retry. */
  fallbackModel?: string;
  /** Team budget from --budget-usd/--budget-minutes/--budget-turns (over .team/budget.json's "team"). */
  budget?: BudgetLimits;
}

export interface ConfigFlags {
  cwd?: string;
  model?: string;
  apiKeyFile?: string;
  maxTurns?: number;
  permissionMode?: string | undefined;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function resolveConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): HuddleConfig {
  const cwd = path.resolve(flags.cwd ?? process.cwd());
  let apiKey: string | undefined;
  let authToken: string | undefined;
  let apiKeySource: HuddleConfig['apiKeySource'];
  if (flags.apiKeyFile) {
    apiKey = readKeyFile(flags.apiKeyFile);
    apiKeySource = '--api-key-file';
    registerSecretFile(path.resolve(flags.apiKeyFile)); // sandboxed commands never read it
  } else if (env.ANTHROPIC_API_KEY) {
    apiKey = env.ANTHROPIC_API_KEY.trim();
    apiKeySource = 'ANTHROPIC_API_KEY';
  } else if (env.ANTHROPIC_AUTH_TOKEN) {
    authToken = env.ANTHROPIC_AUTH_TOKEN.trim();
    apiKeySource = 'ANTHROPIC_AUTH_TOKEN';
  }
  // Redacted from every tool result, log and output from now on, in any spelling.
  registerSecret(apiKey);
  registerSecret(authToken);
  // A gateway's headers often carry its credential: their values are treated as one.
  for (const value of Object.values(customHeaders(env))) registerSecret(value);
  // So may the gateway's address: a password in it, or a token in its query.
  for (const value of urlCredentials(env.ANTHROPIC_BASE_URL)) registerSecret(value);
  // PGPASSWORD, GH_TOKEN and every *_TOKEN/*_KEY/*_SECRET: hidden from commands, redacted if they turn up.
  registerEnvSecrets(env);
  return {
    cwd,
    apiKey,
    authToken,
    apiKeySource,
    ...(flags.apiKeyFile ? { apiKeyFile: path.resolve(flags.apiKeyFile) } : {}),
    baseURL: env.ANTHROPIC_BASE_URL || undefined,
    model: flags.model ?? env.HUDDLE_MODEL ?? DEFAULT_MODEL,
    maxTokens: intFrom(env, 'HUDDLE_MAX_TOKENS', 8192),
    maxTurns: flags.maxTurns ?? intFrom(env, 'HUDDLE_MAX_TURNS', 50),
    maxRetries: intFrom(env, 'HUDDLE_MAX_RETRIES', 6),
    retryBaseMs: intFrom(env, 'HUDDLE_RETRY_BASE_MS', 500),
    maxConcurrentCalls: intFrom(env, 'HUDDLE_MAX_CONCURRENT_CALLS', 8),
    freshContextPerTask: boolFrom(env, 'HUDDLE_FRESH_CONTEXT_PER_TASK', true),
    leadCoalesceMs: intFrom(env, 'HUDDLE_LEAD_COALESCE_MS', 1_000),
    cacheWarmupMs: intFrom(env, 'HUDDLE_CACHE_WARMUP_MS', 10_000),
    requestTimeoutMs: intFrom(env, 'HUDDLE_REQUEST_TIMEOUT_MS', 600_000),
    streamIdleMs: intFrom(env, 'HUDDLE_STREAM_IDLE_MS', 60_000),
    idleTimeoutMs: intFrom(env, 'HUDDLE_IDLE_TIMEOUT_MS', 60_000),
    stallMs: intFrom(env, 'HUDDLE_STALL_MS', 600_000),
    planApproval: planApprovalFrom(env),
    planAutoApproveMinutes: 30,
    worktrees: boolFrom(env, 'HUDDLE_WORKTREES', false),
    reviewMaxRounds: intFrom(env, 'HUDDLE_REVIEW_MAX_ROUNDS', 3),
    trimAt: fractionFrom(env, 'HUDDLE_TRIM_AT', 0.6),
    trimKeepTurns: intFrom(env, 'HUDDLE_TRIM_KEEP_TURNS', 3),
    compactAt: fractionFrom(env, 'HUDDLE_COMPACT_AT', 0.8),
    permissionMode: permissionModeFrom(flags.permissionMode, env),
  };
}

function permissionModeFrom(flag: string | undefined, env: NodeJS.ProcessEnv): PermissionMode | undefined {
  const [raw, source] = flag !== undefined ? [flag, '--permission-mode'] : [env.HUDDLE_PERMISSION_MODE?.trim() || undefined, 'HUDDLE_PERMISSION_MODE'];
  if (raw === undefined) return undefined;
  if (!isPermissionMode(raw)) throw new ConfigError(`${source} must be one of ${PERMISSION_MODES.join(', ')}, not '${raw}'`);
  return raw;
}

export function hasCredentials(config: HuddleConfig): boolean {
  return Boolean(config.apiKey || config.authToken);
}

export const MISSING_KEY_MESSAGE =
  'huddle: no API key. Set ANTHROPIC_API_KEY (or pass --api-key-file FILE); ' +
  'for another server that speaks the Anthropic Messages API, also set ANTHROPIC_BASE_URL.';

function readKeyFile(file: string): string {
  try {
    const key = readFileSync(file, 'utf8').trim();
    if (!key) throw new ConfigError(`--api-key-file ${file} is empty; put the API key in it`);
    return key;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`cannot read --api-key-file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError(`${name} must be a whole number of at least 0, not '${raw}'`);
  }
  return value;
}

/** A share of something: "0.8", "80" or "80%" are all 0.8; "0" (or "off") turns the feature off. */
function fractionFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw.toLowerCase() === 'off') return 0;
  const percent = raw.endsWith('%');
  const value = Number(percent ? raw.slice(0, -1) : raw);
  if (Number.isFinite(value) && value >= 0 && value <= 100) {
    if (percent || value > 1) return value / 100;
    return value;
  }
  throw new ConfigError(`${name} must be a share of the context window, as a fraction (0.8) or a percent (80%), or 0 to turn it off; not '${raw}'`);
}

function boolFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), not '${env[name]}'`);
}

function planApprovalFrom(env: NodeJS.ProcessEnv): 'lead' | 'person' | 'auto-after' {
  const raw = (env.HUDDLE_PLAN_APPROVAL ?? 'lead').trim().toLowerCase();
  if (raw === 'lead' || raw === 'person' || raw === 'auto-after') return raw;
  throw new ConfigError(`HUDDLE_PLAN_APPROVAL must be 'lead', 'person' or 'auto-after', not '${env.HUDDLE_PLAN_APPROVAL}'`);
}

/** The parts of a URL that may be a credential: its password (as written and decoded) and its query's values. */
function urlCredentials(url: string | undefined): string[] {
  if (!url) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: the model client says so at its first call.
    return [];
  }
  const parts = [parsed.password, ...parsed.searchParams.values()];
  try {
    parts.push(decodeURIComponent(parsed.password));
  } catch {
    // A password that is not valid percent-encoding is registered as written.
  }
  return parts;
}
