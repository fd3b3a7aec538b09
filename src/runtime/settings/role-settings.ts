// What the settings say about one role (the lead's role is "lead"): its overrides, its verify
// command and its tool access, in one place for whoever spawns an agent of that role.
import type { RoleOverride, Settings } from './schema.js';

export interface RoleSettings extends RoleOverride {
  /** The verify command for tasks this role completes (settings verify.roles, else verify.command). */
  verify?: string;
}

export function roleSettings(settings: Settings, role: string): RoleSettings {
  const out: RoleSettings = { ...(settings.roles?.[role] ?? {}) };
  const verify = settings.verify?.roles?.[role] ?? settings.verify?.command;
  if (verify) out.verify = verify;
  return out;
}
