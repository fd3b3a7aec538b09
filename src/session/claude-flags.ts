// Claude Code's headless flags as huddle honours them (docs/contract.md#claude-code-flags): the
// permission modes mapped onto huddle's three, tool rules checked against what huddle does anyway,
// and the flags it cannot honour refused by name with the reason. Kept free of heavy imports: the
// entry point parses with it before loading any mode.
import type { PermissionMode } from '../runtime/permissions/permission-mode.js';
import { isToolRule } from '../runtime/permissions/tool-rule-syntax.js';
import { CLAUDE_CODE_TOOL_NAMES } from '../runtime/vocabulary.js';

export { CLAUDE_PERMISSION_MODES, mapPermissionMode } from '../runtime/permissions/permission-mode.js';

const TOOL_NAMES = CLAUDE_CODE_TOOL_NAMES;
const READ_TOOLS = new Set(['Read', 'Glob', 'Grep', 'LS']);
const EDIT_TOOLS = new Set(['Write', 'Edit', 'MultiEdit']);

/** One rule of --allowedTools/--disallowedTools: `Bash(git *)`, `Edit`, `mcp__server__tool`. */
export function parseToolRules(text: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if ((ch === ',' || ch === ' ') && depth === 0) {
      if (current.trim()) rules.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) rules.push(current.trim());
  return rules;
}

/**
 * What huddle does with --allowedTools in `mode`: a rule it already honours (the tool runs without a
 * question in that mode) passes; any other is the reason it is refused.
 */
export function allowedToolsRefusal(rules: string[], mode: PermissionMode): string | undefined {
  for (const rule of rules) {
    const match = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/.exec(rule);
    const tool = match?.[1];
    if (!tool) return `--allowedTools: '${rule}' is not a tool rule (Bash(git *), Edit, Read…)`;
    if (tool.startsWith('mcp__')) {
      if (mode === 'auto') continue;
      if (mode === 'plan') return `--allowedTools: '${rule}' cannot widen plan mode (read only)`;
      // One tool by its full name joins the allow-list for this run, as the person's "always" answer would.
      if (isMcpToolName(tool) && match[2] === undefined) continue;
      return `--allowedTools: '${rule}' in ${mode} mode: name each MCP tool (mcp__server__tool), or run with --permission-mode bypassPermissions`;
    }
    if (!Object.hasOwn(TOOL_NAMES, tool)) return `--allowedTools: huddle has no tool like '${tool}' (it honours ${Object.keys(TOOL_NAMES).join(', ')})`;
    // Reading is allowed in every mode; edits and commands with no question in auto mode.
    if (READ_TOOLS.has(tool)) continue;
    if (mode === 'auto') continue;
    if (EDIT_TOOLS.has(tool) && mode === 'ask') continue;
    if (mode === 'plan') return `--allowedTools: '${rule}' cannot widen plan mode (read only)`;
    if (tool === 'Bash' && commandPrefix(match[2]) !== undefined) continue;
    return `--allowedTools: '${rule}' in ${mode} mode: name the command (Bash(git *), Bash(npm test)), put its prefix in permissions.allow of .team/settings.local.json, or run with --permission-mode bypassPermissions`;
  }
  return undefined;
}

/** `mcp__server__tool`: one MCP tool by its full name (not a whole server, not a wildcard). */
function isMcpToolName(text: string): boolean {
  return /^mcp__[^_](?:[^_]|_(?!_))*__[\w-]+$/.test(text) && !text.endsWith('__*');
}

/** `git *`, `git:*`, `npm test` → the command prefix huddle's allow-list takes; undefined for any other pattern. */
function commandPrefix(pattern: string | undefined): string | undefined {
  const text = pattern?.trim().replace(/:\*$/, ' *');
  if (!text) return undefined;
  const prefix = text.endsWith(' *') ? text.slice(0, -2).trim() : text;
  return prefix && !/[*?]/.test(prefix) ? prefix : undefined;
}

/** The command prefixes of `Bash(…)` rules: allowed without a question for this run (with huddle's allow-list). */
export function allowedCommandPrefixes(rules: string[]): string[] {
  return rules.flatMap((rule) => {
    if (isMcpToolName(rule)) return [rule];
    const match = /^Bash\((.*)\)$/.exec(rule);
    const prefix = match ? commandPrefix(match[1]) : undefined;
    return prefix ? [prefix] : [];
  });
}

/** --disallowedTools: each rule must be one (`Bash(rm:*)`, `Edit`, `mcp__server__tool`); the reason when one is not. */
export function disallowedToolsRefusal(rules: string[]): string | undefined {
  const bad = rules.find((rule) => !isToolRule(rule));
  return bad === undefined ? undefined : `--disallowedTools: '${bad}' is not a tool rule (Bash(rm:*), Edit(src/**), Read(./.env), mcp__server__tool)`;
}

/** Flags of Claude Code huddle cannot honour, and why (each refused by name: never silently ignored). */
export const REFUSED_FLAGS: Readonly<Record<string, string>> = {
  'add-dir':
    "huddle's file tools are confined to the workspace (--cwd) and its agents share it; for commands alone, sandbox.writablePaths in settings lets them write another directory",
  tools: "huddle's agents have their own toolset (a role's tools list narrows it)",
  thinking: 'huddle sets no extended thinking per run',
  'max-thinking-tokens': 'huddle sets no extended thinking per run',
  effort: 'huddle sets no effort level per run',
  'json-schema': "huddle's lead answers in text; it has no structured output",
  agent: "huddle's agents are its lead and the teammates it spawns (roles in .team/roles/)",
  betas: 'huddle sends no beta headers',
  'plugin-dir': 'huddle loads no Claude Code plugins',
};

/** --setting-sources user,project,local (any subset, "" for none): the scopes read; a string naming the mistake otherwise. */
export function parseSettingSources(text: string): Array<'user' | 'project' | 'local'> | string {
  const sources = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = sources.find((s) => !['user', 'project', 'local'].includes(s));
  if (bad !== undefined) return `--setting-sources takes user, project and local (comma-separated), not '${bad}'`;
  return sources as Array<'user' | 'project' | 'local'>;
}
