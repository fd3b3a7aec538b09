// Permission modes (how much an agent may do without asking), kept apart from the policy so that
// config, roles and the CLI can name them without loading the shell parser.
//   plan: read only (no file writes, only shell commands that read)
//   ask:  the console's default; commands off the allow-list and writes to protected paths wait for the person
//   auto: headless default; no questions. The deny-list of destructive commands holds in every mode.

import { PERMISSION_MODES, type PermissionMode } from '../vocabulary.js';

// The names live with the shared vocabulary, so that tools can name a mode without this floor.
export { PERMISSION_MODES, type PermissionMode };

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value);
}

/** How strict a mode is: a teammate may be made stricter than the run, never looser by the lead. */
export function strictness(mode: PermissionMode): number {
  return mode === 'plan' ? 2 : mode === 'ask' ? 1 : 0;
}

/**
 * A teammate's mode: the spawn's, else its role's, else none (it follows the run's). A mode the
 * lead asks for may not be looser than the run's: the person chose the run's mode, the model did not.
 */
export function teammateMode(options: { requested: PermissionMode | undefined; role: PermissionMode | undefined; run: PermissionMode; byLead: boolean }): {
  mode: PermissionMode | undefined;
  note?: string;
} {
  const { requested, role, run, byLead } = options;
  if (requested && byLead && strictness(requested) < strictness(run)) {
    return { mode: run, note: `permission_mode ${requested} is looser than this run's (${run}), so it runs in ${run}` };
  }
  const mode = requested ?? role;
  if (!mode) return { mode: undefined };
  return mode === run ? { mode } : { mode, note: `it runs in permission mode ${mode} (the run's is ${run})` };
}

/** Claude Code's permission modes (and huddle's own names) → huddle's. */
export const CLAUDE_PERMISSION_MODES: Readonly<Record<string, PermissionMode>> = {
  // Claude Code asks before edits and commands; huddle's ask mode asks before commands off the
  // allow-list and writes to protected paths (workspace edits go through, checkpointed).
  default: 'ask',
  // Edits without asking, commands asked: huddle's ask mode.
  acceptEdits: 'ask',
  // Nothing asked; huddle's deny-list of destructive commands still holds.
  bypassPermissions: 'auto',
  // Never ask, deny what is not pre-approved: ask mode with nobody asked (a question is refused).
  dontAsk: 'ask',
  plan: 'plan',
  ask: 'ask',
  auto: 'auto',
};

export function mapPermissionMode(mode: string): PermissionMode | undefined {
  return Object.hasOwn(CLAUDE_PERMISSION_MODES, mode) ? CLAUDE_PERMISSION_MODES[mode] : undefined;
}
