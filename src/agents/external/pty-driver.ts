// A `command` teammate: any program in a real PTY (node-pty), in the sandbox like every external
// agent (node-pty starts bubblewrap, which starts the program), its screen kept by a headless
// terminal (@xterm/headless) that the console renders in its pane. A turn types the text into the
// program and lasts until it has been quiet for a moment (it waits for input again); keys from
// the console go straight to it. Both packages load only when such a teammate starts: node-pty is
// a native addon (an optional dependency: without it this kind says what to install).
import type { IPty } from 'node-pty';
import { ExternalAgentError } from './launch.js';
import type { DriverSetup, ExternalDriver, TurnReport, TurnSink } from './driver.js';

/** Output-free time after which the program counts as waiting for input. */
export const QUIET_MS = 400;
const COLS = 100;
const ROWS = 30;

/** What the console needs of a program's screen. */
export interface TerminalView {
  readonly cols: number;
  readonly rows: number;
  /** The visible screen, one string per row. */
  lines(): string[];
  /** Called (at most once per output burst) when the screen changed. */
  onChange(listener: () => void): () => void;
  /** Keys typed by the person into the pane, as terminal input. */
  write(data: string): void;
  resize(cols: number, rows: number): void;
  readonly running: boolean;
}

type HeadlessTerminal = import('@xterm/headless').Terminal;

interface Turn {
  resolve(report: TurnReport): void;
  timer: NodeJS.Timeout | undefined;
  interrupted: boolean;
}

/** The file, arguments and environment that run `argv` (in the sandbox). */
export type CommandLine = (argv: readonly string[], env: Record<string, string>) => Promise<{ file: string; args: string[]; env: Record<string, string> }>;

const asItIs: CommandLine = async ([file = '', ...args], env) => ({ file, args, env });

export class PtyDriver implements ExternalDriver, TerminalView {
  readonly kind = 'command' as const;
  readonly #setup: DriverSetup;
  readonly #commandLine: CommandLine;
  #pty: IPty | undefined;
  #term: HeadlessTerminal | undefined;
  #starting: Promise<void> | undefined;
  #exit: { code: number; signal?: number | undefined } | undefined;
  #turn: Turn | undefined;
  #cols = COLS;
  #rows = ROWS;
  readonly #listeners = new Set<() => void>();
  #parsed: Promise<void> = Promise.resolve();

  constructor(setup: DriverSetup, commandLine: CommandLine = asItIs) {
    this.#setup = setup;
    this.#commandLine = commandLine;
  }

  get cols(): number {
    return this.#cols;
  }

  get rows(): number {
    return this.#rows;
  }

  get running(): boolean {
    return this.#pty !== undefined && this.#exit === undefined;
  }

  lines(): string[] {
    const term = this.#term;
    if (!term) return [];
    const buffer = term.buffer.active;
    const rows: string[] = [];
    for (let row = 0; row < term.rows; row++) rows.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '');
    return rows;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  write(data: string): void {
    if (this.running) this.#pty!.write(data);
  }

  resize(cols: number, rows: number): void {
    this.#cols = Math.max(10, cols);
    this.#rows = Math.max(3, rows);
    if (this.running) this.#pty!.resize(this.#cols, this.#rows);
    this.#term?.resize(this.#cols, this.#rows);
  }

  async runTurn(text: string, sink: TurnSink, signal: AbortSignal): Promise<TurnReport> {
    try {
      await (this.#starting ??= this.#start());
    } catch (error) {
      return { outcome: 'failed', text: '', error: (error as Error).message };
    }
    if (this.#exit) return this.#exitReport();
    // Interrupted while the program started: its abort event has fired already.
    if (signal.aborted) return { outcome: 'interrupted', text: '' };
    return new Promise<TurnReport>((resolve) => {
      const turn: Turn = { resolve: () => undefined, timer: undefined, interrupted: false };
      const onAbort = () => {
        turn.interrupted = true;
        this.#pty?.write('\x03');
        this.#quietLater(turn);
      };
      turn.resolve = (report) => {
        if (this.#turn !== turn) return;
        this.#turn = undefined;
        clearTimeout(turn.timer);
        signal.removeEventListener('abort', onAbort);
        // What the screen shows now, for the log and for anyone without the pane.
        const screen = this.#screenText();
        if (screen && report.outcome !== 'failed') sink.text(screen);
        resolve(report);
      };
      this.#turn = turn;
      signal.addEventListener('abort', onAbort, { once: true });
      if (text) this.#pty!.write(`${text.replace(/\r?\n/g, '\r')}\r`);
      this.#quietLater(turn);
    });
  }

  reset(): void {
    // A program has no session to forget; /clear only clears the pane.
  }

  async close(): Promise<void> {
    this.#turn?.resolve({ outcome: 'interrupted', text: '' });
    const pty = this.#pty;
    if (!pty || this.#exit) return;
    const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()));
    try {
      pty.kill('SIGHUP');
    } catch {
      // Already gone.
    }
    const ended = await Promise.race([exited.then(() => true), delay(this.#setup.killGraceMs).then(() => false)]);
    if (!ended) {
      try {
        pty.kill('SIGKILL');
      } catch {
        // Gone.
      }
    }
  }

  async #start(): Promise<void> {
    let pty: typeof import('node-pty');
    try {
      pty = await import('node-pty');
    } catch {
      throw new ExternalAgentError(
        "command teammates run their program in a terminal, which needs node-pty: install it with `npm install -g node-pty` next to huddle (or `npm install node-pty` in huddle's directory)",
      );
    }
    const { Terminal } = (await import('@xterm/headless')).default;
    const term = new Terminal({ cols: this.#cols, rows: this.#rows, allowProposedApi: true, scrollback: 1000 });
    this.#term = term;
    const { command, args, cwd, env } = this.#setup;
    const line = await this.#commandLine([command, ...args], { ...env, TERM: 'xterm-256color' });
    const child = pty.spawn(line.file, line.args, { name: 'xterm-256color', cols: this.#cols, rows: this.#rows, cwd, env: line.env });
    this.#pty = child;
    child.onData((data) => {
      this.#parsed = this.#parsed.then(() => new Promise<void>((resolve) => term.write(data, resolve)));
      void this.#parsed.then(() => {
        for (const listener of this.#listeners) listener();
      });
      if (this.#turn) this.#quietLater(this.#turn);
    });
    child.onExit((exit) => {
      this.#exit = { code: exit.exitCode, signal: exit.signal };
      void this.#parsed.then(() => {
        for (const listener of this.#listeners) listener();
        this.#turn?.resolve(this.#exitReport());
      });
    });
  }

  /** The turn ends once the program has said nothing for QUIET_MS (it waits for input). */
  #quietLater(turn: Turn): void {
    clearTimeout(turn.timer);
    turn.timer = setTimeout(() => {
      void this.#parsed.then(() => turn.resolve({ outcome: turn.interrupted ? 'interrupted' : 'end_turn', text: this.#screenText() }));
    }, QUIET_MS);
  }

  #exitReport(): TurnReport {
    const exit = this.#exit!;
    return { outcome: 'exited', text: this.#screenText(), error: `exited with code ${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}` };
  }

  /** The screen without its trailing empty rows. */
  #screenText(): string {
    const rows = this.lines();
    while (rows.length && !rows.at(-1)!.trim()) rows.pop();
    return rows.map((row) => row.trimEnd()).join('\n');
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
