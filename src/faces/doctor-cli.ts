// `huddle doctor [--json]`: which agent CLI each external teammate kind would run in this
// workspace (agents.<kind>.command in the trusted settings, else its usual program on PATH), its
// installed version (`PROGRAM --version`, run with huddle's secrets left out) and whether that is
// in the range huddle is tested with (docs/agent-clis.md), so a CLI update that changed its protocol
// is named before a teammate fails on it. Exit 0 when every CLI found is in its range (a kind not
// installed is only reported), 1 when one is outside it, is configured but missing, or prints no
// version; 2 on broken settings.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { TESTED_VERSIONS, parseVersion, versionVerdict, versionWarning, type VersionVerdict } from '../agents/external/cli-versions.js';
import { ExternalAgentError, resolveLaunch, type AgentKind } from '../agents/external/launch.js';
import { loadSettings } from '../runtime/settings/load.js';
import { SettingsError } from '../runtime/settings/errors.js';
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

export async function runDoctorCommand(options: { cwd: string | undefined; json: boolean }, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const root = path.resolve(options.cwd ?? process.cwd());
  let checks;
  try {
    checks = await checkAgentClis(root, env);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`huddle: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const failing = checks.some((c) => c.warning !== undefined);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ agentClis: checks })}\n`);
    return failing ? 1 : 0;
  }
  const lines = [`agent CLIs for ${root}:`];
  for (const c of checks) {
    const tested = c.tested.oldest === c.tested.tested ? c.tested.tested : `${c.tested.oldest}–${c.tested.tested}`;
    const state = c.verdict === 'missing' ? 'not installed' : c.verdict === 'unknown' ? 'version unknown' : c.verdict === 'tested' ? 'ok' : c.verdict;
    lines.push(`  ${c.kind.padEnd(12)} ${(c.version ?? '-').padEnd(10)} ${state.padEnd(14)} tested ${tested}${c.command ? `  ${c.command}` : ''}`);
  }
  for (const c of checks) if (c.warning) lines.push(`warning: ${c.warning}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return failing ? 1 : 0;
}
