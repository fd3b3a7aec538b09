// System prompts and the fixed turns huddle injects (docs/contract.md#messages, docs/contract.md#injected-turns):
// their text is in this folder's Markdown templates (templates.ts).
import type { SystemPrompt } from '../../runtime/model/system-prompt.js';
import { fill } from './templates.js';

/** The lead's name is fixed (docs/contract.md#vocabulary). */

export interface Identity {
  name: string;
  role: string;
  team: string;
}

/** The first line of every agent's own system block (docs/contract.md#injected-turns). */
export function identityLine({ name, role, team }: Identity): string {
  return fill('identity-line', { name, role, team });
}

/** The block of a system prompt that is this agent's alone, after the shared one: who it is and where it works. */
export function agentBlock(identity: Identity, workspaceRoot: string): string {
  return fill('agent-system', { identity: identityLine(identity), workspaceRoot });
}

export function leadSystemPrompt(identity: Identity, workspaceRoot: string): SystemPrompt {
  return { shared: fill('lead-system', {}), own: agentBlock(identity, workspaceRoot) };
}

/**
 * A teammate's system prompt: the shared block is the same for every teammate of its role (huddle's
 * text, the role's), so siblings share its prompt cache; its name, workspace and worktree come after.
 */
export function teammateSystemPrompt(identity: Identity, workspaceRoot: string, roleBody: string, lead: string, worktreeNote?: string): SystemPrompt {
  const shared = fill('teammate-system', { lead });
  const own = agentBlock(identity, workspaceRoot);
  return {
    shared: roleBody.trim() ? `${shared}\n\n${roleBody.trim()}` : shared,
    own: worktreeNote ? `${own}\n\n${worktreeNote}` : own,
  };
}

export function autoClaimTurn(task: { id: number; subject: string; description?: string }): string {
  return fill('turn-auto-claimed', { id: task.id, subject: task.subject, description: task.description ?? '' });
}
