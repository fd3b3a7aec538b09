// The console's keys in React: a thin hook that feeds Ink's input and pastes to one ConsoleKeys
// dispatcher (src/tui/keys), made once per mount. What a key does is in the keymap, not here.
import { useInput, usePaste } from 'ink';
import { useEffect, useRef } from 'react';
import type { ConsoleController } from '../console-controller.js';
import { ConsoleKeys } from '../keys/console-keys.js';
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
  controller: ConsoleController;
  history: InputHistory;
  /** Read when a key arrives: what the screen looks like now. */
  sizes: () => ScreenSizes;
  quit: () => void;
}

export function useConsoleKeys({ store, controller, history, sizes, quit }: Options): void {
  const sizesRef = useRef(sizes);
  sizesRef.current = sizes;
  const keys = useRef<ConsoleKeys | undefined>(undefined);
  keys.current ??= new ConsoleKeys({
    store,
    controller,
    history,
    quit,
    paneSize: () => sizesRef.current().pane,
    viewSize: () => sizesRef.current().view,
  });
  const dispatcher = keys.current;
  useEffect(() => () => dispatcher.dispose(), [dispatcher]);

  useInput(dispatcher.onInput);
  usePaste(dispatcher.onPaste);
  useMouseReports(dispatcher.onMouse);
}
