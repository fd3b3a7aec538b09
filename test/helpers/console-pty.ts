// The console in a PTY, for scenario tests: the built CLI (dist/cli.js) in a real pseudo-terminal at a
// given size, on the fake Messages API, in a temp workspace, its config in the test file's isolated
// directory (isolated-config.ts). The screen is read through @xterm/headless (pty-driver.ts); every
// wait is on the screen, with a deadline that only catches a hang and reports the last screen.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { startFakeApi, type FakeApi } from './fake-api.js';
import { KEYS, PtyDriver } from './pty-driver.js';

export { KEYS };

/** A key by name (KEYS), or the raw bytes of one. */
export type Key = Exclude<keyof typeof KEYS, 'alt'> | (string & {});

/**
 * How long a wait may take before it fails with the screen: long enough for a machine whose cores
 * are all busy (a wait returns as soon as the screen matches; this only bounds a hang). The test's
 * own timeout often ends first; useConsoles then prints the last screen.
 */
export const WAIT_MS = 60_000;

export interface ConsoleOptions {
  cols?: number;
  rows?: number;
  /** The built CLI (default dist/cli.js, or HUDDLE_TEST_CLI): a test that builds its own passes it. */
  cli?: string;
  /** Arguments after `huddle` (`['--budget-usd', '0.5']`, `['demo']`). */
  args?: string[];
  /** Added to the console's environment (or removed, with undefined); the API key and fake URL come first. */
  env?: Record<string, string | undefined>;
  /** A fake API the test already started and keeps; by default the console gets one of its own, closed with it. */
  fake?: FakeApi;
  /** The workspace (the console's cwd); by default a fresh temp directory, removed on close. */
  workspace?: string;
}

export interface WaitOptions {
  timeoutMs?: number;
}

export class ConsolePty {
  readonly driver: PtyDriver;
  readonly fake: FakeApi;
  readonly workspace: string;
  readonly exited: PtyDriver['exited'];
  #ownFake: boolean;
  #ownWorkspace: boolean;
  #lastScreen = '';
  #closed = false;

  constructor(driver: PtyDriver, fake: FakeApi, workspace: string, own: { fake: boolean; workspace: boolean }) {
    this.driver = driver;
    this.fake = fake;
    this.workspace = workspace;
    this.exited = driver.exited;
    this.#ownFake = own.fake;
    this.#ownWorkspace = own.workspace;
  }

  /** The headless terminal (titles, bells, OSC handlers, the buffer). */
  get term(): PtyDriver['term'] {
    return this.driver.term;
  }

  async screen(): Promise<string> {
    this.#lastScreen = await this.driver.screen();
    return this.#lastScreen;
  }

  /** Types text one key at a time, as a person would. */
  async type(text: string): Promise<void> {
    await this.driver.type(text);
  }

  /** Presses keys in order, each its own write: names from KEYS (`'enter'`, `'pageUp'`) or raw bytes. */
  press(...keys: Key[]): void {
    for (const key of keys) this.driver.write(key in KEYS && key !== 'alt' ? (KEYS[key as keyof typeof KEYS] as string) : key);
  }

  /** Writes bytes as they are, in one write (a paste, or keys the console reads at once). */
  write(data: string): void {
    this.driver.write(data);
  }

  resize(cols: number, rows: number): void {
    this.driver.resize(cols, rows);
  }

  /** Waits until the screen shows `needle` (text or pattern); returns the screen. */
  waitForText(needle: string | RegExp, options: WaitOptions = {}): Promise<string> {
    const shows = typeof needle === 'string' ? (s: string) => s.includes(needle) : (s: string) => needle.test(s);
    return this.waitForScreen(shows, { ...options, what: String(needle) });
  }

  /** Waits until `predicate` holds for the screen; fails after the deadline with the last screen. */
  async waitForScreen(predicate: (screen: string) => boolean, options: WaitOptions & { what?: string } = {}): Promise<string> {
    const timeoutMs = options.timeoutMs ?? WAIT_MS;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = await this.screen();
      if (predicate(screen)) return screen;
      if (Date.now() > deadline) {
        throw new Error(`the console did not show ${options.what ?? 'the screen waited for'} within ${timeoutMs} ms; it shows:\n${screen}`);
      }
      // Poll the parsed screen: the console redraws on its own schedule, and a busy machine slows both.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Whether the first place `needle` shows is in reverse video (see PtyDriver.isInverse). */
  isInverse(needle: string): Promise<boolean | undefined> {
    return this.driver.isInverse(needle);
  }

  /** Ends the console (and the fake and workspace it owns); resolves to its last screen. */
  async close(): Promise<string> {
    if (this.#closed) return this.#lastScreen;
    this.#closed = true;
    // The screen as the console left it: a failed test reports it (useConsoles).
    this.#lastScreen = await this.driver.screen().catch(() => this.#lastScreen);
    await this.driver.kill();
    if (this.#ownFake) await this.fake.close();
    if (this.#ownWorkspace) rmSync(this.workspace, { recursive: true, force: true });
    return this.#lastScreen;
  }
}

/** Starts the console; close it (or start it through useConsoles, which closes it after the test). */
export async function startConsole(options: ConsoleOptions = {}): Promise<ConsolePty> {
  const fake = options.fake ?? (await startFakeApi());
  const workspace = options.workspace ?? mkdtempSync(path.join(os.tmpdir(), 'huddle-console-'));
  const driver = new PtyDriver({
    cwd: workspace,
    cols: options.cols ?? 120,
    rows: options.rows ?? 32,
    ...(options.args ? { args: options.args } : {}),
    ...(options.cli ? { cli: options.cli } : {}),
    env: { ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5', ...options.env },
  });
  return new ConsolePty(driver, fake, workspace, { fake: options.fake === undefined, workspace: options.workspace === undefined });
}

/**
 * For a test file: a `start` that opens consoles which are closed after each test, and whose last
 * screens are printed when the test fails (a timeout of the test included), so a failure shows
 * what the person would have seen.
 */
export function useConsoles(): (options?: ConsoleOptions) => Promise<ConsolePty> {
  const open: ConsolePty[] = [];
  let lastScreens: string[] = [];
  beforeEach((context) => {
    lastScreens = [];
    context.onTestFailed(() => {
      for (const screen of lastScreens) console.error(`the console's last screen:\n${screen}`);
    });
  });
  afterEach(async () => {
    for (const tty of open.splice(0)) lastScreens.push(await tty.close());
  });
  return async (options) => {
    const tty = await startConsole(options);
    open.push(tty);
    return tty;
  };
}
