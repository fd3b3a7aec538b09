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
import { keyBytes, leavesTerminal, reservedInTerminal } from '../terminal/terminal-keys.js';

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

  /** A bracketed paste: its text goes into the input as it is, newlines included (or to the program of a terminal pane). */
  readonly onPaste = (text: string): void => {
    const terminal = this.#terminalInView();
    if (terminal) return this.#deps.controller.typeIntoTerminal(terminal, text);
    editInput(this.#deps.store, (buffer) => insert(buffer, text));
  };

  /** Resolves one key against the state as it is now and runs its intent; returns the intent, if any. */
  press(key: KeyPress): IntentName | undefined {
    this.#settle(key);
    // A terminal pane in view: the key belongs to its program (terminal/terminal-keys.ts).
    const terminal = this.#terminalInView();
    if (terminal && !reservedInTerminal(key)) {
      const bytes = keyBytes(key);
      if (bytes) this.#deps.controller.typeIntoTerminal(terminal, bytes);
      return undefined;
    }
    if (terminal && leavesTerminal(key)) {
      this.#deps.store.setState({ focus: 'lead' });
      return undefined;
    }
    const state = this.#deps.store.getState();
    const binding = resolveKey(this.#keymap, key, { state, views: activeViews(state) });
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
   * What every key does besides its binding: any key but Ctrl+C disarms a pending quit, and any
   * key but a Ctrl chord dismisses the passing message in the status bar.
   */
  #settle(key: KeyPress): void {
    const { store } = this.#deps;
    const { quitArmed, flash } = store.getState();
    const isQuit = key.ctrl && key.name === 'c';
    if ((quitArmed && !isQuit) || (flash && !key.ctrl)) {
      store.setState({ ...(quitArmed && !isQuit ? { quitArmed: false } : {}), ...(flash && !key.ctrl ? { flash: undefined } : {}) });
    }
  }
}
