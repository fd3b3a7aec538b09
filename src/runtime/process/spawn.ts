// The one seam through which huddle starts programs on an agent's behalf (hooks, verify commands,
// stdio MCP servers): a function shaped like child_process.spawn. The sandbox (src/runtime/sandbox/)
// passes its own, which wraps the program in the OS sandbox; the default runs it as is.
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { isSecretEnvName } from '../secrets.js';

/** Like child_process.spawn; may take a moment to prepare (the sandbox may start a network filter first). */
export type SpawnLike = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess | Promise<ChildProcess>;

export const plainSpawn: SpawnLike = (command, args, options) => nodeSpawn(command, args, options);

/**
 * Secrets of huddle itself; nothing it starts for an agent may see them: the model's key, its
 * gateway's headers (runtime/custom-headers.ts) and address (a gateway's URL may carry a token or
 * a password; a program that needs the model is given huddle's relay instead), and the team's
 * database (its URL may carry the password; libpq's own variables, which pg reads too).
 */
export const HIDDEN_ENV: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_CUSTOM_HEADERS',
  'HUDDLE_API_KEY',
  'HUDDLE_TEAM_URL',
  'PGPASSWORD',
  'PGPASSFILE',
];

/**
 * `base` without huddle's secrets and without any credential-named variable (GH_TOKEN, *_TOKEN,
 * *_KEY, *_SECRET, *_PASSWORD: docs/trust.md#secrets-and-files), with `extra` on top: a credential
 * reaches a program huddle starts only when the person's trusted settings name it in `extra`.
 */
export function childEnvironment(extra: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !HIDDEN_ENV.includes(key) && !isSecretEnvName(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Ends a whole process group (a detached child leads its own); quiet when it is already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: gone.
    }
  }
}
