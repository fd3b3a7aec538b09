// What an external teammate is told about itself (docs/contract.md#injected-turns): the identity line every agent's
// system prompt begins with, how the team works through huddle's MCP server (its tools named the
// way that CLI names MCP tools), its role, its worktree, and the project's instructions
// (CLAUDE.md, AGENTS.md), appended to the CLI's own system prompt or, where a CLI takes none,
// put before its first turn.
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { readProjectInstructions } from '../prompts/memory.js';
import { identityLine, type Identity } from '../prompts/prompts.js';
import { fill } from '../prompts/templates.js';
import type { AgentKind } from './launch.js';

const TEAM_TOOLS = ['task_list', 'task_get', 'claim_task', 'task_update', 'task_create', 'send_message', 'read_inbox', 'idle', 'shutdown_response'];

/** How each CLI names a tool of the MCP server `huddle`. */
export function mcpToolName(kind: AgentKind, tool: string): string {
  switch (kind) {
    case 'claude-code':
      return `mcp__huddle__${tool}`;
    case 'gemini':
      return `mcp_huddle_${tool}`;
    case 'opencode':
      return `huddle_${tool}`;
    default:
      return tool;
  }
}

export interface InstructionOptions {
  identity: Identity;
  kind: AgentKind;
  /** Where it works (the workspace, or its worktree). */
  cwd: string;
  /** The team's workspace root (for the project's instructions). */
  workspaceRoot: string;
  roleBody?: string | undefined;
  worktreeNote?: string | undefined;
  planMode?: boolean;
}

export function externalInstructions(options: InstructionOptions): string {
  const { identity, kind } = options;
  const tool = (name: string) => mcpToolName(kind, name);
  const tools = TEAM_TOOLS.map(tool).join(', ');
  const named = Object.fromEntries(
    ['task_list', 'task_get', 'claim_task', 'task_update', 'send_message', 'shutdown_response', 'plan_approval'].map((name) => [name, tool(name)]),
  );
  const lines = [
    fill('external-teammate', { identity: identityLine(identity), cwd: options.cwd, lead: LEAD_NAME, tools, planMode: Boolean(options.planMode), ...named }),
  ];
  if (options.roleBody?.trim()) lines.push('', options.roleBody.trim());
  if (options.worktreeNote) lines.push('', options.worktreeNote);
  const memory = readProjectInstructions({ workspaceRoot: options.workspaceRoot }).text;
  if (memory) lines.push('', memory);
  return lines.join('\n');
}
