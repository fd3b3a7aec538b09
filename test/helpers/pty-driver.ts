// Runs the built CLI in a real pseudo-terminal and reads the screen through a headless xterm,
// so tests see what a person would see. Waits poll the parsed screen, never sleep-and-hope.
import path from 'node:path';
import xterm from '@xterm/headless';
import * as pty from 'node-pty';

const { Terminal } = xterm;
// HUDDLE_TEST_CLI points at another build (one made into a temp directory, say) without touching dist/.
const CLI = process.env.HUDDLE_TEST_CLI ?? path.resolve(import.meta.dirname, '../../dist/cli.js');

const FRAME_BEGIN = '\x1b[?2026h';
const FRAME_END = '\x1b[?2026l';

export interface PtyOptions {
  /** The built CLI to run (default: CLI above). */
  cli?: string;
  args?: string[];
  cwd: string;
  env?: Record<string, string | undefined>;
  cols?: number;
  rows?: number;
}

export const KEYS = {
  enter: '\r',
  tab: '\t',
  shiftTab: '\x1b[Z',
  escape: '\x1b',
  up: '\x1b[A',
  down: '\x1b[B',
  pageUp: '\x1b[5~',
  pageDown: '\x1b[6~',
  ctrlC: '\x03',
  ctrlT: '\x14',
  ctrlO: '\x0f',
  alt: (digit: number) => `\x1b${digit}`,
};

export class PtyDriver {
  readonly term: InstanceType<typeof Terminal>;
  readonly process: pty.IPty;
  readonly exited: Promise<{ exitCode: number; signal?: number | undefined }>;
  bytesWritten = 0;
  #parsed: Promise<void> = Promise.resolve();
  /** Ink brackets every frame in a synchronized update; inside one, the screen is half drawn. */
  #inFrame = false;

  constructor(options: PtyOptions) {
    const cols = options.cols ?? 120;
    const rows = options.rows ?? 32;
    this.term = new Terminal({ cols, rows, allowProposedApi: true });
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
      XDG_STATE_HOME: process.env.XDG_STATE_HOME,
      CLAUDE_CONFIG_DIR: process.env.CLAUDE_CONFIG_DIR,
      TERM: 'xterm-256color',
      ...options.env,
    })) {
      if (value !== undefined) env[key] = value;
    }
    // Ink draws only the final frame when it thinks it runs in CI.
    env.CI = 'false';
    this.process = pty.spawn(process.execPath, [options.cli ?? CLI, ...(options.args ?? [])], { name: 'xterm-256color', cols, rows, cwd: options.cwd, env });
    this.process.onData((data) => {
      this.bytesWritten += Buffer.byteLength(data);
      const begin = data.lastIndexOf(FRAME_BEGIN);
      const end = data.lastIndexOf(FRAME_END);
      if (begin >= 0 || end >= 0) this.#inFrame = begin > end;
      this.#parsed = this.#parsed.then(() => new Promise<void>((resolve) => this.term.write(data, resolve)));
    });
    this.exited = new Promise((resolve) => this.process.onExit(resolve));
  }

  /** The visible screen as text, one line per row: never a frame half drawn (it waits for its end). */
  async screen(): Promise<string> {
    for (let waited = 0; this.#inFrame && waited < 2000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.#parsed;
    const buffer = this.term.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < this.term.rows; row++) lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true, 0, this.term.cols) ?? '');
    return lines.join('\n');
  }

  /** Whether the first place `needle` shows on screen is drawn in reverse video (a highlight), or undefined when it does not show. */
  async isInverse(needle: string): Promise<boolean | undefined> {
    await this.#parsed;
    const buffer = this.term.buffer.active;
    for (let row = 0; row < this.term.rows; row++) {
      const line = buffer.getLine(buffer.viewportY + row);
      const column = line?.translateToString(true, 0, this.term.cols).indexOf(needle) ?? -1;
      if (!line || column < 0) continue;
      // Columns are cells here: the tests look for ASCII text on rows of one-column characters.
      return Array.from({ length: needle.length }, (_, i) => line.getCell(column + i)?.isInverse() !== 0).every(Boolean);
    }
    return undefined;
  }

  async bufferType(): Promise<'normal' | 'alternate'> {
    await this.#parsed;
    return this.term.buffer.active.type;
  }

  /** Waits until the screen matches; throws with the screen when it does not in time. */
  async waitFor(match: string | RegExp | ((screen: string) => boolean), timeoutMs = 10_000): Promise<string> {
    const test = typeof match === 'function' ? match : (s: string) => (typeof match === 'string' ? s.includes(match) : match.test(s));
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = await this.screen();
      if (test(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`screen did not show ${String(match)} within ${timeoutMs} ms; it shows:\n${last}`);
  }

  write(data: string): void {
    this.process.write(data);
  }

  /** Types text one character at a time, as a person would (no paste detection). */
  async type(text: string): Promise<void> {
    for (const char of text) {
      this.process.write(char);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /**
   * Writes to the emulated screen only, in order with what the program wrote so far: what a real
   * terminal may leave behind when it is resized (rows reflowed or cut), which the program must
   * paint over.
   */
  scribble(text: string): void {
    this.#parsed = this.#parsed.then(() => new Promise<void>((resolve) => this.term.write(text, resolve)));
  }

  resize(cols: number, rows: number): void {
    this.process.resize(cols, rows);
    this.term.resize(cols, rows);
  }

  async kill(): Promise<void> {
    try {
      this.process.kill();
    } catch {
      // Already gone.
    }
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
    this.term.dispose();
  }
}
