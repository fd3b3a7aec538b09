// git as the checkpoints run it (checkpoints.ts): a minimal environment (no API keys or tokens reach
// git or anything it starts), never a prompt, and with the settings that would run a program turned
// off: fsmonitor, hooks (a reference-transaction hook fires on every ref update), pagers, external
// diffs. In the shadow repository no global or system config is read at all, so a clean/smudge
// filter a .gitattributes names has no program behind it. Kept apart from git-run.ts so that both can
// move onto one hardened helper later.
import { spawn } from 'node:child_process';

export interface CheckpointGitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export const HARDENED = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'diff.external=',
  '-c',
  'core.sshCommand=false',
  '-c',
  'protocol.allow=never',
  '-c',
  'protocol.file.allow=always',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

export interface GitCall {
  /** Extra environment (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE). */
  env?: Record<string, string>;
  cwd?: string;
  input?: Buffer | string;
  /** Read no global or system config (the shadow repository). */
  isolated?: boolean;
}

/** The environment git gets: what it needs to run, nothing of huddle's own (keys, tokens). */
export function checkpointGitEnv(isolated: boolean): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_AUTHOR_NAME: 'huddle',
    GIT_AUTHOR_EMAIL: 'huddle@localhost',
    GIT_COMMITTER_NAME: 'huddle',
    GIT_COMMITTER_EMAIL: 'huddle@localhost',
  };
  if (isolated) Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });
  return env;
}

export function runGit(args: string[], call: GitCall = {}): Promise<CheckpointGitResult> {
  return new Promise((resolve) => {
    const child = spawn('git', [...HARDENED, ...args], {
      cwd: call.cwd ?? '/',
      env: { ...checkpointGitEnv(call.isolated ?? false), ...call.env },
      stdio: [call.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (error) => resolve({ code: 127, stdout: Buffer.alloc(0), stderr: error.message }));
    child.once('close', (code) => resolve({ code: code ?? 128, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    if (call.input !== undefined) {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(call.input);
    }
  });
}

export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** Runs git; its stdout as text, or a CheckpointError saying what failed. */
export async function gitText(args: string[], call: GitCall, what: string): Promise<string> {
  const result = await runGit(args, call);
  if (result.code !== 0) throw new CheckpointError(`${what}: ${result.stderr.trim().split('\n').slice(0, 2).join(' ') || `git exited ${result.code}`}`);
  return result.stdout.toString('utf8');
}

/** `producer | consumer`: a pack from one repository read into another. */
export function gitPipe(producer: { args: string[]; call: GitCall }, consumer: { args: string[]; call: GitCall }): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    const left = spawn('git', [...HARDENED, ...producer.args], {
      cwd: producer.call.cwd ?? '/',
      env: { ...checkpointGitEnv(producer.call.isolated ?? false), ...producer.call.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const right = spawn('git', [...HARDENED, ...consumer.args], {
      cwd: consumer.call.cwd ?? '/',
      env: { ...checkpointGitEnv(consumer.call.isolated ?? false), ...consumer.call.env },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    left.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    right.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    left.stdout.pipe(right.stdin);
    right.stdin.on('error', () => undefined);
    left.stdin.on('error', () => undefined);
    left.stdin.end(producer.call.input ?? '');
    let pending = 2;
    let ok = true;
    const done = (code: number | null) => {
      if (code !== 0) ok = false;
      if (--pending === 0) resolve({ ok, stderr: stderr.trim() });
    };
    left.once('error', () => done(127));
    right.once('error', () => done(127));
    left.once('close', done);
    right.once('close', done);
  });
}
