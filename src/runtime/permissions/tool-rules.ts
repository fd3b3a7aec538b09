// Permission rules in Claude Code's syntax (docs/configuration.md#permission-rules): `Bash(git *)`,
// `Bash(rm:*)`, `Read(./secrets/**)`, `Edit(src/**)`, `Write`, `mcp__server__tool`. A call is held
// against the deny rules, then ask, then allow, and the first list with a match decides (as in Claude
// Code: a deny can carry no exception, an ask beats an allow). huddle's tool calls are matched in
// Claude Code's words (vocabulary.ts), so a rule written for Claude Code means the same here.
import os from 'node:os';
import path from 'node:path';
import { CLAUDE_CODE_TOOL_NAMES, toClaudeCodeCall } from '../vocabulary.js';
import { minimatch } from 'minimatch';
import { parseToolRule, type ToolRule } from './tool-rule-syntax.js';

export { isToolRule, parseToolRule } from './tool-rule-syntax.js';

export interface ToolRuleLists {
  deny?: readonly string[] | undefined;
  ask?: readonly string[] | undefined;
  allow?: readonly string[] | undefined;
}

export interface RuleVerdict {
  kind: 'deny' | 'ask' | 'allow';
  /** The rule as it was written. */
  rule: string;
}

/** Tools whose rules also cover other tools of the same kind (Claude Code: Edit rules cover every edit). */
const COVERS: Readonly<Record<string, readonly string[]>> = {
  Edit: ['Edit', 'Write', 'MultiEdit'],
  Read: ['Read', 'Glob', 'Grep', 'LS'],
};

/**
 * The first of deny, ask, allow with a rule matching huddle's call of `tool` with `input`, in the
 * workspace `cwd`; undefined when no rule matches (the mode decides).
 */
export function ruleVerdict(lists: ToolRuleLists, tool: string, input: unknown, cwd: string, home = os.homedir()): RuleVerdict | undefined {
  const call = toClaudeCodeCall(tool, input, cwd);
  const fields = (typeof call.input === 'object' && call.input !== null ? call.input : {}) as Record<string, unknown>;
  for (const kind of ['deny', 'ask', 'allow'] as const) {
    for (const text of lists[kind] ?? []) {
      const rule = parseToolRule(text);
      if (rule && ruleMatches(rule, call.name, fields, cwd, home, kind)) return { kind, rule: text };
    }
  }
  return undefined;
}

function ruleMatches(rule: ToolRule, name: string, input: Record<string, unknown>, cwd: string, home: string, kind: RuleVerdict['kind']): boolean {
  if (!toolMatches(rule.tool, name)) return false;
  if (rule.specifier === undefined) return true;
  if (name === 'Bash') return commandMatches(rule.specifier, String(input.command ?? ''), kind);
  const file = typeof input.file_path === 'string' ? input.file_path : typeof input.path === 'string' ? path.resolve(cwd, input.path) : undefined;
  if (file !== undefined && (COVERS[rule.tool] ?? [rule.tool]).includes(name)) return pathMatches(rule.specifier, file, cwd, home);
  // A specifier huddle has nothing to hold against (WebFetch(domain:…), a Glob without a path).
  return false;
}

function toolMatches(ruleTool: string, name: string): boolean {
  if (ruleTool.startsWith('mcp__')) {
    // mcp__server (every tool of it), mcp__server__* or mcp__server__tool.
    const rest = ruleTool.slice('mcp__'.length);
    const cut = rest.indexOf('__');
    const server = cut < 0 ? rest : rest.slice(0, cut);
    const toolName = cut < 0 ? undefined : rest.slice(cut + 2);
    if (toolName === undefined || toolName === '*') return name.startsWith(`mcp__${server}__`);
    return name === ruleTool;
  }
  if (COVERS[ruleTool]?.includes(name)) return true;
  // huddle's own names are taken too (`Bash` or `bash`).
  return ruleTool === name || CLAUDE_CODE_TOOL_NAMES[name] === ruleTool || claudeNameOf(ruleTool) === name;
}

function claudeNameOf(huddleName: string): string | undefined {
  return Object.keys(CLAUDE_CODE_TOOL_NAMES).find((claude) => CLAUDE_CODE_TOOL_NAMES[claude] === huddleName);
}

/**
 * `rm:*` (the command or it followed by arguments), `git *` (a wildcard; a trailing ` *` may match
 * nothing), or the exact command. Each part of a compound command is held against the rule: a deny
 * or ask matches if any part does, an allow only if every part does.
 */
export function commandMatches(pattern: string, command: string, kind: RuleVerdict['kind'] = 'deny'): boolean {
  const parts = commandParts(command);
  if (!parts.length) return false;
  const one = (part: string) => partMatches(pattern, part);
  return kind === 'allow' ? parts.every(one) : parts.some(one);
}

function partMatches(pattern: string, command: string): boolean {
  if (pattern.endsWith(':*')) {
    const prefix = pattern.slice(0, -2).trim();
    return command === prefix || command.startsWith(`${prefix} `);
  }
  if (!pattern.includes('*')) return command === pattern;
  const regex = new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`, 's');
  if (regex.test(command)) return true;
  const stars = pattern.split('*').length - 1;
  return stars === 1 && pattern.endsWith(' *') && command === pattern.slice(0, -2).trimEnd();
}

/** The simple commands of a command line, split at `&&`, `||`, `;`, `|`, `&` and newlines outside quotes; leading `VAR=x` dropped. */
function commandParts(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"') current += command[i++] ?? '';
      current += ch;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    if (ch === '\\') {
      current += ch + (command[++i] ?? '');
      continue;
    }
    if (';|&\n'.includes(ch) || (ch === '(' && current.trim() === '') || ch === ')') {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts
    .map((part) =>
      part
        .trim()
        .replace(/^(?:[A-Za-z_]\w*=(?:'[^']*'|"[^"]*"|\S*)\s+)+/, '')
        .replace(/\s+/g, ' '),
    )
    .filter(Boolean);
}

/**
 * A path pattern as Claude Code reads it (gitignore-like): `//abs` an absolute path, `~/x` under the
 * home directory, `/x` and `./x` and `x/y` under the workspace, a name without a slash (`.env`,
 * `*.key`) at any depth; `**` crosses directories.
 */
export function pathMatches(pattern: string, file: string, cwd: string, home = os.homedir()): boolean {
  let glob: string;
  if (pattern.startsWith('//')) glob = pattern.slice(1);
  else if (pattern.startsWith('~/')) glob = path.join(home, pattern.slice(2));
  else if (!pattern.replace(/\/$/, '').includes('/')) glob = path.join(cwd, '**', pattern);
  else glob = path.join(cwd, pattern.replace(/^\.?\//, ''));
  if (glob.endsWith('/')) glob += '**';
  const target = path.resolve(cwd, file);
  // minimatch, not path.matchesGlob: that one is experimental on the Node versions huddle supports and warns on
  // stderr. `dot`: a deny rule's `**` reaches dotfiles and dot-directories too (`Read(./secrets/**)`).
  return minimatch(target, glob, { dot: true }) || minimatch(target, path.join(glob, '**'), { dot: true });
}

function escapeRegex(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
