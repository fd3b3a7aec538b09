// The versions of each agent CLI that huddle is tested with (docs/agent-clis.md): the pinned
// devDependencies its CI runs as teammates. `oldest` is the oldest release whose protocol the
// driver follows (older ones are refused where the driver depends on it, and `huddle doctor` says
// so); a release newer than `tested` is allowed, with a warning from `huddle doctor`.
import type { AgentKind } from './launch.js';

export interface TestedRange {
  /** The npm package a person installs it from. */
  package: string;
  oldest: string;
  tested: string;
}

export const TESTED_VERSIONS: Partial<Record<AgentKind, TestedRange>> = {
  'claude-code': { package: '@anthropic-ai/claude-code', oldest: '2.1.330', tested: '2.1.330' },
  gemini: { package: '@google/gemini-cli', oldest: '0.61.0', tested: '0.61.0' },
  codex: { package: '@openai/codex', oldest: '0.169.0', tested: '0.169.0' },
  opencode: { package: 'opencode-ai', oldest: '1.18.33', tested: '1.18.33' },
};

/** The first x.y.z in a CLI's `--version` output ("codex-cli 0.169.0", "2.1.330 (Claude Code)"). */
export function parseVersion(output: string): string | undefined {
  return /\b(\d+\.\d+\.\d+)\b/.exec(output)?.[1];
}

/** Compares two x.y.z versions by their numbers (pre-release tags are not used by these CLIs' releases). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export type VersionVerdict = 'tested' | 'older' | 'newer';

export function versionVerdict(range: TestedRange, version: string): VersionVerdict {
  if (compareVersions(version, range.oldest) < 0) return 'older';
  if (compareVersions(version, range.tested) > 0) return 'newer';
  return 'tested';
}

/** One line for a version outside the range (undefined when it is in it). */
export function versionWarning(kind: AgentKind, range: TestedRange, version: string): string | undefined {
  const verdict = versionVerdict(range, version);
  const span = range.oldest === range.tested ? range.tested : `${range.oldest} to ${range.tested}`;
  if (verdict === 'older')
    return `${kind} ${version} is older than huddle supports (tested: ${span}); update it with \`npm install -g ${range.package}@${range.tested}\``;
  if (verdict === 'newer')
    return `${kind} ${version} is newer than huddle was tested with (${span}); if its teammates misbehave, \`npm install -g ${range.package}@${range.tested}\``;
  return undefined;
}
