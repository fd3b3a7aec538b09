// What the command line asks for, parsed by cli.ts and read by the faces and the session core.
// Kept apart from cli.ts so that the faces import it without importing the entry point.
import type { PermissionMode } from '../runtime/permissions/permission-mode.js';

export interface CliOptions {
  prompt: string | undefined;
  json: boolean;
  resume: boolean;
  fresh: boolean;
  cwd: string | undefined;
  model: string | undefined;
  apiKeyFile: string | undefined;
  maxTurns: number | undefined;
  permissionMode?: PermissionMode | undefined;
  /** --budget-usd / --budget-minutes / --budget-turns: the team's hard limits. */
  budget?: { usd?: number; minutes?: number; turns?: number };
  command: string | undefined;
}
