// The pinned Claude Code CLI (test/helpers/claude-code.ts finds its native binary) for the tests
// that run it as a huddle teammate: its path, whether the tests may run, and an environment that
// keeps it offline and out of the person's own config (a temp HOME). A test that needs it fails
// under CI=true when it is missing, and is skipped locally with a line saying what to install.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { CLAUDE_CODE_INSTALL, findClaudeCode } from './claude-code.js';

/** The native binary (where the tests point huddle's agents.claude-code.command). */
export const CLAUDE_CODE_BIN = findClaudeCode() ?? 'claude';

/** For describe.skipIf: throws under CI (the part must be there), true (skip) locally when missing. */
export function skipWithoutClaudeCode(): boolean {
  if (findClaudeCode()) return false;
  const missing = `Claude Code's native binary is not installed: ${CLAUDE_CODE_INSTALL}`;
  if (process.env.CI === 'true') throw new Error(`Claude Code is required under CI: ${missing}`);
  console.warn(`skipping the Claude Code teammate tests: ${missing}`);
  return true;
}

/** Claude Code's environment in tests: its own HOME, no telemetry, no update checks, nothing but the fake API. */
export function claudeCodeEnv(home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}
