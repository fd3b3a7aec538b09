// The console's keys in React: a thin hook that feeds Ink's input and pastes to one ConsoleKeys
// dispatcher (src/tui/keys), made once the session is open. Keys that come before (the first
// frame is drawn while the session opens) wait, in order, and are handled as soon as it is; but
// Ctrl+C acts at once, so that a start that hangs (a database that does not answer) can be left.
// What a key does is in the keymap, not here.
import { useInput, usePaste, type Key } from 'ink';
import { useCallback, useEffect, useRef } from 'react';
import type { ConsoleController } from '../console-controller.js';
import { ConsoleKeys } from '../keys/console-keys.js';
import { QUIT_WINDOW_MS } from '../keys/intents.js';
import { keyPresses } from '../keys/key-press.js';
import { useMouseReports } from './useMouseReports.js';
import type { PaneSize } from '../state/console-actions.js';
import type { ConsoleStore } from '../state/console-store.js';
import type { InputHistory } from '../state/input-history.js';

export interface ScreenSizes {
  /** The pane in view's transcript area while scrolled. */
  pane: PaneSize;
  /** The view over the pane: rows it shows and rows it has. */
  view: { shown: number; total: number };
}

interface Options {
  store: ConsoleStore;
  /** Undefined while the session opens. */
  ready: { controller: ConsoleController; history: InputHistory } | undefined;
  /** Read when a key arrives: what the screen looks like now. */
  sizes: () => ScreenSizes;
  quit: () => void;
}

type Waiting = { kind: 'input'; input: string; key: Key } | { kind: 'paste'; text: string } | { kind: 'mouse'; report: string };

export function useConsoleKeys({ store, ready, sizes, quit }: Options): void {
  const sizesRef = useRef(sizes);
  sizesRef.current = sizes;
  const keys = useRef<ConsoleKeys | undefined>(undefined);
  const waiting = useRef<Waiting[]>([]);
  if (ready && !keys.current) {
    keys.current = new ConsoleKeys({
      store,
      controller: ready.controller,
      history: ready.history,
      quit,
      paneSize: () => sizesRef.current().pane,
      viewSize: () => sizesRef.current().view,
    });
  }
  const dispatcher = keys.current;
  useEffect(() => {
    if (!dispatcher) return undefined;
    // What was typed while the session opened, in the order it came.
    for (const held of waiting.current.splice(0)) handle(dispatcher, held);
    return () => dispatcher.dispose();
  }, [dispatcher]);

  const quitWhileOpening = useQuitWhileOpening(store, quit);
  const onKey = useCallback(
    (held: Waiting) => {
      if (keys.current) handle(keys.current, held);
      else if (held.kind === 'input' && keyPresses(held.input, held.key).some((press) => press.ctrl && press.name === 'c')) {
        // What was typed before it is dropped (the person said stop), and the quit rule applies now.
        waiting.current.length = 0;
        quitWhileOpening();
      } else waiting.current.push(held);
    },
    [quitWhileOpening],
  );
  useInput(useCallback((input: string, key: Key) => onKey({ kind: 'input', input, key }), [onKey]));
  usePaste(useCallback((text: string) => onKey({ kind: 'paste', text }), [onKey]));
  useMouseReports(useCallback((report: string) => onKey({ kind: 'mouse', report }), [onKey]));
}

/**
 * Ctrl+C before the session is open: the console's quit rule (docs/console.md#keys), press it twice, without
 * waiting for the session; there is nothing to interrupt yet, and nothing typed shows to clear.
 */
function useQuitWhileOpening(store: ConsoleStore, quit: () => void): () => void {
  const timer = useRef<NodeJS.Timeout | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (store.getState().quitArmed) return quit();
    store.setState({ quitArmed: true });
    clearTimeout(timer.current);
    timer.current = setTimeout(() => store.setState({ quitArmed: false }), QUIT_WINDOW_MS);
  }, [store, quit]);
}

function handle(dispatcher: ConsoleKeys, held: Waiting): void {
  if (held.kind === 'input') dispatcher.onInput(held.input, held.key);
  else if (held.kind === 'paste') dispatcher.onPaste(held.text);
  else dispatcher.onMouse(held.report);
}
