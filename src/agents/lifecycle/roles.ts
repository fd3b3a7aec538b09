// Teammate roles: built-in ones, overridden or extended by `.team/roles/<role>.md` files
// (markdown with a short YAML front matter: model, tools, plan_mode_required, worktree, permission_mode).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseYaml } from '../../runtime/settings/lazy-yaml.js';
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from '../../runtime/permissions/permission-mode.js';
import { AGENT_KINDS, PLAN_APPROVERS, type PlanApprover } from '../../runtime/settings/schema.js';
import { roleFileTrusted } from '../../runtime/settings/role-trust.js';
import { workspaceKey } from '../../runtime/settings/load.js';
import { fill } from '../prompts/templates.js';

export interface RoleDefinition {
  name: string;
  model?: string;
  /** Allow-list of tool names; undefined means every teammate tool. */
  tools?: string[];
  plan_mode_required?: boolean;
  worktree?: boolean;
  /** plan, ask or auto for teammates of this role (default: the run's mode). */
  permission_mode?: PermissionMode;
  /** Which agent runs teammates of this role: huddle (in-process, the default) or an external CLI. */
  agent?: 'huddle' | (typeof AGENT_KINDS)[number];
  /** Who approves this role's plans (over plans.approver): lead, person or auto-after. */
  plan_approver?: PlanApprover;
  /** Appended to the teammate's system prompt. */
  body: string;
  source: 'built-in' | string;
}

const BUILT_IN: RoleDefinition[] = [
  {
    name: 'coder',
    source: 'built-in',
    body: fill('role-coder', {}),
  },
  {
    name: 'tester',
    source: 'built-in',
    body: fill('role-tester', {}),
  },
  {
    name: 'reviewer',
    source: 'built-in',
    body: fill('role-reviewer', {}),
  },
];

export class RoleError extends Error {}

/** Parses a role file's text. Front matter is optional; errors name the file. */
export function parseRole(name: string, text: string, source: string): RoleDefinition {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return { name, body: text.trim(), source };
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? '') ?? {};
  } catch (error) {
    throw new RoleError(`${source}: the front matter is not valid YAML (${(error as Error).message})`);
  }
  if (typeof front !== 'object' || Array.isArray(front) || front === null) {
    throw new RoleError(`${source}: the front matter must be key: value lines`);
  }
  const fields = front as Record<string, unknown>;
  const role: RoleDefinition = { name, body: (match[2] ?? '').trim(), source };
  if (typeof fields.model === 'string') role.model = fields.model;
  if (fields.tools !== undefined) {
    const tools = typeof fields.tools === 'string' ? fields.tools.split(/[\s,]+/).filter(Boolean) : fields.tools;
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string')) {
      throw new RoleError(`${source}: tools must be a list of tool names`);
    }
    role.tools = tools;
  }
  if (typeof fields.plan_mode_required === 'boolean') role.plan_mode_required = fields.plan_mode_required;
  if (typeof fields.worktree === 'boolean') role.worktree = fields.worktree;
  if (fields.plan_approver !== undefined) {
    if (!(PLAN_APPROVERS as readonly unknown[]).includes(fields.plan_approver)) {
      throw new RoleError(`${source}: plan_approver must be one of ${PLAN_APPROVERS.join(', ')}, not ${JSON.stringify(fields.plan_approver)}`);
    }
    role.plan_approver = fields.plan_approver as PlanApprover;
  }
  if (fields.permission_mode !== undefined) {
    if (!isPermissionMode(fields.permission_mode)) {
      throw new RoleError(`${source}: permission_mode must be one of ${PERMISSION_MODES.join(', ')}, not ${JSON.stringify(fields.permission_mode)}`);
    }
    role.permission_mode = fields.permission_mode;
  }
  if (fields.agent !== undefined) {
    const kinds = ['huddle', ...AGENT_KINDS] as const;
    if (!(kinds as readonly unknown[]).includes(fields.agent)) {
      throw new RoleError(`${source}: agent must be one of ${kinds.join(', ')}, not ${JSON.stringify(fields.agent)}`);
    }
    role.agent = fields.agent as RoleDefinition['agent'];
  }
  return role;
}

/** Built-in roles plus the workspace's `.team/roles/*.md` (which win on a name clash). */
export function loadRoles(teamDir: string, env: NodeJS.ProcessEnv = process.env): { roles: Map<string, RoleDefinition>; errors: string[] } {
  const roles = new Map(BUILT_IN.map((role) => [role.name, role]));
  const errors: string[] = [];
  const dir = path.join(teamDir, 'roles');
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.md'));
  } catch {
    return { roles, errors };
  }
  for (const file of files) {
    const source = path.join(dir, file);
    try {
      const text = readFileSync(source, 'utf8');
      const role = parseRole(path.basename(file, '.md'), text, source);
      // Auto mode and an external CLI from a role file wait for the person's trust (docs/trust.md).
      if (!roleFileTrusted(workspaceKey(path.dirname(teamDir)), file, text, env)) {
        if (role.permission_mode === 'auto') delete role.permission_mode;
        if (role.agent !== undefined && role.agent !== 'huddle') delete role.agent;
        if (role.plan_approver === 'auto-after') delete role.plan_approver;
      }
      roles.set(role.name, role);
    } catch (error) {
      errors.push((error as Error).message);
    }
  }
  return { roles, errors };
}
