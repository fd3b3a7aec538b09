// Running git for huddle's own worktree work. In the main checkout git runs as itself (its config
// and hooks are the person's, kept read-only to agents). In a teammate's checkout everything under
// .git is the teammate's to write, config included, so huddle's git there runs in the sandbox too:
// a planted core.fsmonitor or filter then runs confined like any command the teammate runs.
import { execa } from 'execa';
import { childEnv, sandboxedSpawn } from '../sandbox/index.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class WorktreeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorktreeError';
  }
}

/** Never wait on a prompt or an editor: huddle runs git with no one at its terminal. */
const QUIET_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no' };

/** Settings that would run a program from a config file, turned off for git in a teammate's checkout. */
const NO_CONFIGURED_PROGRAMS = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'diff.external=', '-c', 'core.pager=cat'];

export async function git(cwd: string, args: string[]): Promise<GitResult> {
  const result = await execa('git', args, { cwd, reject: false, stdin: 'ignore', stripFinalNewline: false, env: QUIET_ENV });
  if (typeof result.exitCode !== 'number') {
    throw new WorktreeError(`cannot run git (${result.shortMessage ?? 'not found'}); install git or spawn without worktree`);
  }
  return { code: result.exitCode, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
}

/** Runs git and throws its own message on failure. */
export async function gitOk(cwd: string, args: string[], what: string): Promise<string> {
  const result = await git(cwd, args);
  if (result.code !== 0) throw new WorktreeError(`${what} failed: ${firstLines(result.stderr || result.stdout)}`);
  return result.stdout;
}

/**
 * git in a teammate's checkout, sandboxed: read-only, or (`write`) allowed to write only that
 * checkout and its git dir. Without a sandbox, the settings that run programs are switched off.
 */
export async function gitInCheckout(cwd: string, args: string[], options: { writable?: string[]; readable?: string[] } = {}): Promise<GitResult> {
  const writable = options.writable ?? [];
  const { child } = await sandboxedSpawn(['git', ...NO_CONFIGURED_PROGRAMS, ...args], {
    cwd,
    writable,
    readable: options.readable ?? [],
    mode: writable.length ? 'write' : 'read-only',
    owner: 'huddle-git',
    env: { ...childEnv(), ...QUIET_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
    network: { enabled: false },
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
  const code = await new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('close', (c) => resolve(c ?? 128));
  });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

export async function gitInCheckoutOk(cwd: string, args: string[], what: string, options: { writable?: string[]; readable?: string[] } = {}): Promise<string> {
  const result = await gitInCheckout(cwd, args, options);
  if (result.code !== 0) throw new WorktreeError(`${what} failed: ${firstLines(result.stderr || result.stdout)}`);
  return result.stdout;
}

export function firstLines(text: string, count = 3): string {
  return text.trim().split('\n').slice(0, count).join(' ').trim() || 'no output from git';
}

/** Paths from `git status --porcelain -z`. */
export function parseStatus(out: string): string[] {
  const fields = out.split('\0');
  const files: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    files.push(field.slice(3));
    if (field[0] === 'R' || field[0] === 'C') i++; // a rename's second field is its old name
  }
  return files;
}
