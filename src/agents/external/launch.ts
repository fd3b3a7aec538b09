// Which program an external teammate runs (docs/contract.md#lead-only): `agents.<kind>` in the settings
// (command, args, env), else the CLI's usual name on PATH. A missing program is one clear error
// for the lead, naming what to install; nothing is started.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../../runtime/settings/load.js';
import { AGENT_KINDS, type AgentKind } from '../../runtime/settings/schema.js';

export { AGENT_KINDS, type AgentKind } from '../../runtime/settings/schema.js';

/** `huddle` (the in-process loop, the default) or an external agent CLI. */
export type TeammateKind = 'huddle' | AgentKind;

export function isAgentKind(value: unknown): value is AgentKind {
  return typeof value === 'string' && (AGENT_KINDS as readonly string[]).includes(value);
}

/** The usual program of each CLI, and how a person gets it. */
const KNOWN: Record<Exclude<AgentKind, 'command'>, { program: string; install: string }> = {
  'claude-code': { program: 'claude', install: 'npm install -g @anthropic-ai/claude-code' },
  gemini: { program: 'gemini', install: 'npm install -g @google/gemini-cli' },
  codex: { program: 'codex', install: 'npm install -g @openai/codex' },
  opencode: { program: 'opencode', install: 'npm install -g opencode-ai' },
};

export interface LaunchSpec {
  kind: AgentKind;
  /** The program, as an absolute path when found on PATH. */
  command: string;
  /** Arguments before huddle's own (from the settings). */
  args: string[];
  /** Extra environment variables from the settings. */
  env: Record<string, string>;
}

/** The external agent could not be started: the message says what to install or set. */
export class ExternalAgentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExternalAgentError';
  }
}

export interface LaunchOptions {
  workspaceRoot: string;
  env?: NodeJS.ProcessEnv;
  /** The user's home, for the user settings file (tests). */
  home?: string;
  /** For `command`: the command line the spawn asked for (run with /bin/sh -c). */
  commandLine?: string | undefined;
}

/** Resolves what to start for `kind`; throws ExternalAgentError when it is not there. */
export function resolveLaunch(kind: AgentKind, options: LaunchOptions): LaunchSpec {
  const env = options.env ?? process.env;
  let configured: { command: string; args?: string[] | undefined; env?: Record<string, string> | undefined } | undefined;
  try {
    configured = loadSettings({ cwd: options.workspaceRoot, env, ...(options.home ? { home: options.home } : {}) }).settings.agents?.[kind];
  } catch (error) {
    throw new ExternalAgentError(`cannot start a ${kind} teammate: ${(error as Error).message}`);
  }
  if (kind === 'command') {
    if (options.commandLine) return { kind, command: '/bin/sh', args: ['-c', options.commandLine], env: configured?.env ?? {} };
    if (configured) return { kind, command: found(configured.command, env) ?? configured.command, args: configured.args ?? [], env: configured.env ?? {} };
    // Nothing asked for: the person's shell (a shell pane).
    return { kind, command: env.SHELL || '/bin/sh', args: [], env: {} };
  }
  const known = KNOWN[kind];
  const program = configured?.command ?? known.program;
  const command = found(program, env);
  if (!command) {
    const where = configured ? `'${program}' (agents.${kind}.command in the settings) was not found` : `'${program}' is not on PATH`;
    throw new ExternalAgentError(
      `cannot start a ${kind} teammate: ${where}; install it with \`${known.install}\`, or set agents.${kind}.command in .team/settings.json`,
    );
  }
  return { kind, command, args: configured?.args ?? [], env: configured?.env ?? {} };
}

/** The program's absolute path: itself when it has a slash, else the first match on PATH. */
export function found(program: string, env: NodeJS.ProcessEnv): string | undefined {
  if (program.includes('/')) return executable(program) ? path.resolve(program) : undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

function executable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
