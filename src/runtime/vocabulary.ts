// The words every part of huddle shares (docs/contract.md#vocabulary): the lead's name, what an agent name may
// look like, and the statuses a member can have. Defined once, here; everything else imports them.
import path from 'node:path';

/** The lead is always named `lead`. */
export const LEAD_NAME = 'lead';

/** Agent names: a lowercase letter, then up to 31 of a-z, 0-9, '_' or '-'. */
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** What a member of the team is doing (docs/contract.md#vocabulary). */
export const MEMBER_STATUSES = ['working', 'idle', 'waiting', 'shutdown', 'failed'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** How much an agent may do without asking (runtime/permissions/permission-mode.ts says what each means). */
export const PERMISSION_MODES = ['plan', 'ask', 'auto'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** The external agent CLIs a teammate can be (besides huddle's own loop; docs/external-agents.md). */
export const AGENT_KINDS = ['claude-code', 'gemini', 'codex', 'opencode', 'command'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

/** Senders that are not agents: the person at the console, and huddle's own notes. */
export const PERSON_SENDER = 'user';
export const HUDDLE_SENDER = 'huddle';

export function isAgentName(name: unknown): name is string {
  return typeof name === 'string' && AGENT_NAME_PATTERN.test(name);
}

/** The one sentence that says what a valid name is, for every error that refuses one. */
export function describeNameRule(name: unknown): string {
  return (
    `invalid agent name '${String(name)}': a name starts with a lowercase letter, then up to 31 of ` + `a-z, 0-9, '_' or '-' (e.g. 'alice', 'test-runner')`
  );
}

/** Claude Code's tool names → huddle's tools of the same job (hook matchers, `--allowedTools` rules). */
export const CLAUDE_CODE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Bash: 'bash',
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'glob',
  Task: 'spawn_teammate',
  TodoWrite: 'task_create',
};

/**
 * Claude Code's input fields → huddle's, for the tools whose inputs differ only in names: what a hook
 * written for Claude Code reads (`tool_input.file_path`) and what a permission rule's path names.
 */
export const CLAUDE_CODE_INPUT_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Bash: { command: 'command' },
  Read: { file_path: 'path', offset: 'offset', limit: 'limit' },
  Write: { file_path: 'path', content: 'content' },
  Edit: { file_path: 'path', old_string: 'old_text', new_string: 'new_text' },
  Glob: { pattern: 'pattern' },
  Grep: { pattern: 'pattern', path: 'path' },
};

/** huddle's tool name → Claude Code's, for the tools whose inputs map field by field. */
const HUDDLE_TO_CLAUDE_CODE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.keys(CLAUDE_CODE_INPUT_FIELDS).map((claude) => [CLAUDE_CODE_TOOL_NAMES[claude]!, claude]),
);

/** The Claude Code name of a huddle tool (`write_file` → `Write`); any other name as it is (`mcp__s__t`). */
export function claudeCodeToolName(huddleName: string): string {
  return HUDDLE_TO_CLAUDE_CODE[huddleName] ?? huddleName;
}

/**
 * A huddle tool call in Claude Code's words: `write_file {path, content}` → `Write {file_path, content}`,
 * a relative path made absolute against `cwd` (Claude Code's file tools take absolute paths).
 * A tool with no counterpart keeps its name and input.
 */
export function toClaudeCodeCall(huddleName: string, input: unknown, cwd: string): { name: string; input: unknown } {
  const name = claudeCodeToolName(huddleName);
  const fields = CLAUDE_CODE_INPUT_FIELDS[name];
  if (!fields || typeof input !== 'object' || input === null) return { name, input };
  const source = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const mapped = new Set<string>();
  for (const [claude, huddle] of Object.entries(fields)) {
    if (source[huddle] === undefined) continue;
    mapped.add(huddle);
    const value = source[huddle];
    out[claude] = claude === 'file_path' && typeof value === 'string' ? absoluteFrom(cwd, value) : value;
  }
  for (const [key, value] of Object.entries(source)) if (!mapped.has(key)) out[key] = value;
  return { name, input: out };
}

/** A Claude Code tool input (a hook's `updatedInput`) back in huddle's fields; unknown fields kept as they are. */
export function fromClaudeCodeInput(claudeName: string, input: Record<string, unknown>): Record<string, unknown> {
  const fields = CLAUDE_CODE_INPUT_FIELDS[claudeName];
  if (!fields) return input;
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [fields[key] ?? key, value]));
}

function absoluteFrom(cwd: string, file: string): string {
  return path.resolve(cwd, file);
}
