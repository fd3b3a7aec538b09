// The console's key dispatcher: Ink's input → key presses → the keymap → intents. It lives
// outside React (the hook only feeds it), reads the store afresh for every key and changes it
// synchronously, so a burst of keys is resolved and applied in order before any render.
import type { Key } from 'ink';
import { editInput } from '../state/console-actions.js';
import { insert } from '../state/input-buffer.js';
import { activeViews } from './conditions.js';
import { CONSOLE_KEYMAP, type IntentName } from './console-keymap.js';
import { createIntents, type IntentDeps, type Intents } from './intents.js';
import { keyPresses, type KeyPress } from './key-press.js';
import { resolveKey, type Keymap } from './keymap.js';
import { keyBytes, leavesTerminal, reservedInTerminal } from './terminal-keys.js';

/** Ink's flags for "no key": a mouse report is none of them. */
const NO_KEY = {} as Key;

/** Intents that are the person's next action: the notice above the input has been read by then. */
const ACTIONS: ReadonlySet<IntentName> = new Set<IntentName>([
  'input.submit',
  'palette.pick',
  'ask.sendDenial',
  'input.clear',
  'view.close',
  'view.toggle',
  'agent.interrupt',
  'console.quit',
  'pane.next',
  'pane.previous',
  'pane.jump',
  'grid.focus',
  'approvals.answer',
  'approvals.edit',
  'search.open',
  'search.close',
]);

export class ConsoleKeys {
  readonly #deps: IntentDeps;
  readonly #keymap: Keymap<IntentName>;
  readonly #intents: Intents;

  constructor(deps: IntentDeps, keymap: Keymap<IntentName> = CONSOLE_KEYMAP) {
    this.#deps = deps;
    this.#keymap = keymap;
    this.#intents = createIntents(deps);
  }

  /** One `useInput` call: it may hold several keys ("/he\t"), handled one after the other. */
  readonly onInput = (input: string, key: Key): void => {
    for (const press of keyPresses(input, key)) this.press(press);
  };

  /** A mouse report ("[<64;10;5M", without the ESC): the wheel as keys, anything else ignored. */
  readonly onMouse = (report: string): void => {
    for (const press of keyPresses(report, NO_KEY)) if (press.name) this.press(press);
  };

  /** A bracketed paste: its text goes into the input as it is, newlines included (or to the program of a terminal pane). */
  readonly onPaste = (text: string): void => {
    const terminal = this.#terminalInView();
    if (terminal) return this.#deps.controller.typeIntoTerminal(terminal, text);
    editInput(this.#deps.store, (buffer) => insert(buffer, text));
  };

  /** Resolves one key against the state as it is now and runs its intent; returns the intent, if any. */
  press(key: KeyPress): IntentName | undefined {
    // A terminal pane in view: the key belongs to its program (keys/terminal-keys.ts).
    const terminal = this.#terminalInView();
    if (terminal && !reservedInTerminal(key)) {
      this.#settle(key, undefined);
      const bytes = keyBytes(key);
      if (bytes) this.#deps.controller.typeIntoTerminal(terminal, bytes);
      return undefined;
    }
    if (terminal && leavesTerminal(key)) {
      this.#settle(key, 'pane.jump');
      this.#deps.store.setState({ focus: 'lead' });
      return undefined;
    }
    const state = this.#deps.store.getState();
    const binding = resolveKey(this.#keymap, key, { state, views: activeViews(state) });
    this.#settle(key, binding?.intent);
    if (binding) this.#intents.handlers[binding.intent](key, binding.arg);
    return binding?.intent;
  }

  dispose(): void {
    this.#intents.dispose();
  }

  /** The agent whose terminal pane is in view, if the pane in view is one. */
  #terminalInView(): string | undefined {
    const { view, focus } = this.#deps.store.getState();
    return view === 'pane' && this.#deps.controller.terminal(focus) ? focus : undefined;
  }

  /**
   * What every key does besides its binding: any key but Ctrl+C disarms a pending quit, and the
   * notice above the input stays while the person types, scrolls or reads, and goes with their
   * next action (sending, Esc, another pane or view), before that action says anything new.
   */
  #settle(key: KeyPress, intent: IntentName | undefined): void {
    const { store } = this.#deps;
    const { quitArmed, flash } = store.getState();
    const isQuit = key.ctrl && key.name === 'c';
    const dismiss = flash !== undefined && (intent === undefined ? key.name === 'escape' : ACTIONS.has(intent));
    if ((quitArmed && !isQuit) || dismiss) {
      store.setState({ ...(quitArmed && !isQuit ? { quitArmed: false } : {}), ...(dismiss ? { flash: undefined } : {}) });
    }
  }
}
