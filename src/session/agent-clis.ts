// The other agents' CLIs a session could start as teammates (claude, gemini, codex, opencode): each found or
// not, its version against the range huddle was tested with. What `huddle doctor` reports; a face asks the
// session, the session knows the external agents' launch rules (agents/external/).
import { execFile } from 'node:child_process';
import { TESTED_VERSIONS, parseVersion, versionVerdict, versionWarning, type VersionVerdict } from '../agents/external/cli-versions.js';
import { ExternalAgentError, resolveLaunch, type AgentKind } from '../agents/external/launch.js';
import { loadSettings } from '../runtime/settings/load.js';
import { childEnvironment } from '../runtime/process/spawn.js';

/** Gemini's CLI takes seconds to print its version on a busy machine. */
const VERSION_TIMEOUT_MS = 30_000;

export interface CliCheck {
  kind: AgentKind;
  /** The program, when found. */
  command?: string;
  version?: string;
  tested: { oldest: string; tested: string };
  verdict: VersionVerdict | 'missing' | 'unknown';
  /** True when the settings name this kind's program (agents.<kind>). */
  configured: boolean;
  /** One line for a person, when something is off. */
  warning?: string;
}

export async function checkAgentClis(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<CliCheck[]> {
  const agents = loadSettings({ cwd, env }).settings.agents ?? {};
  const kinds = Object.keys(TESTED_VERSIONS) as AgentKind[];
  return Promise.all(
    kinds.map(async (kind): Promise<CliCheck> => {
      const range = TESTED_VERSIONS[kind]!;
      const configured = agents[kind] !== undefined;
      const base = { kind, tested: { oldest: range.oldest, tested: range.tested }, configured };
      let launch;
      try {
        launch = resolveLaunch(kind, { workspaceRoot: cwd, env });
      } catch (error) {
        if (!(error instanceof ExternalAgentError)) throw error;
        return { ...base, verdict: 'missing', ...(configured ? { warning: error.message } : {}) };
      }
      const output = await versionOutput(launch.command, { ...childEnvironment({}, env), ...launch.env });
      const version = parseVersion(output);
      if (!version)
        return {
          ...base,
          command: launch.command,
          verdict: 'unknown',
          warning: `\`${launch.command} --version\` printed no version${output.trim() ? `: ${output.trim().split('\n')[0]!.slice(0, 120)}` : ''}`,
        };
      const warning = versionWarning(kind, range, version);
      return { ...base, command: launch.command, version, verdict: versionVerdict(range, version), ...(warning ? { warning } : {}) };
    }),
  );
}

function versionOutput(command: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(command, ['--version'], { env, timeout: VERSION_TIMEOUT_MS, maxBuffer: 64 * 1024 }, (_error, stdout, stderr) =>
      resolve(`${stdout}\n${stderr}`),
    );
    child.stdin?.end();
  });
}
