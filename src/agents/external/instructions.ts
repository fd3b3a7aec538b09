// What an external teammate is told about itself (docs/contract.md#injected-turns): the identity line every agent's
// system prompt begins with, how the team works through huddle's MCP server (its tools named the
// way that CLI names MCP tools), its role, its worktree, and the project's instructions
// (CLAUDE.md, AGENTS.md), appended to the CLI's own system prompt or, where a CLI takes none,
// put before its first turn.
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { readProjectInstructions } from '../prompts/memory.js';
import { identityLine, type Identity } from '../prompts/prompts.js';
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
  const lines = [
    identityLine(identity),
    `You are a teammate in a team of AI coding agents (huddle), working in ${options.cwd}. Your lead is '${LEAD_NAME}'.`,
    '',
    `The team works through the tools of the MCP server "huddle": ${tools}. Use your own tools for files and commands.`,
    `- Work on the task you were given or claimed. Tasks live on a shared board: ${tool('task_list')}, ${tool('task_get')}, ${tool('claim_task')}, and ${tool('task_update')} with status completed when done. A turn starting <auto-claimed> means a task was claimed for you.`,
    `- When a task is done: mark it completed, report the result to ${LEAD_NAME} with ${tool('send_message')} (one or two sentences: what you did, which files), then end your turn. New work and messages reach you as new user turns.`,
    `- Messages reach you as a user turn that starts with <inbox>; "sender" says whether the user ("person"), a teammate ("agent") or huddle wrote each. A shutdown_request asks you to stop: answer it with ${tool('shutdown_response')} (approve unless something must finish first).`,
    '- Be concise; do not chat.',
  ];
  if (options.planMode) lines.push(`- You are in plan mode: read only until the lead approves your plan; send it with ${tool('plan_approval')}.`);
  if (options.roleBody?.trim()) lines.push('', options.roleBody.trim());
  if (options.worktreeNote) lines.push('', options.worktreeNote);
  const memory = readProjectInstructions({ workspaceRoot: options.workspaceRoot }).text;
  if (memory) lines.push('', memory);
  return lines.join('\n');
}
