// What Ink hands a key handler (an input string and a bag of flags) as key presses the keymap can
// match: one press per key. Keys typed quickly, or written by a program, reach us as one read
// ("/he\t", "hello\r"): Ink splits off escape sequences, backspace and Ctrl+C, but leaves Tab and
// Enter inside the text, so a multi-character input is split here, one press per character, and
// each is resolved against the state the previous one left.
import type { Key } from 'ink';

export interface KeyPress {
  /** A named key ('enter', 'tab', 'escape', 'up', 'pageup', …) or the character itself ('g', 'G', '/', 'é'). */
  name: string;
  ctrl: boolean;
  /** Alt (Ink merges Alt and Meta). */
  meta: boolean;
  shift: boolean;
  /** What the key would type into the input: the character for printable keys, '' for named keys and Ctrl chords. */
  text: string;
}

/** Keys with names; everything else is named by the character it types. */
export const NAMED_KEYS = [
  'enter',
  'tab',
  'escape',
  'up',
  'down',
  'left',
  'right',
  'pageup',
  'pagedown',
  'home',
  'end',
  'backspace',
  'delete',
  'wheelup',
  'wheeldown',
] as const;

// A mouse report in SGR form (ESC [ < button ; column ; row M|m), as Ink hands it on without the ESC.
const SGR_MOUSE = /^\[<(\d+);(\d+);(\d+)([Mm])$/;
const WHEEL_UP = 64;
const WHEEL_DOWN = 65;
/** Modifier bits in a mouse report's button number: Shift, Alt, Ctrl. */
const MOUSE_MODIFIERS = 4 | 8 | 16;

const INK_FLAGS: Array<[keyof Key, (typeof NAMED_KEYS)[number]]> = [
  ['return', 'enter'],
  ['tab', 'tab'],
  ['escape', 'escape'],
  ['upArrow', 'up'],
  ['downArrow', 'down'],
  ['leftArrow', 'left'],
  ['rightArrow', 'right'],
  ['pageUp', 'pageup'],
  ['pageDown', 'pagedown'],
  ['home', 'home'],
  ['end', 'end'],
  ['backspace', 'backspace'],
  ['delete', 'delete'],
];

export function press(name: string, modifiers: { ctrl?: boolean; meta?: boolean; shift?: boolean; text?: string } = {}): KeyPress {
  return { name, ctrl: modifiers.ctrl ?? false, meta: modifiers.meta ?? false, shift: modifiers.shift ?? false, text: modifiers.text ?? '' };
}

/** One `useInput` call as the key presses it stands for, in order. */
export function keyPresses(input: string, key: Key): KeyPress[] {
  const mouse = SGR_MOUSE.exec(input);
  if (mouse) return [mousePress(Number(mouse[1]), mouse[4] === 'M')];
  const flags = { ctrl: key.ctrl, meta: key.meta, shift: key.shift };
  for (const [flag, name] of INK_FLAGS) if (key[flag] === true) return [press(name, flags)];
  if (key.ctrl) return [press(input.toLowerCase(), flags)];
  // A key Ink knows but has no flag for (F1, Insert): a press that no binding matches.
  if (input === '') return [press('', flags)];
  const chars = [...input];
  // A lone line feed is Ctrl+J (Enter sends a carriage return): it starts a new line in the input.
  if (input === '\n') return [press('j', { ctrl: true })];
  if (chars.length === 1) return [press(input, { ...flags, text: input })];
  return chars.map(charPress);
}

/** The wheel as keys; other mouse reports (clicks, releases) as a press no binding matches. */
function mousePress(button: number, pressed: boolean): KeyPress {
  const plain = button & ~MOUSE_MODIFIERS;
  if (pressed && plain === WHEEL_UP) return press('wheelup');
  if (pressed && plain === WHEEL_DOWN) return press('wheeldown');
  return press('');
}

/** A character inside a multi-key read, as the key that types it. */
function charPress(char: string): KeyPress {
  if (char === '\t') return press('tab');
  if (char === '\r' || char === '\n') return press('enter');
  if (char === '\x7f' || char === '\b') return press('backspace');
  const code = char.codePointAt(0)!;
  // Other C0 controls are Ctrl chords (\x15 is Ctrl+U), never text.
  if (code < 0x20) return press(String.fromCharCode(code + 0x60), { ctrl: true });
  return press(char, { text: char });
}
