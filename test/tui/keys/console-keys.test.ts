// The key dispatcher over the console store: input intents, views, panes and quitting, with a
// recording controller in place of the team; then the real App under Ink (fake TTY streams, the
// frames read by @xterm/headless) with keys written faster than it renders.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import xterm from '@xterm/headless';
import { render, type Key } from 'ink';
import { createElement } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from '../../../src/tui/components/App.js';
import type { ConsoleController } from '../../../src/tui/console-controller.js';
import { ConsoleKeys } from '../../../src/tui/keys/console-keys.js';
import { createConsoleStore, emptyAgent, type ConsoleStore, type Flash } from '../../../src/tui/state/console-store.js';
import { InputHistory } from '../../../src/tui/state/input-history.js';
import { openPalette } from '../../../src/tui/commands/palette.js';
import { anchorRow, rowIndex } from '../../../src/tui/render/pane-window.js';

const { Terminal } = xterm;

function inkKey(flags: Partial<Key> = {}): Key {
  return {
    upArrow: false,
    downArrow: false,
    leftArrow: false,
    rightArrow: false,
    pageDown: false,
    pageUp: false,
    home: false,
    end: false,
    return: false,
    escape: false,
    ctrl: false,
    shift: false,
    tab: false,
    backspace: false,
    delete: false,
    meta: false,
    super: false,
    hyper: false,
    capsLock: false,
    numLock: false,
    ...flags,
  } as Key;
}

/** Named keys as useInput delivers them. */
const K = {
  enter: ['', inkKey({ return: true })],
  tab: ['', inkKey({ tab: true })],
  shiftTab: ['', inkKey({ tab: true, shift: true })],
  escape: ['', inkKey({ escape: true })],
  up: ['', inkKey({ upArrow: true })],
  down: ['', inkKey({ downArrow: true })],
  left: ['', inkKey({ leftArrow: true })],
  home: ['', inkKey({ home: true })],
  end: ['', inkKey({ end: true })],
  backspace: ['', inkKey({ backspace: true })],
  delete: ['', inkKey({ delete: true })],
  pageUp: ['', inkKey({ pageUp: true })],
  pageDown: ['', inkKey({ pageDown: true })],
  ctrl: (letter: string) => [letter, inkKey({ ctrl: true })] as const,
  alt: (char: string) => [char, inkKey({ meta: true })] as const,
} as const;

let dir: string;
let store: ConsoleStore;
let calls: string[];
let quits: number;
let keys: ConsoleKeys;
let history: InputHistory;

function recordingController(target: ConsoleStore, log: string[]): ConsoleController {
  return {
    sendTo: async (agent: string, text: string) => void log.push(`send ${agent}: ${text}`),
    interrupt: (agent: string) => (log.push(`interrupt ${agent}`), agent === 'alice'),
    flash: (text: string, tone: Flash['tone'] = 'info') => target.setState({ flash: { text, tone } }),
    answerApproval: (id: string, decision: string) => (log.push(`answer ${id} ${decision}`), `${decision}: ${id}`),
    // No agent here is a program in a terminal pane.
    terminal: () => undefined,
  } as unknown as ConsoleController;
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-keys-'));
  store = createConsoleStore({ model: 'm', endpoint: '' });
  store.setState((s) => ({ agents: { ...s.agents, alice: emptyAgent('alice', 'coder'), bob: emptyAgent('bob', 'tester') }, order: ['lead', 'alice', 'bob'] }));
  calls = [];
  quits = 0;
  history = InputHistory.forTeamDir(dir);
  keys = new ConsoleKeys({
    store,
    controller: recordingController(store, calls),
    history,
    quit: () => void quits++,
    paneSize: () => ({ width: 60, rows: 10 }),
  });
});

afterEach(() => {
  keys.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Feeds keys as useInput would: strings are typed (one read each), tuples are named keys. */
function feed(...inputs: Array<string | readonly [string, Key]>): void {
  for (const input of inputs) {
    if (typeof input === 'string') keys.onInput(input, inkKey());
    else keys.onInput(input[0], input[1]);
  }
}

const input = () => store.getState().input;

/** `count` one-row notices in an agent's pane. */
function fillPane(agent: string, count: number): void {
  const items = Array.from({ length: count }, (_, i) => ({ kind: 'notice' as const, id: 1_000_000 + i, text: `row ${i}`, tone: 'info' as const }));
  store.setState((s) => ({ agents: { ...s.agents, [agent]: { ...s.agents[agent]!, items } } }));
}

/** The top row of the lead's view while scrolled (60 columns, 10 rows as the test's keys are told). */
function topRow(): number {
  const items = store.getState().agents.lead!.items;
  const scroll = store.getState().scroll.lead!;
  return anchorRow(items, rowIndex(items, 60, store.getState().expanded.lead ?? false), scroll);
}

describe('input intents in the store', () => {
  it('type, move and delete at the cursor', () => {
    feed('h', 'e', 'l', 'l', 'o', K.left, K.left, K.backspace, 'L', K.end, ' world', K.home, K.delete, 'H');
    expect(input()).toEqual({ text: 'HeLlo world', cursor: 1 });
    feed(K.end, K.ctrl('w'));
    expect(input().text).toBe('HeLlo ');
    feed(K.ctrl('a'), '> ', K.ctrl('e'), 'x');
    expect(input()).toEqual({ text: '> HeLlo x', cursor: 9 });
    feed(K.ctrl('u'));
    expect(input()).toEqual({ text: '', cursor: 0 });
  });

  it('start a new line with a trailing backslash then Enter, or with Ctrl+J (a lone line feed)', () => {
    feed('one\\', K.enter, 'two', '\n', 'three');
    expect(input().text).toBe('one\ntwo\nthree');
    expect(calls).toEqual([]);
  });

  it('Enter sends the line to the agent in view, empties the input, scrolls to the bottom and keeps history', async () => {
    fillPane('lead', 100);
    feed(K.pageUp, K.pageUp);
    expect(store.getState().scroll.lead).toBeDefined();
    feed('first', K.enter, K.tab, 'second', K.enter, '   ', K.enter);
    await Promise.resolve();
    expect(calls).toEqual(['send lead: first', 'send alice: second']);
    expect(store.getState().scroll).toMatchObject({ lead: undefined, alice: undefined });
    expect(input().text).toBe('   '); // a blank line is not sent
    feed(K.ctrl('u'), 'draft', K.up);
    expect(input().text).toBe('second');
    feed(K.up, K.up);
    expect(input()).toEqual({ text: 'first', cursor: 5 });
    feed(K.down, K.down);
    expect(input().text).toBe('draft');
    expect(history.entries).toEqual(['first', 'second']);
  });

  it('a bracketed paste goes in whole, newlines and all, without submitting', () => {
    feed('> ');
    keys.onPaste('line one\r\nline two\ttabbed');
    expect(input().text).toBe('> line one\nline two\ttabbed');
    expect(calls).toEqual([]);
  });

  it('a read holding several keys applies them one by one, each on what the one before left', async () => {
    feed('/he\t');
    expect(input().text).toBe('/help ');
    feed(K.ctrl('u'), 'hi\rthere');
    await Promise.resolve();
    expect(calls).toEqual(['send lead: hi']);
    expect(input().text).toBe('there');
    feed('!\x7f\x7f\x15ok\r');
    await Promise.resolve();
    expect(calls).toEqual(['send lead: hi', 'send lead: ok']);
    expect(input().text).toBe('');
  });

  it('thousands of keys with no render between them all apply, in order', async () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`);
    for (const word of words) {
      for (const char of `${word}x`) feed(char);
      feed(K.backspace, K.enter);
    }
    await Promise.resolve();
    expect(calls).toEqual(words.map((word) => `send lead: ${word}`));
    expect(input().text).toBe('');
  });
});

describe('view, pane and console intents', () => {
  it('Tab, Shift+Tab and Alt+N move between panes and mark them read; Tab completes a slash command', () => {
    store.setState((s) => ({ agents: { ...s.agents, bob: { ...s.agents.bob!, unread: true } } }));
    feed(K.tab);
    expect(store.getState().focus).toBe('alice');
    feed(K.shiftTab, K.shiftTab);
    expect(store.getState().focus).toBe('bob');
    expect(store.getState().agents.bob!.unread).toBe(false);
    feed(K.alt('1'));
    expect(store.getState().focus).toBe('lead');
    feed(K.alt('7')); // no seventh pane
    expect(store.getState().focus).toBe('lead');
    feed('/sen', K.tab, 'al', K.tab);
    expect(input().text).toBe('/send alice ');
    expect(store.getState().focus).toBe('lead');
  });

  it('Esc and the key after it in one read act as that key; Esc then y does not answer a request', async () => {
    feed('/team', K.enter);
    await until(() => store.getState().view === 'team');
    feed(['', inkKey({ tab: true, meta: true })]);
    expect(store.getState()).toMatchObject({ view: 'pane', focus: 'alice' });
    store.setState({ approvals: [{ id: 'a1', agent: 'lead', tool: 'bash', summary: 'ls', reason: 'r', prefixes: [] }] });
    feed(K.ctrl('y'), K.alt('y'));
    expect(calls).toEqual([]);
    expect(input().text).toBe('y');
  });

  it('Ctrl+T and Ctrl+Y toggle their views, Esc closes a view and otherwise interrupts the agent in view', () => {
    feed(K.ctrl('t'));
    expect(store.getState().view).toBe('tasks');
    feed(K.ctrl('y'));
    expect(store.getState().view).toBe('approvals');
    feed(K.ctrl('y'));
    expect(store.getState().view).toBe('pane');
    feed(K.ctrl('t'), K.escape);
    expect(store.getState().view).toBe('pane');
    expect(calls).toEqual([]);
    feed(K.escape);
    expect(calls).toEqual(['interrupt lead']);
    expect(store.getState().flash).toEqual({ text: 'lead is not in a turn', tone: 'info' });
    feed(K.alt('2'), K.escape);
    expect(calls).toEqual(['interrupt lead', 'interrupt alice']);
  });

  it('Ctrl+O toggles tool results in the pane in view; PgUp/PgDn scroll it by a page, within what is there', () => {
    feed(K.ctrl('o'));
    expect(store.getState().expanded).toEqual({ lead: true });
    // An empty pane does not scroll at all.
    feed(K.pageUp);
    expect(store.getState().scroll.lead).toBeUndefined();
    // 100 one-row notices, a blank row between each two: 199 rows; a pane of 10 rows, a page of 9.
    fillPane('lead', 100);
    feed(K.pageUp);
    expect(topRow()).toBe(199 - 10 - 9);
    for (let i = 0; i < 40; i++) feed(K.pageUp);
    expect(topRow()).toBe(0); // bounded: never above the first row
    feed(K.pageDown, K.pageDown);
    expect(topRow()).toBe(18);
    for (let i = 0; i < 40; i++) feed(K.pageDown);
    expect(store.getState().scroll.lead).toBeUndefined(); // the last page follows the end again
    feed(K.home);
    expect(topRow()).toBe(0);
    feed(K.end);
    expect(store.getState().scroll.lead).toBeUndefined();
  });

  it('in the needs-you view, ↑/↓ select and y / n / a answer the selected request while nothing is typed', () => {
    const request = (id: string) => ({ id, agent: 'lead', tool: 'bash', summary: id, reason: 'r', prefixes: [] });
    store.setState({ approvals: [request('a1'), request('a2')] });
    feed(K.ctrl('y'), K.down, K.down, 'n');
    expect(store.getState().flash).toEqual({ text: 'deny: a2', tone: 'warn' });
    feed(K.up, 'Y');
    expect(store.getState().flash).toEqual({ text: 'approve: a1', tone: 'info' });
    feed('x', 'a');
    expect(calls).toEqual(['answer a2 deny', 'answer a1 approve']);
    expect(input().text).toBe('xa');
  });

  it('Ctrl+C interrupts a busy agent, else clears the input, else arms quitting; another key disarms; twice quits', () => {
    store.setState((s) => ({ agents: { ...s.agents, alice: { ...s.agents.alice!, status: 'working' } } }));
    feed(K.alt('2'), 'half', K.ctrl('c'));
    expect(calls).toEqual(['interrupt alice']);
    expect(input().text).toBe('half'); // the interrupt first; what is typed stays
    store.setState((s) => ({ agents: { ...s.agents, alice: { ...s.agents.alice!, status: 'idle' } } }));
    feed(K.ctrl('c'));
    expect(input().text).toBe('');
    expect(store.getState().quitArmed).toBe(false);
    feed(K.ctrl('c'));
    expect(store.getState().quitArmed).toBe(true);
    feed('x');
    expect(store.getState().quitArmed).toBe(false);
    feed(K.ctrl('u'), K.ctrl('c'), K.ctrl('c'));
    expect(quits).toBe(1);
  });

  it('Esc clears what is typed, then closes the view, then interrupts', () => {
    feed(K.ctrl('t'), 'half a sentence', K.escape);
    expect(input().text).toBe('');
    expect(store.getState().view).toBe('tasks');
    feed(K.escape);
    expect(store.getState().view).toBe('pane');
    expect(calls).toEqual([]);
    feed(K.escape);
    expect(calls).toEqual(['interrupt lead']);
  });

  it('the notice stays while the person types and reads, and goes with their next action', () => {
    store.setState({ flash: { text: 'hello', tone: 'info' } });
    feed(K.ctrl('o'), 'a', 'b', K.backspace, K.left, K.pageUp);
    expect(store.getState().flash?.text).toBe('hello');
    feed(K.tab);
    expect(store.getState().flash).toBeUndefined();
    store.setState({ flash: { text: 'again', tone: 'info' } });
    feed(K.escape);
    expect(store.getState().flash).toBeUndefined();
  });

  it('the palette lists commands for what is typed: ↑/↓ pick, Tab completes, Enter runs one that takes no arguments', async () => {
    feed('/');
    expect(openPalette(store.getState()).length).toBeGreaterThan(10);
    feed('t');
    expect(
      openPalette(store.getState())
        .map((c) => c.name)
        .slice(0, 2),
    ).toEqual(['tasks', 'team']);
    feed(K.down, K.tab);
    expect(input().text).toBe('/team ');
    feed(K.ctrl('u'), '/sp', K.enter);
    expect(input().text).toBe('/spawn '); // it needs arguments: completed, not run
    feed(K.ctrl('u'), '/he', K.enter);
    await until(() => store.getState().view === 'help');
    // Esc clears a line being typed; a recalled line does not open the palette: ↑ keeps walking the history.
    feed(K.escape, '/t', K.escape);
    expect(input().text).toBe('');
    feed(K.up);
    expect(input().text).toBe('/help');
    expect(openPalette(store.getState())).toEqual([]);
  });

  it('Tab on an ambiguous argument cycles through the choices', () => {
    feed('/send ', K.tab);
    expect(input().text).toBe('/send lead');
    feed(K.tab);
    expect(input().text).toBe('/send alice');
    feed(K.tab, K.tab);
    expect(input().text).toBe('/send lead');
    expect(store.getState().flash?.text).toMatch(/\[lead\]\s+alice\s+bob/);
  });

  it('a slash command runs through the commands: a view opens, a mistake is one line', async () => {
    feed('/help\r');
    await until(() => store.getState().view === 'help');
    feed('/nope\r');
    await until(() => store.getState().flash?.tone === 'error');
    expect(store.getState().flash!.text).toMatch(/^unknown command \/nope/);
  });
});

async function until(condition: () => boolean, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the App under Ink, keys faster than frames', () => {
  it('applies every key of quick writes in order and draws the result', async () => {
    // Tall enough for all of /help (at 24 rows its overflow garbles the frame).
    const cols = 100;
    const rows = 48;
    // A PTY turns \n into \r\n on the way out; a stream does not, so the emulator does it.
    const term = new Terminal({ cols, rows, allowProposedApi: true, convertEol: true });
    let parsed = Promise.resolve();
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
    stdin.setEncoding('utf8');
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: cols, rows });
    stdout.on('data', (data: Buffer) => {
      parsed = parsed.then(() => new Promise<void>((resolve) => term.write(data, resolve)));
    });
    const screen = async () => {
      await parsed;
      const buffer = term.buffer.active;
      return Array.from({ length: rows }, (_, row) => buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '').join('\n');
    };
    const controller = recordingController(store, calls);
    const instance = render(createElement(App, { store, ready: { controller, history }, quit: () => void quits++ }), {
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stdout as unknown as NodeJS.WriteStream,
      // As run-console.ts renders it.
      alternateScreen: true,
      exitOnCtrlC: false,
      patchConsole: false,
      interactive: true,
      incrementalRendering: true,
      maxFps: 30,
    });
    try {
      await waitScreen(screen, 'ask the lead');
      // One read with a whole line and Enter; then many writes in the same tick (one read for Ink),
      // then writes each in its own turn of the event loop, far quicker than 30 frames a second.
      stdin.write('typed in one go\r');
      for (const chunk of ['sec', 'ond', '\x7f', 'D', '\x1b[D', '\x1b[D', '-', '\r']) stdin.write(chunk);
      for (const chunk of ['t', 'h', 'i', 'r', 'd', '\x1b[H', '3', '\x1b[F', '!', '\r', '/he', '\t', '\r']) {
        stdin.write(chunk);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await until(() => store.getState().view === 'help');
      expect(calls).toEqual(['send lead: typed in one go', 'send lead: seco-nD', 'send lead: 3third!']);
      const shown = await waitScreen(screen, 'Commands');
      expect(shown).toContain('ask the lead'); // the input line is empty again
      stdin.write('draft');
      await waitScreen(screen, 'lead › draft');
    } finally {
      instance.unmount();
      term.dispose();
    }
  });
});

async function waitScreen(screen: () => Promise<string>, needle: string, timeoutMs = 25_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const shown = await screen();
    if (shown.includes(needle)) return shown;
    if (Date.now() > deadline) throw new Error(`the screen did not show '${needle}' within ${timeoutMs} ms:\n${shown}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
