// The pinned Claude Code CLI (@anthropic-ai/claude-code, a devDependency) for tests that drive the
// real thing: where its native binary is, and an environment that keeps it offline and out of the
// person's own config (a temp HOME). A test that needs it fails under CI=true when it is missing,
// and is skipped locally with a line saying what to install.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './run-cli.js';

export const CLAUDE_CODE_BIN = path.join(REPO_ROOT, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');

/** Undefined when the pinned CLI runs here, else why not. */
export function claudeCodeMissing(): string | undefined {
  if (!existsSync(CLAUDE_CODE_BIN)) return `${CLAUDE_CODE_BIN} is missing: run npm install (it is a devDependency)`;
  // Its postinstall copies the native binary over a small placeholder; npm runs it only when allowed.
  if (statSync(CLAUDE_CODE_BIN).size < 1_000_000) return `${CLAUDE_CODE_BIN} is the placeholder: its postinstall did not run (allowScripts in package.json), run npm rebuild @anthropic-ai/claude-code`;
  try {
    execFileSync(CLAUDE_CODE_BIN, ['--version'], { env: { PATH: process.env.PATH ?? '', HOME: REPO_ROOT }, timeout: 60_000, stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `${CLAUDE_CODE_BIN} --version failed: ${(error as Error).message}`;
  }
}

/** For describe.skipIf: throws under CI (the part must be there), true (skip) locally when missing. */
export function skipWithoutClaudeCode(): boolean {
  const missing = claudeCodeMissing();
  if (!missing) return false;
  if (process.env.CI === 'true') throw new Error(`Claude Code is required under CI: ${missing}`);
  console.warn(`skipping the Claude Code tests: ${missing}`);
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
