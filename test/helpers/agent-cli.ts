// The pinned agent CLIs (devDependencies @google/gemini-cli and @openai/codex, next to Claude Code)
// for the tests that run them as huddle teammates: found in node_modules/.bin (HUDDLE_TEST_GEMINI /
// HUDDLE_TEST_CODEX point at another build). A test that needs one fails under CI=true when it is
// missing, and is skipped locally with a line saying what to install.
import path from 'node:path';
import { found } from '../../src/agents/external/launch.js';
import { REPO_ROOT } from './run-cli.js';

const CLIS = {
  gemini: { program: 'gemini', variable: 'HUDDLE_TEST_GEMINI', package: '@google/gemini-cli' },
  codex: { program: 'codex', variable: 'HUDDLE_TEST_CODEX', package: '@openai/codex' },
} as const;

export type PinnedCli = keyof typeof CLIS;

/** The CLI's program: the variable's path, else the pinned one in node_modules/.bin. */
export function pinnedCli(kind: PinnedCli): string | undefined {
  const cli = CLIS[kind];
  const chosen = process.env[cli.variable];
  if (chosen) return found(chosen, process.env);
  return found(path.join(REPO_ROOT, 'node_modules', '.bin', cli.program), {});
}

/** For describe.skipIf: throws under CI (the CLI must be there), true (skip) locally when it is missing. */
export function skipWithoutCli(kind: PinnedCli): boolean {
  if (pinnedCli(kind)) return false;
  const cli = CLIS[kind];
  const missing = `${cli.package} is not installed: run npm install (it is a pinned devDependency), or set ${cli.variable} to its path`;
  if (process.env.CI === 'true') throw new Error(`the ${kind} CLI is required under CI: ${missing}`);
  console.warn(`skipping the ${kind} teammate tests: ${missing}`);
  return true;
}
