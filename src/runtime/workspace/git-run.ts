// Running git for huddle's own worktree work, through runtime/git/host-git.ts. In the main checkout
// git runs as huddle, held to the repository pinned when the session opened, with nothing it could
// run from a file an agent wrote. In a teammate's checkout everything under .git is the
// teammate's to write, config included, so huddle's git there runs in the sandbox too.
import { sandboxedSpawn } from '../sandbox/index.js';
import { gitCommand, pinRepository, runGit, type GitResult } from '../git/host-git.js';

export type { GitResult };

export class WorktreeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorktreeError';
  }
}

/**
 * git in the repository at `cwd`, pinned (GIT_DIR, GIT_COMMON_DIR as resolved first); `pinned:
 * false` for a repository git itself makes or finds (a clone being made, a fresh clone's checkout).
 */
export async function git(cwd: string, args: string[], options: { pinned?: boolean } = {}): Promise<GitResult> {
  const result = await runGit(cwd, args, { pin: options.pinned === false ? undefined : pinRepository(cwd) });
  if (result.code === -1) throw new WorktreeError(`cannot run git (${result.stderr}); install git or spawn without worktree`);
  return result;
}

/** Runs git and throws its own message on failure. */
export async function gitOk(cwd: string, args: string[], what: string, options: { pinned?: boolean } = {}): Promise<string> {
  const result = await git(cwd, args, options);
  if (result.code !== 0) throw new WorktreeError(`${what} failed: ${firstLines(result.stderr || result.stdout)}`);
  return result.stdout;
}

/**
 * git in a teammate's checkout, sandboxed: read-only, or (`write`) allowed to write only that
 * checkout and its git dir. Without a sandbox, the settings that run programs are switched off.
 */
export async function gitInCheckout(cwd: string, args: string[], options: { writable?: string[]; readable?: string[] } = {}): Promise<GitResult> {
  const writable = options.writable ?? [];
  // Not pinned: the checkout is the teammate's, and the sandbox is what confines it.
  const command = await gitCommand(cwd, args, { checkout: true });
  const { child } = await sandboxedSpawn(['git', ...command.args], {
    cwd,
    writable,
    readable: options.readable ?? [],
    mode: writable.length ? 'write' : 'read-only',
    owner: 'huddle-git',
    env: command.env,
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
