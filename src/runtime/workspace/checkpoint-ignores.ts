// Whether new files and directories are ignored, asked of one long-lived `git check-ignore --stdin`
// per shadow (checkpoint-few-changes.ts, and the directory walk before a `git add -A` in
// checkpoints.ts) rather than of a git process per checkpoint or per level. git reads the ignore
// files once, so the process is only asked while the files that decide (the shadow's exclude, the
// workspace's .gitignore files, the user's global ignore file) keep the stat they had when it
// started; otherwise it is ended and the caller lets `git add -A` decide.
import { spawn, type ChildProcess } from 'node:child_process';
import { HARDENED, checkpointGitEnv } from './checkpoint-git.js';
import { atExit } from '../process/at-exit.js';

/** How long an answer may take before the process is given up on. */
const ANSWER_MS = 5_000;

export class IgnoreOracle {
  #child: ChildProcess | undefined;
  #stamp: string | undefined;
  #buffer = Buffer.alloc(0);
  #pending: Array<{ fields: string[]; resolve: (ignored: boolean | undefined) => void }> = [];

  constructor(
    private readonly root: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Which of `paths` (relative, `/`-separated) git ignores; undefined when it could not say. */
  async ignored(paths: string[], stamp: string): Promise<Set<string> | undefined> {
    if (this.#stamp !== stamp) this.close();
    const child = this.#start(stamp);
    if (!child?.stdin?.writable) return undefined;
    const answers = paths.map(
      (file) =>
        new Promise<boolean | undefined>((resolve) => {
          this.#pending.push({ fields: [], resolve });
          // `./` first: a name like `:(glob)x` is a path, not pathspec magic (which check-ignore reads only at the start).
          child.stdin!.write(`./${file}\0`);
        }),
    );
    // While answers are awaited, the process keeps huddle running; a git that stops answering is
    // ended (its answers never come) and git add -A decides instead.
    const stdout = child.stdout as unknown as { ref?: () => void; unref?: () => void };
    stdout.ref?.();
    const timer = setTimeout(() => this.close(), ANSWER_MS);
    const results = await Promise.all(answers);
    clearTimeout(timer);
    stdout.unref?.();
    if (results.some((r) => r === undefined)) return undefined;
    return new Set(paths.filter((_, i) => results[i]));
  }

  /** Ends the process and waits for it to exit (at most a second). */
  async end(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const exited =
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 1_000)))]);
    clearTimeout(timer);
  }

  close(): void {
    this.#child?.kill();
    this.#child = undefined;
    this.#stamp = undefined;
    this.#buffer = Buffer.alloc(0);
    for (const waiting of this.#pending.splice(0)) waiting.resolve(undefined);
  }

  #start(stamp: string): ChildProcess | undefined {
    if (this.#child) return this.#child;
    const child = spawn('git', [...HARDENED, 'check-ignore', '--stdin', '-z', '-v', '-n', '--no-index'], {
      cwd: this.root,
      env: { ...checkpointGitEnv(true), ...this.env },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    // Never what keeps huddle running: it ends with huddle (its stdin closes; ended outright at exit).
    child.unref();
    const cancelKill = atExit(() => child.kill());
    child.once('exit', cancelKill);
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    child.stdin!.on('error', () => this.close());
    child.once('error', () => this.close());
    child.once('exit', () => {
      if (this.#child === child) this.close();
    });
    child.stdout!.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#child = child;
    this.#stamp = stamp;
    return child;
  }

  /** Records of four NUL-terminated fields: source, line, pattern, path; ignored when a pattern that is not a negation matched. */
  #read(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (let nul = this.#buffer.indexOf(0); nul >= 0; nul = this.#buffer.indexOf(0)) {
      const field = this.#buffer.subarray(0, nul).toString('utf8');
      this.#buffer = this.#buffer.subarray(nul + 1);
      const waiting = this.#pending[0];
      if (!waiting) return this.close();
      waiting.fields.push(field);
      if (waiting.fields.length === 4) {
        this.#pending.shift();
        const [source, , pattern] = waiting.fields;
        waiting.resolve(Boolean(source) && !pattern!.startsWith('!'));
      }
    }
  }
}
