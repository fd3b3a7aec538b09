// Environment variables that set settings (over every file, under flags). Each variable is its own
// layer so `/config` names it. Their spellings and error messages are those huddle has always had.
import { PERMISSION_MODES } from '../permissions/permission-mode.js';
import { SettingsError } from './errors.js';
import { PLAN_APPROVERS } from './schema.js';
import { layerAt, type SettingsLayer } from './layers.js';

type Parse = (raw: string, name: string) => unknown;

const wholeNumber: Parse = (raw, name) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new SettingsError(`${name} must be a whole number of at least 0, not '${raw}'`);
  return value;
};

/** A share of something: "0.8", "80" or "80%" are all 0.8; "0" (or "off") turns the feature off. */
const fraction: Parse = (raw, name) => {
  const text = raw.trim();
  if (text.toLowerCase() === 'off') return 0;
  const percent = text.endsWith('%');
  const value = Number(percent ? text.slice(0, -1) : text);
  if (Number.isFinite(value) && value >= 0 && value <= 100) return percent || value > 1 ? value / 100 : value;
  throw new SettingsError(`${name} must be a share of the context window, as a fraction (0.8) or a percent (80%), or 0 to turn it off; not '${raw}'`);
};

const flag: Parse = (raw, name) => {
  const text = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off'].includes(text)) return false;
  throw new SettingsError(`${name} must be 1 or 0 (true or false), not '${raw}'`);
};

const oneOf =
  (values: readonly string[], say: (name: string, raw: string) => string): Parse =>
  (raw, name) => {
    const text = raw.trim();
    if (values.includes(text)) return text;
    throw new SettingsError(say(name, raw));
  };

const text: Parse = (raw) => raw;

export interface EnvironmentSetting {
  variable: string;
  path: string[];
  parse: Parse;
}

/** Every variable huddle reads into settings (credentials are not settings and stay out). */
export const ENVIRONMENT_SETTINGS: EnvironmentSetting[] = [
  { variable: 'HUDDLE_MODEL', path: ['model'], parse: text },
  { variable: 'HUDDLE_MAX_TOKENS', path: ['maxTokens'], parse: wholeNumber },
  { variable: 'HUDDLE_MAX_TURNS', path: ['maxTurns'], parse: wholeNumber },
  {
    variable: 'HUDDLE_PERMISSION_MODE',
    path: ['permissionMode'],
    parse: oneOf(PERMISSION_MODES, (name, raw) => `${name} must be one of ${PERMISSION_MODES.join(', ')}, not '${raw}'`),
  },
  {
    variable: 'HUDDLE_PLAN_APPROVAL',
    path: ['plans', 'approver'],
    parse: (raw, name) => oneOf(PLAN_APPROVERS, () => `${name} must be 'lead', 'person' or 'auto-after', not '${raw}'`)(raw.toLowerCase(), name),
  },
  { variable: 'HUDDLE_WORKTREES', path: ['worktrees'], parse: flag },
  { variable: 'HUDDLE_REVIEW_MAX_ROUNDS', path: ['reviewMaxRounds'], parse: wholeNumber },
  { variable: 'HUDDLE_IDLE_TIMEOUT_MS', path: ['timeouts', 'idleMs'], parse: wholeNumber },
  { variable: 'HUDDLE_STALL_MS', path: ['timeouts', 'stallMs'], parse: wholeNumber },
  { variable: 'HUDDLE_REQUEST_TIMEOUT_MS', path: ['timeouts', 'requestMs'], parse: wholeNumber },
  { variable: 'HUDDLE_STREAM_IDLE_MS', path: ['timeouts', 'streamIdleMs'], parse: wholeNumber },
  { variable: 'HUDDLE_LEASE_MS', path: ['timeouts', 'leaseMs'], parse: wholeNumber },
  { variable: 'HUDDLE_TEAM_URL', path: ['team'], parse: text },
  { variable: 'HUDDLE_MAX_RETRIES', path: ['retries', 'max'], parse: wholeNumber },
  { variable: 'HUDDLE_RETRY_BASE_MS', path: ['retries', 'baseMs'], parse: wholeNumber },
  { variable: 'HUDDLE_MAX_CONCURRENT_CALLS', path: ['maxConcurrentCalls'], parse: wholeNumber },
  { variable: 'HUDDLE_FRESH_CONTEXT_PER_TASK', path: ['freshContextPerTask'], parse: flag },
  { variable: 'HUDDLE_LEAD_COALESCE_MS', path: ['timeouts', 'leadCoalesceMs'], parse: wholeNumber },
  { variable: 'HUDDLE_CACHE_WARMUP_MS', path: ['timeouts', 'cacheWarmupMs'], parse: wholeNumber },
  { variable: 'HUDDLE_TRIM_AT', path: ['context', 'trimAt'], parse: fraction },
  { variable: 'HUDDLE_TRIM_KEEP_TURNS', path: ['context', 'trimKeepTurns'], parse: wholeNumber },
  { variable: 'HUDDLE_COMPACT_AT', path: ['context', 'compactAt'], parse: fraction },
  {
    variable: 'HUDDLE_SANDBOX',
    path: ['sandbox', 'enabled'],
    parse: (raw, name) => {
      const value = raw.trim().toLowerCase();
      if (value === 'off') return false;
      if (value === 'on') return true;
      throw new SettingsError(`${name} must be 'off' (run commands unsandboxed) or 'on', not '${raw}'`);
    },
  },
];

/** One layer per variable that is set (an empty value counts as unset, as it always has). */
export function environmentLayers(env: NodeJS.ProcessEnv): SettingsLayer[] {
  const layers: SettingsLayer[] = [];
  for (const { variable, path, parse } of ENVIRONMENT_SETTINGS) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    layers.push(layerAt(variable, path, parse(raw, variable)));
  }
  return layers;
}
