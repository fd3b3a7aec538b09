// The console's keys in React: a thin hook that feeds Ink's input and pastes to one ConsoleKeys
// dispatcher (src/tui/keys), made once per mount. What a key does is in the keymap, not here.
import { useInput, usePaste } from 'ink';
import { useEffect, useRef } from 'react';
import type { ConsoleController } from '../console-controller.js';
import { ConsoleKeys } from '../keys/console-keys.js';
import type { ConsoleStore } from '../state/console-store.js';
import type { InputHistory } from '../state/input-history.js';

interface Options {
  store: ConsoleStore;
  controller: ConsoleController;
  history: InputHistory;
  /** Rows one PgUp/PgDn moves; read when the key arrives. */
  pageRows: number;
  quit: () => void;
}

export function useConsoleKeys({ store, controller, history, pageRows, quit }: Options): void {
  const pageRowsRef = useRef(pageRows);
  pageRowsRef.current = pageRows;
  const keys = useRef<ConsoleKeys | undefined>(undefined);
  keys.current ??= new ConsoleKeys({ store, controller, history, quit, pageRows: () => pageRowsRef.current });
  const dispatcher = keys.current;
  useEffect(() => () => dispatcher.dispose(), [dispatcher]);

  useInput(dispatcher.onInput);
  usePaste(dispatcher.onPaste);
}
