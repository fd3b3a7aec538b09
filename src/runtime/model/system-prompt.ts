// A system prompt in two blocks, so that a team's agents share their prompt cache
// (docs/contract.md#injected-turns): `shared`, the same bytes for every agent of a role (huddle's
// text for the role, the project's instructions), marked as a cache breakpoint; then `own`, what
// belongs to this agent alone (its name, its workspace). The API caches the prefix tools → system
// → messages up to a breakpoint, so a sibling's first call reads the tools and the shared block
// its first teammate wrote, and pays full price only from its own block on.

export interface SystemPrompt {
  shared: string;
  own: string;
}

/** A plain string is one block (a subagent's, an external CLI's, a one-off request's). */
export type SystemInput = string | SystemPrompt;

/** The whole text, as the model reads it (the shared block, then the agent's own). */
export function systemText(system: SystemInput): string {
  if (typeof system === 'string') return system;
  return [system.shared, system.own].filter(Boolean).join('\n\n');
}
