// The MCP stdio transport, started through huddle's injectable spawn (the SDK's own transport calls
// child_process itself, so the sandbox could not wrap it). Messages are JSON lines on stdin/stdout;
// stderr is kept (its last lines) to say why a server died; the server runs in its own process
// group so that closing it also ends what it started (an npx wrapper's node, say).
import type { ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, type SpawnLike } from '../process/spawn.js';
import { atExit } from '../process/at-exit.js';

const STDERR_LINES = 20;
const CLOSE_GRACE_MS = 2_000;

export interface SpawnStdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  spawn: SpawnLike;
}

export class SpawnStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #params: SpawnStdioParams;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #stderr: string[] = [];
  #partialStderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(params: SpawnStdioParams) {
    this.#params = params;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The server's last stderr lines, for saying why it failed. */
  get stderrTail(): string {
    return [...this.#stderr, this.#partialStderr].filter(Boolean).join('\n');
  }

  /** Forgets stderr so far (a server's start-up chatter says nothing about why it later died). */
  forgetStderr(): void {
    this.#stderr = [];
    this.#partialStderr = '';
  }

  /** How the process ended, once it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.#exit;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error('SpawnStdioTransport already started');
    const { command, args, env, cwd, spawn } = this.#params;
    // The spawn may take a moment (a sandbox prepares first); a start() that fails rejects either way.
    return Promise.resolve()
      .then(() => spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true }))
      .then((child) => this.#attach(child));
  }

  #attach(child: ChildProcess): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#child = child;
      liveServers.add(child);
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
      });
      child.once('close', (code, signal) => {
        this.#exit ??= { code, signal };
        liveServers.delete(child);
        if (this.#child === child) this.#child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.#buffer.append(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.#buffer.readMessage();
          } catch (error) {
            // A line that is not JSON-RPC (a server logging to stdout): skip it, keep the rest.
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => this.#keepStderr(chunk.toString('utf8')));
    });
  }

  #keepStderr(text: string): void {
    const lines = (this.#partialStderr + text).split('\n');
    this.#partialStderr = lines.pop() ?? '';
    this.#stderr.push(...lines.filter((line) => line.trim()));
    if (this.#stderr.length > STDERR_LINES) this.#stderr.splice(0, this.#stderr.length - STDERR_LINES);
    if (this.#partialStderr.length > 2_000) this.#partialStderr = this.#partialStderr.slice(-2_000);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error('not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends stdin (a well-behaved server exits), then SIGTERM, then SIGKILL, to the whole group. */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (await within(CLOSE_GRACE_MS)) return;
    killGroup(child.pid, 'SIGTERM');
    if (await within(CLOSE_GRACE_MS)) return;
    killGroup(child.pid, 'SIGKILL');
    await within(CLOSE_GRACE_MS);
  }
}

// Servers still running when huddle exits must not outlive it.
const liveServers = new Set<ChildProcess>();
atExit(() => {
  for (const child of liveServers) killGroup(child.pid, 'SIGKILL');
});
