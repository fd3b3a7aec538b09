// The words every part of huddle shares (docs/contract.md#vocabulary): the lead's name, what an agent name may
// look like, and the statuses a member can have. Defined once, here; everything else imports them.

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
