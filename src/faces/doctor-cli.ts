// `huddle doctor [--json]`: which agent CLI each external teammate kind would run in this
// workspace (agents.<kind>.command in the trusted settings, else its usual program on PATH), its
// installed version (`PROGRAM --version`, run with huddle's secrets left out) and whether that is
// in the range huddle is tested with (docs/agent-clis.md), so a CLI update that changed its protocol
// is named before a teammate fails on it. Exit 0 when every CLI found is in its range (a kind not
// installed is only reported), 1 when one is outside it, is configured but missing, or prints no
// version; 2 on broken settings.
import path from 'node:path';
import { SettingsError } from '../runtime/settings/errors.js';
import { checkAgentClis } from '../session/agent-clis.js';

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
