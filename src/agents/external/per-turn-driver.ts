// CLIs that take one prompt per process in their non-interactive JSON mode (gemini, codex, opencode): each
// user turn starts the program with the turn's text, reads its JSON lines until it exits, and the
// next turn continues the same session (its id from the first turn's lines). The first turn of a
// session carries huddle's instructions (these CLIs take no extra system prompt on the command
// line). An interrupt ends the process (SIGINT, then SIGTERM/SIGKILL to its group).
import type { SpawnLike } from '../../runtime/process/spawn.js';
import { killGroup } from '../../runtime/process/spawn.js';
import type { TokenUsage } from '../../runtime/model/pricing.js';
import { AgentProcess } from './child-process.js';
import type { DriverSetup, ExternalDriver, TurnReport, TurnSink } from './driver.js';
import type { AgentKind } from './launch.js';

/** What one line of the CLI's output meant, as the turn accumulates it. */
export interface LineState {
  sink: TurnSink;
  text: string;
  usage: TokenUsage | undefined;
  costUsd: number | undefined;
  error: string | undefined;
  /** The CLI said the turn is over, and how. */
  done: 'success' | 'error' | undefined;
  session: string | undefined;
  model: string | undefined;
}

export abstract class PerTurnDriver implements ExternalDriver {
  abstract readonly kind: AgentKind;
  protected readonly setup: DriverSetup;
  /** The spawn seam its program starts through (the sandbox's). */
  protected readonly spawn: SpawnLike | undefined;
  #session: string | undefined;
  #process: AgentProcess | undefined;

  constructor(setup: DriverSetup, spawn?: SpawnLike) {
    this.setup = setup;
    this.spawn = spawn;
    this.#session = setup.session;
  }

  /** The program's arguments for one turn: a new session (with the instructions) or `session`'s next turn. */
  protected abstract argsFor(text: string, session: string | undefined): string[];
  /** Extra environment for the program (where a CLI reads its MCP servers from a file, say). */
  protected environment(): Record<string, string> {
    return {};
  }
  /** Applies one JSON line of the CLI's output to the turn. */
  protected abstract onLine(line: Record<string, unknown>, state: LineState): void;
  /** Why the program failed, from what it printed (the end of its stderr unless the CLI says better). */
  protected failureReason(child: AgentProcess): string | undefined {
    return child.stderrTail() || undefined;
  }
  /** Checked once before the first turn: why this program cannot be driven (an unsupported version), if so. */
  protected preflight(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }
  #preflight: Promise<string | undefined> | undefined;

  /** The signal that interrupts a turn (SIGTERM, SIGKILL follow if it does not end). */
  protected readonly interruptSignal: NodeJS.Signals = 'SIGINT';
  /** A CLI that takes huddle's instructions in its own configuration gets the bare text. */
  protected firstPrompt(text: string): string {
    return `${this.setup.instructions}\n\n---\n\n${text || '(begin)'}`;
  }

  /** Runs the program once with `args` (through the same spawn seam) and gives its output. */
  protected probe(args: string[]): Promise<string> {
    return new Promise((resolve) => {
      let output = '';
      AgentProcess.start({
        command: this.setup.command,
        args,
        cwd: this.setup.cwd,
        env: { ...this.setup.env, ...this.environment() },
        spawn: this.spawn,
        stdin: 'ignore',
        onJson: (line) => (output += `${JSON.stringify(line)}\n`),
        onText: (line) => (output += `${line}\n`),
        onExit: () => resolve(output),
      }).catch(() => resolve(output));
    });
  }

  async runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport> {
    const refused = await (this.#preflight ??= this.preflight());
    if (refused) return { outcome: 'failed', text: '', error: refused };
    return this.#runTurn(text, sink, signal);
  }

  #runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport> {
    const session = this.#session;
    const prompt = session ? text : this.firstPrompt(text);
    const state: LineState = { sink, text: '', usage: undefined, costUsd: undefined, error: undefined, done: undefined, session: undefined, model: undefined };
    return new Promise<TurnReport>((resolve) => {
      let interrupted = false;
      let child: AgentProcess | undefined;
      const onAbort = () => {
        interrupted = true;
        killGroup(child?.child.pid, this.interruptSignal);
        setTimeout(() => void child?.stop(this.setup.killGraceMs), 2000).unref();
      };
      AgentProcess.start({
        command: this.setup.command,
        args: this.argsFor(prompt, session),
        cwd: this.setup.cwd,
        env: { ...this.setup.env, ...this.environment() },
        spawn: this.spawn,
        // Per-turn CLIs take the prompt as an argument; codex reads a piped stdin as more of it.
        stdin: 'ignore',
        onJson: (line) => {
          this.onLine(line, state);
          if (state.session && state.session !== this.#session) {
            this.#session = state.session;
            sink.session(state.session, state.model);
          }
        },
        onExit: (code, exitSignal) => {
          this.#process = undefined;
          signal.removeEventListener('abort', onAbort);
          const base = {
            text: state.text,
            ...(state.usage ? { usage: state.usage } : {}),
            ...(state.costUsd !== undefined ? { costUsd: state.costUsd } : {}),
            ...(state.model ? { model: state.model } : {}),
          };
          if (interrupted) return resolve({ outcome: 'interrupted', ...base });
          if (state.done === 'success' || (state.done === undefined && code === 0)) return resolve({ outcome: 'end_turn', ...base });
          const how = exitSignal ? `was killed (${exitSignal})` : `exited with code ${code}`;
          const why = state.error ?? (child ? this.failureReason(child) : undefined);
          resolve({ outcome: 'failed', ...base, error: `${this.kind} ${how}${why ? `: ${why}` : ''}` });
        },
      }).then(
        (started) => {
          child = started;
          this.#process = started;
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        },
        (error: Error) => resolve({ outcome: 'failed', text: '', error: `${this.kind} could not start: ${error.message}` }),
      );
    });
  }

  /** The session the next turn continues (undefined: a new one). */
  protected get session(): string | undefined {
    return this.#session;
  }

  /** Continues `id` from the next turn (a session found other than by the turn's lines). */
  protected adoptSession(id: string, sink: TurnSink, model?: string): void {
    this.#session = id;
    sink.session(id, model);
  }

  reset(): void {
    this.#session = undefined;
  }

  async close(): Promise<void> {
    await this.#process?.stop(this.setup.killGraceMs);
  }
}
