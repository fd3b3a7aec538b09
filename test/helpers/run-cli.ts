// Runs the built CLI (dist/cli.js) as a subprocess, with a clean environment, for end-to-end tests.
// `npm test` builds first; run `npm run build` before running these tests on their own.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// HUDDLE_TEST_CLI points at another build (one made into a temp directory, say) without touching dist/.
export const CLI_PATH = process.env.HUDDLE_TEST_CLI ?? path.join(REPO_ROOT, 'dist', 'cli.js');
export const TEST_API_KEY = 'sk-test-key-1234567890';

export interface CliResult {
  /** The exit code, or null when the process was killed by a signal (e.g. the timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
}

export interface RunCliOptions {
  cwd?: string;
  /**
   * Added to the clean base environment. A key set to undefined removes it from the base
   * (e.g. `{ ANTHROPIC_API_KEY: undefined }` for a run without a key).
   */
  env?: Record<string, string | undefined>;
  /** The process is killed (SIGKILL) after this long; default 20 s. */
  timeoutMs?: number;
  /** Handed the started process (a test that stops it midway). */
  onSpawn?: (child: ChildProcess) => void;
}

/** The environment a CLI run starts from: no inherited secrets or settings, fast retries. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? os.homedir(),
    ANTHROPIC_API_KEY: TEST_API_KEY,
    HUDDLE_RETRY_BASE_MS: '5',
  };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  // The test process's own config directory (isolated-config.ts): trust records stay out of ~.
  if (process.env.XDG_CONFIG_HOME) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
  // …and its own state directory: checkpoint shadows of temporary workspaces stay out of ~/.local/state.
  if (process.env.XDG_STATE_HOME) env.XDG_STATE_HOME = process.env.XDG_STATE_HOME;
  // …and Claude Code's user settings: the machine's ~/.claude/settings.json never reaches a test.
  if (process.env.CLAUDE_CONFIG_DIR) env.CLAUDE_CONFIG_DIR = process.env.CLAUDE_CONFIG_DIR;
  return env;
}

export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  if (!existsSync(CLI_PATH)) {
    return Promise.reject(new Error(`${CLI_PATH} is missing: run 'npm run build' first (npm test does)`));
  }
  const env: Record<string, string> = baseEnv();
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const timeoutMs = options.timeoutMs ?? 20_000;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    options.onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, durationMs: Math.round(performance.now() - started), timedOut });
    });
  });
}

export interface Workspace {
  /** The real path of a fresh temporary directory. */
  dir: string;
  cleanup(): void;
}

export function makeWorkspace(prefix = 'huddle-ws-'): Workspace {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
