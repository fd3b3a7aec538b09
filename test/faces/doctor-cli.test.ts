// `huddle doctor` names the installed version of each agent CLI a teammate would run (the one
// configured in the settings, else its program on PATH) and warns when it is outside the range
// huddle is tested with (docs/agent-clis.md); the programs here are scripts that print versions.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TESTED_VERSIONS } from '../../src/agents/external/cli-versions.js';
import { makeWorkspace, runCli, type Workspace } from '../helpers/run-cli.js';
import { trustWorkspace } from '../helpers/trust.js';

let ws: Workspace;
let bin: string;
beforeEach(() => {
  ws = makeWorkspace('huddle-doctor-');
  bin = path.join(ws.dir, 'bin');
  mkdirSync(bin);
});
afterEach(() => ws.cleanup());

function program(name: string, output: string): string {
  const file = path.join(bin, name);
  writeFileSync(file, `#!/bin/sh\necho "${output}"\n`);
  chmodSync(file, 0o755);
  return file;
}

function configure(agents: Record<string, { command: string }>): void {
  mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
  writeFileSync(path.join(ws.dir, '.team', 'settings.json'), JSON.stringify({ agents }));
  trustWorkspace(ws.dir);
}

const tested = (kind: 'claude-code' | 'gemini' | 'codex' | 'opencode') => TESTED_VERSIONS[kind]!.tested;

describe('huddle doctor', () => {
  it('names each CLI and its version; exit 0 when all are in the tested range', async () => {
    program('claude', `${tested('claude-code')} (Claude Code)`);
    program('gemini', tested('gemini'));
    program('codex', `codex-cli ${tested('codex')}`);
    program('opencode', tested('opencode'));
    const result = await runCli(['doctor', '--json'], { cwd: ws.dir, env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(result.code, result.stderr).toBe(0);
    const { agentClis } = JSON.parse(result.stdout);
    expect(agentClis.map((c: { kind: string; version: string; verdict: string; command: string }) => [c.kind, c.version, c.verdict, c.command])).toEqual([
      ['claude-code', tested('claude-code'), 'tested', path.join(bin, 'claude')],
      ['gemini', tested('gemini'), 'tested', path.join(bin, 'gemini')],
      ['codex', tested('codex'), 'tested', path.join(bin, 'codex')],
      ['opencode', tested('opencode'), 'tested', path.join(bin, 'opencode')],
    ]);
  });

  it('warns for a configured CLI older or newer than tested, or missing; exit 1', async () => {
    configure({
      codex: { command: program('old-codex', 'codex-cli 0.98.0') },
      'claude-code': { command: program('new-claude', '99.0.0 (Claude Code)') },
      gemini: { command: path.join(ws.dir, 'no-such-gemini') },
    });
    const result = await runCli(['doctor'], { cwd: ws.dir, env: { PATH: '/usr/bin:/bin' } });
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`agent CLIs for ${ws.dir}:`);
    expect(lines.find((l) => l.trim().startsWith('codex'))).toMatch(/^ {2}codex +0\.98\.0 +older /);
    expect(lines.find((l) => l.trim().startsWith('claude-code'))).toMatch(/^ {2}claude-code +99\.0\.0 +newer /);
    expect(lines.find((l) => l.trim().startsWith('gemini'))).toMatch(/not installed/);
    const warnings = lines.filter((l) => l.startsWith('warning: '));
    expect(warnings).toEqual([
      expect.stringContaining(`claude-code 99.0.0 is newer than huddle was tested with (${tested('claude-code')})`),
      expect.stringContaining('no-such-gemini'),
      `warning: codex 0.98.0 is older than huddle supports (tested: ${tested('codex')}); update it with \`npm install -g @openai/codex@${tested('codex')}\``,
    ]);
  });

  it('reports a CLI that is not installed without failing when nothing configures it', async () => {
    const result = await runCli(['doctor'], { cwd: ws.dir, env: { PATH: '/usr/bin:/bin' } });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^ {2}codex +- +not installed/m);
    expect(result.stdout).not.toContain('warning:');
  });
});
