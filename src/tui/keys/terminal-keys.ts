// Keys for a program in a terminal pane (a `command` teammate, a shell): while such a pane has
// focus every key goes to the program as the bytes a terminal would send, except the few that
// move the person between panes and views (Shift+Tab, Alt+1…9, Ctrl+T, Ctrl+Y) and Ctrl+],
// which leaves the pane for the lead's. Tab and Ctrl+C belong to the program (completion, interrupt).
import type { KeyPress } from './key-press.js';

const NAMED_BYTES: Record<string, string> = {
  enter: '\r',
  tab: '\t',
  escape: '\x1b',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
  home: '\x1b[H',
  end: '\x1b[F',
  pageup: '\x1b[5~',
  pagedown: '\x1b[6~',
  backspace: '\x7f',
  delete: '\x1b[3~',
};

/** What stays with the console while a terminal pane has focus. */
export function reservedInTerminal(key: KeyPress): boolean {
  if (key.name === 'tab' && key.shift) return true;
  if (key.meta && /^[1-9]$/.test(key.name)) return true;
  if (key.ctrl && (key.name === 't' || key.name === 'y' || key.name === ']')) return true;
  return false;
}

/** Ctrl+]: back from the terminal to the lead's pane (as telnet leaves a session). */
export function leavesTerminal(key: KeyPress): boolean {
  return key.ctrl && key.name === ']';
}

/** The bytes a terminal sends for `key` (empty when it sends none). */
export function keyBytes(key: KeyPress): string {
  if (key.name === 'tab' && key.shift) return '\x1b[Z';
  const named = NAMED_BYTES[key.name];
  if (named) return key.meta ? `\x1b${named}` : named;
  if (key.ctrl && key.name.length === 1) {
    const code = key.name.toLowerCase().charCodeAt(0);
    if (code >= 97 && code <= 122) return String.fromCharCode(code - 96);
    if (key.name === ' ' || key.name === '@') return '\x00';
    return '';
  }
  const text = key.text || (key.name.length === 1 ? key.name : '');
  return key.meta && text ? `\x1b${text}` : text;
}
