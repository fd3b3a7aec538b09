// Keys as data: a binding ties key patterns to an intent, in a layer, under conditions. Resolving
// a key walks the layers in a fixed priority and takes the first binding that matches and whose
// conditions hold; a binding that is chosen consumes the key (handlers never decline), so what a
// key does is decided here, purely, and can be tested without a screen.
//
// Layers, highest first (as gemini-cli's keypress priorities, but fixed and named):
//   view    – a view over the pane (approvals, help, tasks, team; later a palette or a grid),
//             topmost view first; a binding may name the views it applies in
//   input   – the input line's editing keys
//   global  – panes and the console: switching, scrolling, interrupting, quitting
//   typing  – printable keys that nothing above claimed type into the input
//
// Modifiers match exactly, then loosen: a key nothing binds as pressed is resolved again without
// the modifiers no binding asked for. Alt, because a terminal sends Alt+key as Esc then the key and
// Ink reads Esc followed within 20 ms by a key (typed quickly, or written by a program) as that
// Alt+key: Esc then Tab is Tab, Esc Esc is Esc, Alt+x types x. Ctrl and Shift on named keys,
// because terminals add them freely: Ctrl+← moves left and Shift+↑ walks the history until a
// binding says otherwise. A binding marked `exactKey` is never taken from a loosened key (Esc then
// y must not approve a request).
import { holds, type Condition, type KeyContext } from './conditions.js';
import { NAMED_KEYS, type KeyPress } from './key-press.js';
import { matchesKey, parseKeyPattern, type KeyPattern } from './key-pattern.js';

export type Layer = 'view' | 'input' | 'global' | 'typing';
export const LAYERS: readonly Layer[] = ['view', 'input', 'global', 'typing'];

export interface Binding<I extends string = string> {
  layer: Layer;
  /** View layer only: the views this binding applies in (default: any view). */
  views?: readonly string[];
  /** Key patterns ("ctrl+c", "shift+tab", "alt+1", "G", "<text>"); any of them triggers the intent. */
  keys: readonly string[];
  intent: I;
  /** A fixed argument for the intent (a pane index, a view, an answer). */
  arg?: string | number;
  /** Every condition must hold for the binding to take the key. */
  when?: readonly Condition[];
  /** Only the key as written, never one with extra modifiers loosened off (Alt+y may be Esc then y). */
  exactKey?: boolean;
  /** One line saying what it does, for /help and the docs (key-docs.ts). */
  doc?: string;
  /** The keys as the docs write them, where listing each would be long ("Alt+1 … Alt+9"). */
  label?: string;
  /** One of the few keys the README's cheat-sheet lists. */
  cheat?: boolean;
}

interface Compiled<I extends string> {
  binding: Binding<I>;
  patterns: KeyPattern[];
}

export interface Keymap<I extends string = string> {
  readonly bindings: readonly Binding<I>[];
  readonly byLayer: ReadonlyMap<Layer, readonly Compiled<I>[]>;
}

/** Parses every pattern once; a mistyped key throws here, at start-up, not on the key press. */
export function compileKeymap<I extends string>(bindings: readonly Binding<I>[]): Keymap<I> {
  const byLayer = new Map<Layer, Compiled<I>[]>(LAYERS.map((layer) => [layer, []]));
  for (const binding of bindings) {
    if (binding.views && binding.layer !== 'view') throw new Error(`binding for ${binding.intent}: only view-layer bindings name views`);
    byLayer.get(binding.layer)!.push({ binding, patterns: binding.keys.map(parseKeyPattern) });
  }
  return { bindings, byLayer };
}

/** The binding that takes this key in this context, or undefined when none does. */
export function resolveKey<I extends string>(keymap: Keymap<I>, key: KeyPress, context: KeyContext): Binding<I> | undefined {
  const found = resolveOnce(keymap, key, context, false);
  if (found) return found;
  const plain = loosened(key);
  return plain ? resolveOnce(keymap, plain, context, true) : undefined;
}

/** The key without Alt, and for a named key without Ctrl and Shift; undefined when that is the key itself. */
function loosened(key: KeyPress): KeyPress | undefined {
  const named = (NAMED_KEYS as readonly string[]).includes(key.name);
  const plain = { ...key, meta: false, ctrl: named ? false : key.ctrl, shift: named ? false : key.shift };
  return plain.meta !== key.meta || plain.ctrl !== key.ctrl || plain.shift !== key.shift ? plain : undefined;
}

function resolveOnce<I extends string>(keymap: Keymap<I>, key: KeyPress, context: KeyContext, isLoosened: boolean): Binding<I> | undefined {
  const takes = (binding: Binding<I>) => !(isLoosened && binding.exactKey);
  for (const view of context.views) {
    const found = first(keymap.byLayer.get('view')!, key, context, (binding) => takes(binding) && (!binding.views || binding.views.includes(view)));
    if (found) return found;
  }
  for (const layer of LAYERS) {
    if (layer === 'view') continue;
    const found = first(keymap.byLayer.get(layer)!, key, context, takes);
    if (found) return found;
  }
  return undefined;
}

function first<I extends string>(
  candidates: readonly Compiled<I>[],
  key: KeyPress,
  context: KeyContext,
  applies: (binding: Binding<I>) => boolean = () => true,
): Binding<I> | undefined {
  for (const { binding, patterns } of candidates) {
    if (!applies(binding) || !patterns.some((pattern) => matchesKey(pattern, key))) continue;
    if ((binding.when ?? []).every((condition) => holds(condition, context))) return binding;
  }
  return undefined;
}
