// The keymap without a screen: key patterns, Ink input split into key presses, and resolution
// through the layers (view → input → global → typing) under conditions — the console's own
// keymap, and keymaps of the kind the next console work needs (Esc/Ctrl+C semantics, scrolling
// keys, a palette on '/', Enter on a grid tile), to show the model can say them.
import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import { activeViews, type KeyContext } from '../../../src/tui/keys/conditions.js';
import { CONSOLE_KEYMAP } from '../../../src/tui/keys/console-keymap.js';
import { keyPresses, press, type KeyPress } from '../../../src/tui/keys/key-press.js';
import { matchesKey, parseKeyPattern } from '../../../src/tui/keys/key-pattern.js';
import { compileKeymap, resolveKey } from '../../../src/tui/keys/keymap.js';
import { createConsoleStore, emptyAgent, type ConsoleState } from '../../../src/tui/state/console-store.js';
import { setText } from '../../../src/tui/state/input-buffer.js';

/** Ink's Key flags, all off unless given (what useInput hands a handler). */
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

/** A press from a pattern, the way keyPresses would report that key. */
function key(pattern: string): KeyPress {
  const p = parseKeyPattern(pattern);
  const printable = p.name.length === 1 && !p.ctrl;
  return press(p.name, { ctrl: p.ctrl, meta: p.meta, shift: p.shift, text: printable ? p.name : '' });
}

function state(patch: Partial<ConsoleState> = {}): ConsoleState {
  return { ...createConsoleStore({ model: 'm', endpoint: '' }).getState(), ...patch };
}

function context(patch: Partial<ConsoleState> = {}, views?: string[]): KeyContext {
  const s = state(patch);
  return { state: s, views: views ?? activeViews(s) };
}

const typed = (text: string): Partial<ConsoleState> => ({ input: setText(text) });
const intentOf = (pattern: string, ctx: KeyContext) => resolveKey(CONSOLE_KEYMAP, key(pattern), ctx)?.intent;

describe('key patterns', () => {
  it('match modifiers exactly, and take Shift as part of a printable character', () => {
    const m = (pattern: string, k: KeyPress) => matchesKey(parseKeyPattern(pattern), k);
    expect(m('ctrl+c', press('c', { ctrl: true }))).toBe(true);
    expect(m('ctrl+c', press('c', { ctrl: true, shift: true }))).toBe(true); // Ctrl+Shift+C sends the same byte
    expect(m('ctrl+c', press('c', { text: 'c' }))).toBe(false);
    expect(m('up', press('up', { ctrl: true }))).toBe(false);
    expect(m('shift+tab', press('tab', { shift: true }))).toBe(true);
    expect(m('tab', press('tab', { shift: true }))).toBe(false);
    expect(m('G', press('G', { shift: true, text: 'G' }))).toBe(true);
    expect(m('g', press('G', { shift: true, text: 'G' }))).toBe(false);
    expect(m('alt+1', press('1', { meta: true, text: '1' }))).toBe(true);
    expect(m('<text>', press('é', { text: 'é' }))).toBe(true);
    expect(m('<text>', press('x', { meta: true, text: 'x' }))).toBe(false);
    expect(m('alt+<text>', press('x', { meta: true, text: 'x' }))).toBe(true);
    expect(m('<text>', press('enter'))).toBe(false);
    expect(parseKeyPattern('Return')).toMatchObject({ name: 'enter' });
    expect(parseKeyPattern('PgUp')).toMatchObject({ name: 'pageup' });
  });

  it('refuse a key name they do not know, naming the pattern', () => {
    expect(() => parseKeyPattern('ctrl+hme')).toThrow(/unknown key 'hme' in key pattern 'ctrl\+hme'/);
    expect(() => compileKeymap([{ layer: 'input', keys: ['pgdown'], intent: 'x' }])).toThrow(/pgdown/);
    expect(() => compileKeymap([{ layer: 'global', views: ['help'], keys: ['q'], intent: 'x' }])).toThrow(/only view-layer bindings name views/);
  });
});

describe("Ink's input as key presses", () => {
  // The (input, key) pairs are what Ink 8's useInput delivered for these bytes written to stdin.
  const names = (presses: KeyPress[]) => presses.map((p) => `${p.ctrl ? 'ctrl+' : ''}${p.meta ? 'alt+' : ''}${p.shift && !p.text ? 'shift+' : ''}${p.name}`);

  it('gives one press per key, named or typed', () => {
    expect(names(keyPresses('', inkKey({ upArrow: true })))).toEqual(['up']);
    expect(names(keyPresses('', inkKey({ tab: true, shift: true })))).toEqual(['shift+tab']);
    expect(names(keyPresses('c', inkKey({ ctrl: true })))).toEqual(['ctrl+c']);
    expect(names(keyPresses('1', inkKey({ meta: true })))).toEqual(['alt+1']);
    expect(keyPresses('G', inkKey({ shift: true }))).toEqual([press('G', { shift: true, text: 'G' })]);
    expect(names(keyPresses('\n', inkKey()))).toEqual(['ctrl+j']); // a lone line feed is Ctrl+J
    expect(names(keyPresses('', inkKey()))).toEqual(['']); // F-keys and the like: a press nothing matches
  });

  it('splits a read that holds several keys, in order', () => {
    expect(names(keyPresses('/he\t', inkKey()))).toEqual(['/', 'h', 'e', 'tab']);
    expect(names(keyPresses('cd\r', inkKey()))).toEqual(['c', 'd', 'enter']);
    expect(names(keyPresses('ok\nno\x7f\b', inkKey()))).toEqual(['o', 'k', 'enter', 'n', 'o', 'backspace', 'backspace']);
    // Control bytes inside a read are Ctrl chords, never text in the input.
    expect(names(keyPresses('ab\x15\x17', inkKey()))).toEqual(['a', 'b', 'ctrl+u', 'ctrl+w']);
    expect(keyPresses('日本👋', inkKey()).map((p) => p.text)).toEqual(['日', '本', '👋']);
  });
});

describe("the console's keymap", () => {
  it('gives a view the keys it binds before the input line, and the input line before the panes', () => {
    // Esc closes a view; with a pane in view it interrupts the agent.
    expect(intentOf('escape', context({ view: 'help' }))).toBe('view.close');
    expect(intentOf('escape', context({ view: 'pane' }))).toBe('agent.interrupt');
    // Tab completes a slash command (the palette's pick while it lists commands), else it moves
    // to the next pane; Shift+Tab always moves back.
    expect(intentOf('tab', context(typed('/he')))).toBe('palette.complete');
    expect(intentOf('tab', context({ ...typed('/he'), palette: { index: 0, closedFor: '/he' } }))).toBe('input.complete');
    expect(intentOf('tab', context(typed('/send al')))).toBe('input.complete');
    expect(intentOf('tab', context(typed('hello')))).toBe('pane.next');
    expect(intentOf('tab', context(typed('/a\nb')))).toBe('pane.next');
    expect(intentOf('shift+tab', context(typed('/he')))).toBe('pane.previous');
    // Ctrl+C and the pane keys reach the global layer from anywhere.
    expect(intentOf('ctrl+c', context({ view: 'approvals', ...typed('x') }))).toBe('input.clear');
    expect(intentOf('ctrl+c', context({ view: 'approvals' }))).toBe('console.quit');
    expect(intentOf('ctrl+t', context({ view: 'tasks' }))).toBe('view.toggle');
    expect(intentOf('pageup', context())).toBe('pane.pageUp');
  });

  it('answers approvals with y / n / a only while nothing is typed, and selects with ↑/↓ only when something waits', () => {
    const request = { id: 'approval_1', agent: 'lead', tool: 'bash', summary: 'ls', reason: 'r', prefixes: [] };
    const waiting = { view: 'approvals' as const, approvals: [request] };
    expect(resolveKey(CONSOLE_KEYMAP, key('y'), context(waiting))).toMatchObject({ intent: 'approvals.answer', arg: 'approve' });
    expect(resolveKey(CONSOLE_KEYMAP, key('N'), context(waiting))).toMatchObject({ intent: 'approvals.answer', arg: 'deny' });
    expect(resolveKey(CONSOLE_KEYMAP, key('a'), context(waiting))).toMatchObject({ intent: 'approvals.answer', arg: 'always' });
    expect(intentOf('y', context({ ...waiting, ...typed('why') }))).toBe('input.insert');
    expect(intentOf('alt+y', context(waiting))).toBe('input.insert');
    expect(intentOf('y', context({ view: 'pane', approvals: [request] }))).toBe('input.insert');
    expect(resolveKey(CONSOLE_KEYMAP, key('down'), context(waiting))).toMatchObject({ intent: 'approvals.select', arg: 1 });
    expect(intentOf('up', context({ view: 'approvals' }))).toBe('history.previous');
  });

  it('jumps with Alt+digit, takes an unbound Alt+key as the plain key (Esc read with the key after it)', () => {
    expect(resolveKey(CONSOLE_KEYMAP, key('alt+3'), context())).toMatchObject({ intent: 'pane.jump', arg: 2 });
    expect(intentOf('alt+0', context())).toBe('input.insert');
    expect(intentOf('alt+x', context())).toBe('input.insert');
    expect(intentOf('alt+tab', context({ view: 'team' }))).toBe('pane.next');
    expect(intentOf('alt+enter', context())).toBe('input.submit');
    expect(intentOf('alt+backspace', context())).toBe('input.deleteLeft');
    expect(intentOf('alt+escape', context({ view: 'help' }))).toBe('view.close'); // Esc Esc in one read
  });

  it('takes Ctrl and Shift on a named key nothing binds that way as the plain key, never on a character', () => {
    expect(intentOf('ctrl+left', context())).toBe('cursor.left');
    expect(intentOf('shift+up', context())).toBe('history.previous');
    expect(intentOf('shift+pageup', context())).toBe('pane.pageUp');
    expect(intentOf('ctrl+tab', context(typed('/send al')))).toBe('input.complete');
    expect(intentOf('shift+tab', context())).toBe('pane.previous'); // bound as written: no loosening
    expect(intentOf('ctrl+x', context())).toBeUndefined(); // an unbound Ctrl chord does nothing
    expect(intentOf('ctrl+j', context())).toBe('input.newline');
    const custom = compileKeymap([
      { layer: 'input', keys: ['left'], intent: 'char' },
      { layer: 'input', keys: ['ctrl+left'], intent: 'word' },
    ]);
    expect(resolveKey(custom, key('ctrl+left'), context())?.intent).toBe('word');
    expect(resolveKey(custom, key('shift+left'), context())?.intent).toBe('char');
  });

  it('binds the keys docs/console.md#keys leads with', () => {
    const documented: Array<[string, string]> = [
      ['enter', 'input.submit'],
      ['tab', 'pane.next'],
      ['shift+tab', 'pane.previous'],
      ...Array.from({ length: 9 }, (_, i): [string, string] => [`alt+${i + 1}`, 'pane.jump']),
      ['ctrl+t', 'view.toggle'],
      ['ctrl+y', 'view.toggle'],
      ['ctrl+o', 'pane.toggleToolResults'],
      ['escape', 'agent.interrupt'],
      ['pageup', 'pane.pageUp'],
      ['pagedown', 'pane.pageDown'],
      ['up', 'history.previous'],
      ['down', 'history.next'],
      ['ctrl+c', 'console.quit'],
    ];
    expect(documented.map(([pattern]) => [pattern, intentOf(pattern, context())])).toEqual(documented);
  });
});

describe('keymaps the next console work needs', () => {
  // Claude Code's Esc and Ctrl+C, scrolling keys that type when text is being written, a palette on
  // '/', Enter on a grid tile: each is bindings and conditions, with no new code in the resolver.
  const next = compileKeymap<string>([
    { layer: 'view', views: ['palette'], keys: ['enter', 'tab'], intent: 'palette.pick' },
    { layer: 'view', views: ['palette'], keys: ['escape'], intent: 'palette.close' },
    { layer: 'view', views: ['grid'], keys: ['enter'], intent: 'grid.focusTile', when: ['inputEmpty'] },
    { layer: 'view', views: ['grid'], keys: ['left', 'right', 'up', 'down'], intent: 'grid.move', when: ['inputEmpty'] },
    { layer: 'input', keys: ['/'], intent: 'palette.open', when: ['inputEmpty'] },
    { layer: 'input', keys: ['escape'], intent: 'input.clear', when: ['!inputEmpty'] },
    { layer: 'input', keys: ['enter'], intent: 'input.submit' },
    { layer: 'global', keys: ['ctrl+c'], intent: 'agent.interrupt', when: ['agentBusy'] },
    { layer: 'global', keys: ['ctrl+c'], intent: 'input.clear', when: ['!inputEmpty'] },
    { layer: 'global', keys: ['ctrl+c'], intent: 'console.quit' },
    { layer: 'global', keys: ['escape'], intent: 'agent.interrupt', when: ['agentBusy'] },
    { layer: 'global', keys: ['home', 'g'], intent: 'pane.top', when: ['inputEmpty'] },
    { layer: 'global', keys: ['end', 'G'], intent: 'pane.bottom', when: ['inputEmpty'] },
    { layer: 'typing', keys: ['<text>'], intent: 'input.insert' },
  ]);
  const busy = { agents: { lead: { ...emptyAgent('lead', 'lead'), status: 'working' as const } } };
  const of = (pattern: string, ctx: KeyContext) => resolveKey(next, key(pattern), ctx)?.intent;

  it('Esc clears typed text first and interrupts only with an empty input and a busy agent', () => {
    expect(of('escape', context({ ...busy, ...typed('half a sentence') }))).toBe('input.clear');
    expect(of('escape', context(busy))).toBe('agent.interrupt');
    expect(of('escape', context())).toBeUndefined();
  });

  it('Ctrl+C interrupts a busy agent, then clears, then quits an idle console', () => {
    expect(of('ctrl+c', context({ ...busy, ...typed('x') }))).toBe('agent.interrupt');
    expect(of('ctrl+c', context(typed('x')))).toBe('input.clear');
    expect(of('ctrl+c', context())).toBe('console.quit');
  });

  it('g/G and Home/End scroll while nothing is typed, and type or edit otherwise', () => {
    expect(of('g', context())).toBe('pane.top');
    expect(of('G', context())).toBe('pane.bottom');
    expect(of('home', context())).toBe('pane.top');
    expect(of('g', context(typed('lo')))).toBe('input.insert');
    expect(of('home', context(typed('lo')))).toBeUndefined();
  });

  it("'/' opens a palette on an empty input, and the palette sits above a grid", () => {
    expect(of('/', context())).toBe('palette.open');
    expect(of('/', context(typed('a')))).toBe('input.insert');
    expect(of('enter', context({}, ['grid']))).toBe('grid.focusTile');
    expect(of('enter', context(typed('hi'), ['grid']))).toBe('input.submit');
    expect(of('enter', context({}, ['palette', 'grid']))).toBe('palette.pick');
    expect(of('right', context({}, ['palette', 'grid']))).toBe('grid.move');
  });
});

describe("the console's keymap, with Claude Code's keys", () => {
  const busy = { agents: { lead: { ...emptyAgent('lead', 'lead'), status: 'working' as const } } };
  const scrolled = { scroll: { lead: { itemId: 1, row: 0 } } };

  it('Esc clears what is typed, else closes a view, else interrupts; Ctrl+C interrupts a busy agent, else clears, else quits', () => {
    expect(intentOf('escape', context({ ...busy, ...typed('half a sentence') }))).toBe('input.clear');
    expect(intentOf('escape', context({ view: 'team', ...typed('x') }))).toBe('input.clear');
    expect(intentOf('escape', context({ view: 'team' }))).toBe('view.close');
    expect(intentOf('escape', context(busy))).toBe('agent.interrupt');
    expect(intentOf('ctrl+c', context({ ...busy, ...typed('x') }))).toBe('agent.interrupt');
    expect(intentOf('ctrl+c', context(typed('x')))).toBe('input.clear');
    expect(intentOf('ctrl+c', context())).toBe('console.quit');
  });

  it("scrolls with Home/End on an empty input, the wheel, and g/G only while scrolled (else they type); '/' is always the palette", () => {
    expect(intentOf('home', context())).toBe('pane.top');
    expect(intentOf('end', context())).toBe('pane.bottom');
    expect(intentOf('home', context(typed('lo')))).toBe('cursor.home');
    expect(resolveKey(CONSOLE_KEYMAP, press('wheelup'), context())).toMatchObject({ intent: 'pane.scroll', arg: 3 });
    expect(resolveKey(CONSOLE_KEYMAP, press('wheeldown'), context({ view: 'help' }))).toMatchObject({ intent: 'view.scroll', arg: 'wheel-down' });
    expect(intentOf('g', context(scrolled))).toBe('pane.top');
    expect(intentOf('G', context(scrolled))).toBe('pane.bottom');
    expect(intentOf('/', context(scrolled))).toBe('input.insert');
    expect(intentOf('g', context())).toBe('input.insert');
    expect(intentOf('/', context())).toBe('input.insert');
    expect(intentOf('g', context({ ...scrolled, ...typed('a') }))).toBe('input.insert');
    expect(intentOf('ctrl+f', context())).toBe('search.open');
  });

  it('gives a search the typing, the palette ↑/↓, Tab and Enter, and the grid its arrows and Enter', () => {
    const searching = { search: { query: 'x', match: 0 } };
    expect(intentOf('q', context(searching))).toBe('search.insert');
    expect(intentOf('enter', context(searching))).toBe('search.step');
    expect(intentOf('escape', context(searching))).toBe('search.close');
    expect(intentOf('down', context(typed('/')))).toBe('palette.select');
    expect(intentOf('enter', context(typed('/he')))).toBe('palette.pick');
    expect(intentOf('enter', context(typed('/help now')))).toBe('input.submit');
    expect(intentOf('enter', context(typed('/zzz')))).toBe('input.submit'); // nothing listed: the line runs
    expect(intentOf('right', context({ view: 'grid' }))).toBe('grid.move');
    expect(intentOf('enter', context({ view: 'grid' }))).toBe('grid.focus');
    expect(intentOf('ctrl+g', context())).toBe('view.toggle');
  });

  it('moves between the lines of a multi-line input before walking the history', () => {
    const twoLines = { input: { text: 'one\ntwo', cursor: 7 } };
    expect(intentOf('up', context(twoLines))).toBe('cursor.up');
    expect(intentOf('down', context(twoLines))).toBe('history.next');
    expect(intentOf('up', context({ input: { text: 'one\ntwo', cursor: 2 } }))).toBe('history.previous');
  });

  it('reads mouse reports as wheel presses, and a click as a press nothing binds', () => {
    expect(keyPresses('[<64;10;5M', inkKey()).map((p) => p.name)).toEqual(['wheelup']);
    expect(keyPresses('[<65;10;5M', inkKey()).map((p) => p.name)).toEqual(['wheeldown']);
    expect(keyPresses('[<80;10;5M', inkKey()).map((p) => p.name)).toEqual(['wheelup']); // with Ctrl held
    expect(keyPresses('[<0;10;5M', inkKey()).map((p) => p.name)).toEqual(['']);
  });
});
