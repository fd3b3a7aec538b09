// System prompts and the fixed turns huddle injects (docs/contract.md#messages, docs/contract.md#injected-turns):
// their text is in this folder's Markdown templates (templates.ts).
import { fill } from './templates.js';

/** The lead's name is fixed (docs/contract.md#vocabulary). */

export interface Identity {
  name: string;
  role: string;
  team: string;
}

/** The first line of every system prompt (docs/contract.md#injected-turns). */
export function identityLine({ name, role, team }: Identity): string {
  return fill('identity-line', { name, role, team });
}

export function leadSystemPrompt(identity: Identity, workspaceRoot: string): string {
  return fill('lead-system', { identity: identityLine(identity), workspaceRoot });
}

export function teammateSystemPrompt(identity: Identity, workspaceRoot: string, roleBody: string, lead: string): string {
  const own = fill('teammate-system', { identity: identityLine(identity), workspaceRoot, lead });
  return roleBody ? `${own}\n\n${roleBody.trim()}` : own;
}

export function autoClaimTurn(task: { id: number; subject: string; description?: string }): string {
  return fill('turn-auto-claimed', { id: task.id, subject: task.subject, description: task.description ?? '' });
}
