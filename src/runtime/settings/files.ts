// The settings files and where they live (docs/contract.md#settings-files), lowest first:
//   ~/.claude/settings.json          Claude Code's user file ($CLAUDE_CONFIG_DIR respected)
//   ~/.config/huddle/settings.json   the user's, for every workspace ($XDG_CONFIG_HOME respected)
//   .team/allow.json, .team/budget.json   deprecated; still read, under every settings file
//   .mcp.json                        MCP servers in Claude Code's format
//   .claude/settings.json            Claude Code's project file
//   .team/settings.json              the team's, meant to be committed
//   .claude/settings.local.json      Claude Code's local file
//   .team/settings.local.json        personal, not committed
// Each of huddle's files wins over Claude Code's of the same scope; Claude Code's are translated
// (claude-code-settings.ts).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as z from 'zod';
import { BudgetConfigError, parseBudgetSettings } from '../budget/budget.js';
import { describeIssues, SettingsError } from './errors.js';
import { isPlainObject, type SettingsLayer } from './layers.js';
import { mcpFileSchema, settingsSchema } from './schema.js';
import { contentHash } from './trust.js';
import { ignoredWarning, translateClaudeCodeSettings } from './claude-code-settings.js';

export interface SettingsLocations {
  /** The workspace root. */
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The user's home (default: os.homedir()); tests point it at a temp dir. */
  home?: string;
  /** --setting-sources: the scopes read (default all three); `.mcp.json` and the legacy files are the project's. */
  sources?: readonly SettingSource[];
}

export const SETTING_SOURCES = ['user', 'project', 'local'] as const;
export type SettingSource = (typeof SETTING_SOURCES)[number];

export interface SettingsFile {
  /** How messages name it: `.team/settings.json`, `~/.config/huddle/settings.json`. */
  label: string;
  path: string;
  kind: 'user' | 'legacy-allow' | 'legacy-budget' | 'mcp' | 'project' | 'local' | ClaudeCodeKind;
}

type ClaudeCodeKind = 'claude-user' | 'claude-project' | 'claude-local';

const SCOPES: Record<SettingsFile['kind'], SettingSource> = {
  user: 'user',
  'claude-user': 'user',
  'legacy-allow': 'project',
  'legacy-budget': 'project',
  mcp: 'project',
  project: 'project',
  'claude-project': 'project',
  local: 'local',
  'claude-local': 'local',
};

/** Files whose widening entries are the person's own (not the workspace's): no trust asked. */
export function isUserFile(file: SettingsFile): boolean {
  return SCOPES[file.kind] === 'user';
}

/** Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`. */
export function claudeUserSettingsPath(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const dir = env.CLAUDE_CONFIG_DIR?.trim() ? env.CLAUDE_CONFIG_DIR : path.join(home, '.claude');
  return path.join(dir, 'settings.json');
}

export function userSettingsPath(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const configHome = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(configHome, 'huddle', 'settings.json');
}

export function settingsFiles({ cwd, env = process.env, home = os.homedir(), sources = SETTING_SOURCES }: SettingsLocations): SettingsFile[] {
  const user = userSettingsPath(env, home);
  const claudeUser = claudeUserSettingsPath(env, home);
  const all: SettingsFile[] = [
    { label: tildePath(claudeUser, home), path: claudeUser, kind: 'claude-user' },
    { label: tildePath(user, home), path: user, kind: 'user' },
    { label: '.team/allow.json', path: path.join(cwd, '.team', 'allow.json'), kind: 'legacy-allow' },
    { label: '.team/budget.json', path: path.join(cwd, '.team', 'budget.json'), kind: 'legacy-budget' },
    { label: '.mcp.json', path: path.join(cwd, '.mcp.json'), kind: 'mcp' },
    { label: '.claude/settings.json', path: path.join(cwd, '.claude', 'settings.json'), kind: 'claude-project' },
    { label: '.team/settings.json', path: path.join(cwd, '.team', 'settings.json'), kind: 'project' },
    { label: '.claude/settings.local.json', path: path.join(cwd, '.claude', 'settings.local.json'), kind: 'claude-local' },
    { label: '.team/settings.local.json', path: path.join(cwd, '.team', 'settings.local.json'), kind: 'local' },
  ];
  return all.filter((file) => sources.includes(SCOPES[file.kind]));
}

function tildePath(file: string, home: string): string {
  const relative = path.relative(home, file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? `~/${relative}` : file;
}

export interface ReadLayer {
  layer?: SettingsLayer;
  /** The sha256 of the file's text, which trust records are keyed by (trust.ts). */
  sha256?: string;
  /** Said once per load: a deprecated file, a broken allow-list that is ignored. */
  warnings: string[];
}

/** Reads one file into a layer; nothing when it does not exist. Throws SettingsError (one line) when it is wrong. */
export function readSettingsFile(file: SettingsFile, cwd = process.cwd()): ReadLayer {
  const text = readText(file);
  if (text === undefined) return { warnings: [] };
  return { ...parseSettingsText(file, text, cwd), sha256: contentHash(text) };
}

/** Claude Code's settings (a file, or --settings' file or JSON) as a huddle layer, with the warning naming what huddle ignores. */
export function claudeCodeLayer(label: string, raw: unknown, cwd: string): ReadLayer {
  if (!isPlainObject(raw)) throw new SettingsError(`${label}: expected a JSON object ({…}) at the top`);
  const { values, ignored } = translateClaudeCodeSettings(raw, cwd);
  const warning = ignoredWarning(label, ignored);
  return { layer: { label, values: validate({ label, path: label, kind: 'claude-project' }, values, settingsSchema) }, warnings: warning ? [warning] : [] };
}

function parseSettingsText(file: SettingsFile, text: string, cwd: string): ReadLayer {
  switch (file.kind) {
    case 'claude-user':
    case 'claude-project':
    case 'claude-local':
      return claudeCodeLayer(file.label, parseJson(file, text), cwd);
    case 'legacy-allow':
      return readLegacyAllow(file, text);
    case 'legacy-budget':
      return readLegacyBudget(file, text);
    case 'mcp':
      return { layer: { label: file.label, values: validate(file, parseJson(file, text), mcpFileSchema) }, warnings: [] };
    default:
      return { layer: { label: file.label, values: validate(file, parseJson(file, text), settingsSchema) }, warnings: [] };
  }
}

function readText(file: SettingsFile): string | undefined {
  try {
    return readFileSync(file.path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new SettingsError(`${file.label}: cannot be read (${code ?? (error as Error).message})`);
  }
}

function parseJson(file: SettingsFile, text: string): unknown {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SettingsError(`${file.label}: not valid JSON (${(error as Error).message})`);
  }
}

function validate(file: SettingsFile, value: unknown, schema: z.ZodType): Record<string, unknown> {
  if (!isPlainObject(value)) throw new SettingsError(`${file.label}: expected a JSON object ({…}) at the top`);
  const parsed = schema.safeParse(value, { reportInput: true });
  if (!parsed.success) throw new SettingsError(describeIssues(file.label, parsed.error.issues, schema));
  return value;
}

const ALLOW_DEPRECATED =
  '.team/allow.json is deprecated: it is still read, but move its prefixes to "permissions": {"allow": […]} in .team/settings.local.json (yours) or .team/settings.json (the team\'s)';
const BUDGET_DEPRECATED = '.team/budget.json is deprecated: it is still read, under every settings file, but move it to "budget": {…} in .team/settings.json';

/** `.team/allow.json`: a broken one was always ignored with a warning, and still is. */
function readLegacyAllow(file: SettingsFile, text: string): ReadLayer {
  const ignored = (what: string): ReadLayer => ({
    warnings: [`${file.label} is ignored: ${what}; it must be a JSON array of command prefixes such as ["npm test", "make"]`],
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return ignored(`it is not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value)) return ignored('it is not an array');
  const bad = value.find((entry) => typeof entry !== 'string' || !entry.trim());
  if (bad !== undefined) return ignored(`${JSON.stringify(bad)} is not a command prefix`);
  if (value.length === 0) return { warnings: [] };
  return { layer: { label: file.label, values: { permissions: { allow: value } } }, warnings: [ALLOW_DEPRECATED] };
}

/** `.team/budget.json`: checked by the budget module's own parser so its messages stay as they were. */
function readLegacyBudget(file: SettingsFile, text: string): ReadLayer {
  try {
    parseBudgetSettings(text, file.label);
  } catch (error) {
    if (error instanceof BudgetConfigError) throw new SettingsError(error.message);
    throw error;
  }
  const raw = JSON.parse(text) as Record<string, unknown>;
  return { layer: { label: file.label, values: validate(file, { budget: raw }, settingsSchema) }, warnings: [BUDGET_DEPRECATED] };
}
