// Claude Code's settings files read as huddle settings (docs/configuration.md#claude-codes-settings-files):
// `.claude/settings.json`, `.claude/settings.local.json`, `~/.claude/settings.json` (or
// `$CLAUDE_CONFIG_DIR/settings.json`) and `--settings`. What huddle can honour is carried over into
// huddle's keys; every other key is named once in one warning, never fatal, never dropped silently.
//   hooks                                  → hooks (command hooks; stdin in Claude Code's vocabulary)
//   permissions.allow  Bash(x:*), mcp__…   → permissions.allow (command prefixes, MCP tool names)
//   permissions.deny / ask                 → permissions.deny / ask (the same rule syntax)
//   permissions.defaultMode                → permissionMode (mapped like --permission-mode)
//   env, model                             → env, model (aliases resolved)
//   enabledMcpjsonServers / disabledMcpjsonServers → mcp.disabled (servers of .mcp.json not to start)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveModelAlias } from '../model/model-aliases.js';
import { mapPermissionMode } from '../permissions/permission-mode.js';
import { parseToolRule } from '../permissions/tool-rules.js';
import { isPlainObject } from './layers.js';
import { HOOK_EVENTS } from './schema.js';

export interface ClaudeCodeTranslation {
  /** In huddle's keys, to be checked against huddle's schema like any file. */
  values: Record<string, unknown>;
  /** Keys (and entries) huddle does not honour, for the one warning line. */
  ignored: string[];
}

/** Read tools and edits huddle already lets through in the workspace: an allow rule for them changes nothing. */
const ALLOWED_ANYWAY = new Set(['Read', 'Glob', 'Grep', 'LS', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'TodoWrite', 'Task']);

/** `raw` is the parsed file; `cwd` the workspace (its .mcp.json names the servers an enable list keeps). */
export function translateClaudeCodeSettings(raw: Record<string, unknown>, cwd: string): ClaudeCodeTranslation {
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case '$schema':
      case 'enableAllProjectMcpServers':
        // huddle starts every server of a trusted .mcp.json: the switch that turns them all on is what it does already.
        break;
      case 'model': {
        const model = typeof value === 'string' ? claudeModel(value) : undefined;
        // Claude Code's own choices (`opusplan`, `default`) name no model huddle could send.
        if (model) values.model = model;
        else ignored.push(`model ${JSON.stringify(value)}`);
        break;
      }
      case 'env':
        values.env = value;
        break;
      case 'hooks':
        values.hooks = translateHooks(value, ignored);
        break;
      case 'permissions':
        translatePermissions(value, values, ignored);
        break;
      case 'disabledMcpjsonServers':
        addDisabled(values, Array.isArray(value) ? value : [value]);
        break;
      case 'enabledMcpjsonServers': {
        const enabled = new Set(Array.isArray(value) ? value.map(String) : []);
        addDisabled(
          values,
          mcpJsonServers(cwd).filter((name) => !enabled.has(name)),
        );
        break;
      }
      default:
        ignored.push(key);
    }
  }
  return { values, ignored };
}

/** `opus`, `sonnet[1m]`, `claude-…` → a model id; undefined for a name that is neither an alias nor an id. */
function claudeModel(name: string): string | undefined {
  const [, base = '', window = ''] = /^(.*?)(\[1m\])?$/i.exec(name.trim()) ?? [];
  const id = resolveModelAlias(base);
  return id.startsWith('claude-') ? `${id}${window.toLowerCase()}` : undefined;
}

/** The one warning for a file's keys huddle does not honour. */
export function ignoredWarning(label: string, ignored: string[]): string | undefined {
  if (!ignored.length) return undefined;
  return `${label}: huddle ignores ${ignored.join(', ')} (Claude Code settings it does not support; docs/configuration.md#claude-codes-settings-files)`;
}

function translateHooks(value: unknown, ignored: string[]): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [event, matchers] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      ignored.push(`hooks.${event}`);
      continue;
    }
    if (!Array.isArray(matchers)) {
      out[event] = matchers; // the schema says what is wrong with it
      continue;
    }
    out[event] = matchers.map((matcher: unknown) => {
      if (!isPlainObject(matcher) || !Array.isArray(matcher.hooks)) return matcher;
      const hooks = matcher.hooks.filter((hook: unknown) => {
        if (isPlainObject(hook) && hook.type !== undefined && hook.type !== 'command') {
          ignored.push(`hooks.${event} (type ${String(hook.type)})`);
          return false;
        }
        return true;
      });
      return {
        ...matcher,
        hooks: hooks.map((hook: unknown) => (isPlainObject(hook) ? { ...hook, vocabulary: hook.vocabulary ?? 'claude-code' } : hook)),
      };
    });
  }
  return out;
}

function translatePermissions(value: unknown, values: Record<string, unknown>, ignored: string[]): void {
  if (!isPlainObject(value)) {
    values.permissions = value; // the schema says what is wrong with it
    return;
  }
  const permissions: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    switch (key) {
      case 'deny':
      case 'ask':
        permissions[key] = entry;
        break;
      case 'allow':
        if (!Array.isArray(entry)) permissions.allow = entry;
        else permissions.allow = entry.flatMap((rule) => allowEntry(rule, ignored));
        break;
      case 'defaultMode': {
        const mode = typeof entry === 'string' ? mapPermissionMode(entry) : undefined;
        if (mode) values.permissionMode = mode;
        else ignored.push(`permissions.defaultMode ${JSON.stringify(entry)}`);
        break;
      }
      default:
        ignored.push(`permissions.${key}`);
    }
  }
  if (Object.keys(permissions).length) values.permissions = permissions;
}

/** An allow rule as huddle's allow-list entry: a command prefix, an MCP tool's name; [] when huddle allows it anyway. */
function allowEntry(text: unknown, ignored: string[]): unknown[] {
  if (typeof text !== 'string') return [text];
  const rule = parseToolRule(text);
  if (!rule) return [text];
  if (rule.tool.startsWith('mcp__') && rule.specifier === undefined) return [rule.tool];
  if (ALLOWED_ANYWAY.has(rule.tool)) return [];
  if (rule.tool === 'Bash' && rule.specifier !== undefined) {
    const prefix = commandPrefix(rule.specifier);
    if (prefix) return [prefix];
  }
  ignored.push(`permissions.allow ${JSON.stringify(text)}`);
  return [];
}

/** `git *`, `git:*`, `npm test` → the command prefix huddle's allow-list takes; undefined for any other pattern. */
export function commandPrefix(pattern: string): string | undefined {
  const text = pattern.trim().replace(/:\*$/, ' *');
  const prefix = text.endsWith(' *') ? text.slice(0, -2).trim() : text;
  return prefix && !/[*?]/.test(prefix) ? prefix : undefined;
}

function addDisabled(values: Record<string, unknown>, names: unknown[]): void {
  if (!names.length) return;
  const mcp = (values.mcp ??= {}) as Record<string, unknown>;
  mcp.disabled = [...((mcp.disabled as unknown[] | undefined) ?? []), ...names];
}

/** The server names of the workspace's .mcp.json (none when it is missing or broken: its own reading says why). */
function mcpJsonServers(cwd: string): string[] {
  try {
    const parsed = JSON.parse(readFileSync(path.join(cwd, '.mcp.json'), 'utf8')) as { mcpServers?: unknown };
    return isPlainObject(parsed.mcpServers) ? Object.keys(parsed.mcpServers) : [];
  } catch {
    return [];
  }
}
