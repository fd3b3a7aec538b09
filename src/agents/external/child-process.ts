// An external agent's program as a child process: started through the spawn seam (the sandbox's,
// when there is one) in its own process group, so that ending it ends what it started (its MCP
// servers, its shells); stdout read as JSON lines; the tail of stderr kept for error messages.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { killGroup, plainSpawn, type SpawnLike } from '../../runtime/process/spawn.js';

const STDERR_TAIL = 2000;

export interface AgentProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  spawn?: SpawnLike | undefined;
  /** 'ignore': stdin is /dev/null (a CLI that reads a piped stdin as more prompt never waits on it). */
  stdin?: 'pipe' | 'ignore';
  /** Each stdout line that parses as a JSON object. */
  onJson(value: Record<string, unknown>): void;
  /** Stdout lines that are not JSON (some CLIs print banners). */
  onText?(line: string): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
}

export class AgentProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  #stderr = '';
  #exited = false;

  /** Starts the program (the spawn seam may take a moment: the sandbox prepares first). */
  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const spawn = options.spawn ?? plainSpawn;
    const child = await spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    return new AgentProcess(child, options);
  }

  private constructor(child: ChildProcess, options: AgentProcessOptions) {
    this.child = child;
    let resolveExit!: () => void;
    this.exited = new Promise((resolve) => (resolveExit = resolve));
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    if (this.child.stdout) {
      const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
      lines.on('line', (line) => {
        const trimmed = line.trim();
        if (!trimmed) return;
        let value: unknown;
        try {
          value = JSON.parse(trimmed);
        } catch {
          options.onText?.(trimmed);
          return;
        }
        if (value && typeof value === 'object' && !Array.isArray(value)) options.onJson(value as Record<string, unknown>);
      });
    }
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.#exited) return;
      this.#exited = true;
      resolveExit();
      options.onExit(code, signal);
    };
    this.child.on('error', (error) => {
      this.#stderr += `\n${error.message}`;
      finish(null, null);
    });
    // 'close': stdout is fully read, so every line came before the exit is reported.
    this.child.on('close', (code, signal) => finish(code, signal));
  }

  get running(): boolean {
    return !this.#exited;
  }

  /** What it wrote on stderr lately (the last 2000 characters). */
  get stderr(): string {
    return this.#stderr;
  }

  /** The last lines of its stderr, for an error message. */
  stderrTail(lines = 5): string {
    return this.#stderr.trim().split('\n').slice(-lines).join('\n');
  }

  write(value: unknown): boolean {
    if (!this.running || !this.child.stdin || this.child.stdin.destroyed) return false;
    this.child.stdin.write(`${JSON.stringify(value)}\n`);
    return true;
  }

  /** Closes its stdin, then SIGTERM to the group, then SIGKILL after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (!this.running) return;
    this.child.stdin?.end();
    const politely = await Promise.race([this.exited.then(() => true), delay(Math.min(500, graceMs)).then(() => false)]);
    if (politely) return;
    killGroup(this.child.pid, 'SIGTERM');
    const ended = await Promise.race([this.exited.then(() => true), delay(graceMs).then(() => false)]);
    if (!ended) killGroup(this.child.pid, 'SIGKILL');
    await this.exited;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
