// A binding's key written as text ("ctrl+c", "shift+tab", "alt+1", "pageup", "G") and the test
// of a key press against it. Modifiers must match exactly (Ctrl+Up is not Up), except that Shift
// is part of a printable character: "G" is Shift+g, and "g" never matches it.
import { NAMED_KEYS, type KeyPress } from './key-press.js';

/** Any printable key: what typing into the input is bound to. "alt+<text>" would need Alt. */
export const TEXT = '<text>';

export interface KeyPattern {
  name: string;
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
  /** Matches every printable key (with these modifiers) rather than one name. */
  anyText: boolean;
}

const ALIASES: Record<string, string> = { return: 'enter', esc: 'escape', pgup: 'pageup', pgdn: 'pagedown', space: ' ' };
const MODIFIERS = { ctrl: 'ctrl', alt: 'meta', meta: 'meta', shift: 'shift' } as const;

export function parseKeyPattern(pattern: string): KeyPattern {
  const parsed: KeyPattern = { name: '', ctrl: false, meta: false, shift: false, anyText: false };
  let rest = pattern;
  for (let match = /^(ctrl|alt|meta|shift)\+(?=.)/i.exec(rest); match; match = /^(ctrl|alt|meta|shift)\+(?=.)/i.exec(rest)) {
    parsed[MODIFIERS[match[1]!.toLowerCase() as keyof typeof MODIFIERS]] = true;
    rest = rest.slice(match[0].length);
  }
  if (rest === TEXT) return { ...parsed, anyText: true };
  const lower = ALIASES[rest.toLowerCase()] ?? rest.toLowerCase();
  if ((NAMED_KEYS as readonly string[]).includes(lower) || lower === ' ') return { ...parsed, name: lower };
  if ([...rest].length !== 1) throw new Error(`unknown key '${rest}' in key pattern '${pattern}': use one character or one of ${NAMED_KEYS.join(', ')}`);
  // Ctrl and Alt chords are named by the lower-case letter (Ctrl+C and Ctrl+Shift+C send the same byte).
  return { ...parsed, name: parsed.ctrl ? rest.toLowerCase() : rest };
}

export function matchesKey(pattern: KeyPattern, key: KeyPress): boolean {
  if (pattern.ctrl !== key.ctrl || pattern.meta !== key.meta) return false;
  if (pattern.anyText) return key.text !== '';
  if (pattern.name !== key.name) return false;
  const printable = key.text !== '' || key.ctrl;
  return printable || pattern.shift === key.shift;
}
