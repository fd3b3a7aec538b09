/**
 * The real Claude Code CLI (`@anthropic-ai/claude-code`, a pinned devDependency), run headless
 * against the fake Messages API: for the test that compares huddle's stream-json with Claude
 * Code's, and for the caching benchmark that measures what Claude Code is billed.
 *
 * The npm package's `bin/claude.exe` is a placeholder that its postinstall replaces with the
 * native binary of the platform package (an optional dependency); where the postinstall did not
 * run, the platform package's binary is used directly.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.HUDDLE_BENCH_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CLAUDE_CODE_INSTALL = "npm install (the pinned devDependency @anthropic-ai/claude-code brings Claude Code's native binary)";

/** The path of Claude Code's native binary, or undefined when it is not installed. */
export function findClaudeCode(): string | undefined {
  const require = createRequire(path.join(ROOT, 'package.json'));
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve('@anthropic-ai/claude-code/package.json'));
  } catch {
    return undefined;
  }
  const wrapperBin = path.join(packageDir, 'bin', 'claude.exe');
  // The placeholder is a few hundred bytes; the native binary is hundreds of megabytes.
  if (existsSync(wrapperBin) && statSync(wrapperBin).size > 1_000_000) return wrapperBin;
  const platform = `${process.platform}-${process.arch}`;
  for (const suffix of [platform, `${platform}-musl`]) {
    try {
      const dir = path.dirname(createRequire(path.join(packageDir, 'package.json')).resolve(`@anthropic-ai/claude-code-${suffix}/package.json`));
      const bin = path.join(dir, process.platform === 'win32' ? 'claude.exe' : 'claude');
      if (existsSync(bin)) return bin;
    } catch {
      // not this variant
    }
  }
  return undefined;
}

export function claudeCodeVersion(): string | undefined {
  try {
    const require = createRequire(path.join(ROOT, 'package.json'));
    return (JSON.parse(readFileSync(require.resolve('@anthropic-ai/claude-code/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

export interface ClaudeCodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/**
 * Runs `claude -p PROMPT --output-format FORMAT --verbose` in `cwd` against `baseUrl`, offline:
 * a throwaway HOME and config dir, no telemetry, updates, error reports or other traffic, no
 * session files, and the file and shell tools allowed without asking (as root, Claude Code
 * refuses --dangerously-skip-permissions).
 */
export async function runClaudeCode(options: {
  bin: string;
  cwd: string;
  baseUrl: string;
  prompt: string;
  format?: 'stream-json' | 'json' | 'text';
  timeoutMs?: number;
  args?: string[];
  home?: string;
}): Promise<ClaudeCodeRun> {
  // `home`: the caller's (kept, so a later run finds the sessions); else a fresh one, removed after.
  const home = options.home ?? mkdtempSync(path.join(os.tmpdir(), 'huddle-cc-home-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: 'sk-test-claude-code-0123456789',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    TMPDIR: process.env.TMPDIR ?? os.tmpdir(),
  };
  const format = options.format ?? 'stream-json';
  const args = [
    '-p',
    options.prompt,
    '--output-format',
    format,
    ...(format === 'stream-json' ? ['--verbose'] : []),
    ...(options.args ?? ['--no-session-persistence', '--allowedTools', 'Bash Write Read Edit']),
  ];
  const started = performance.now();
  try {
    return await new Promise<ClaudeCodeRun>((resolve, reject) => {
      const child = spawn(options.bin, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 });
      });
    });
  } finally {
    if (!options.home) rmSync(home, { recursive: true, force: true });
  }
}
