// The one place that decides what a key does: views first (Esc closes them), then global keys
// (quit, panes, scrolling, interrupt), then the input line. Keys become intents.
import { useInput, usePaste, type Key } from 'ink';
import { useRef } from 'react';
import type { ConsoleController } from '../console-controller.js';
import { completeLine, runCommandLine } from '../commands/dispatch.js';
import * as edit from '../state/input-buffer.js';
import type { InputBuffer } from '../state/input-buffer.js';
import type { InputHistory } from '../state/input-history.js';
import type { ConsoleStore } from '../state/console-store.js';

const QUIT_WINDOW_MS = 2_000;

interface Options {
  store: ConsoleStore;
  controller: ConsoleController;
  history: InputHistory;
  buffer: InputBuffer;
  setBuffer: (update: (buffer: InputBuffer) => InputBuffer) => void;
  pageRows: number;
  quit: () => void;
}

export function useConsoleKeys({ store, controller, history, buffer, setBuffer, pageRows, quit }: Options): void {
  const quitTimer = useRef<NodeJS.Timeout | undefined>(undefined);
  // Handlers read the latest buffer through a ref: keys can arrive faster than React re-renders.
  const bufferRef = useRef(buffer);
  bufferRef.current = buffer;
  const apply = (update: (b: InputBuffer) => InputBuffer) => {
    bufferRef.current = update(bufferRef.current);
    setBuffer(() => bufferRef.current);
  };

  usePaste((text) => apply((b) => edit.insert(b, text)));

  useInput((input, key) => {
    const state = store.getState();

    if (key.ctrl && input === 'c') {
      if (state.quitArmed) return quit();
      if (bufferRef.current.text) apply(() => edit.EMPTY_INPUT);
      store.setState({ quitArmed: true });
      clearTimeout(quitTimer.current);
      quitTimer.current = setTimeout(() => store.setState({ quitArmed: false }), QUIT_WINDOW_MS);
      return;
    }
    if (state.quitArmed) store.setState({ quitArmed: false });
    if (state.flash && !key.ctrl) store.setState({ flash: undefined });

    if (key.escape) {
      if (state.view !== 'pane') return store.setState({ view: 'pane' });
      if (!controller.interrupt(state.focus)) controller.flash(`${state.focus} is not in a turn`);
      return;
    }
    if (key.ctrl && input === 't') return store.setState({ view: state.view === 'tasks' ? 'pane' : 'tasks' });
    if (key.ctrl && input === 'y') return store.setState({ view: state.view === 'approvals' ? 'pane' : 'approvals' });
    if (state.view === 'approvals' && onApprovalKey(input, key)) return;
    if (key.ctrl && input === 'o') return store.setState({ expanded: { ...state.expanded, [state.focus]: !state.expanded[state.focus] } });
    if (key.tab) return onTab(key);
    if (key.meta && /^[1-9]$/.test(input)) return focusIndex(Number(input) - 1);
    if (key.pageUp || key.pageDown) return scroll(key.pageUp ? pageRows : -pageRows);
    if (key.upArrow) return recall(history.previous(bufferRef.current.text));
    if (key.downArrow) return recall(history.next());
    if (key.return) return submit();
    if (key.leftArrow) return apply(edit.moveLeft);
    if (key.rightArrow) return apply(edit.moveRight);
    if (key.home || (key.ctrl && input === 'a')) return apply(edit.home);
    if (key.end || (key.ctrl && input === 'e')) return apply(edit.end);
    if (key.backspace) return apply(edit.backspace);
    if (key.delete) return apply(edit.deleteForward);
    if (key.ctrl && input === 'u') return apply(() => edit.EMPTY_INPUT);
    if (key.ctrl && input === 'w') return apply(edit.deleteWordBack);
    if (key.ctrl || !input) return;
    // An unbound Alt+key (or Esc typed just before a key) arrives as meta+key: keep the key.
    // Keys typed quickly (or sent by a program) can arrive as one chunk: "/he\t".
    if (input.length > 1 && /[\t\r\n\x7f\b]/.test(input)) return typedChunk(input);
    apply((b) => edit.insert(b, input));
  });

  /** In /approvals: ↑/↓ select; y, n, a answer the selected request (while the input line is empty). */
  function onApprovalKey(input: string, key: Key): boolean {
    const { approvals, approvalIndex } = store.getState();
    if ((key.upArrow || key.downArrow) && approvals.length > 0) {
      store.setState({ approvalIndex: Math.max(0, Math.min(approvals.length - 1, approvalIndex + (key.upArrow ? -1 : 1))) });
      return true;
    }
    if (key.ctrl || key.meta || bufferRef.current.text !== '') return false;
    const letter = input.toLowerCase();
    const decision = letter === 'y' ? 'approve' : letter === 'n' ? 'deny' : letter === 'a' ? 'always' : undefined;
    if (!decision) return false;
    const request = approvals[Math.min(approvalIndex, approvals.length - 1)];
    if (!request) controller.flash('nothing is waiting for you');
    else controller.flash(controller.answerApproval(request.id, decision), decision === 'deny' ? 'warn' : 'info');
    return true;
  }

  function typedChunk(chunk: string): void {
    for (const char of chunk) {
      if (char === '\t') onTab({ shift: false } as Key);
      else if (char === '\r' || char === '\n') submit();
      else if (char === '\x7f' || char === '\b') apply(edit.backspace);
      else apply((b) => edit.insert(b, char));
    }
  }

  function onTab(key: Key): void {
    const text = bufferRef.current.text;
    if (!key.shift && text.startsWith('/') && !text.includes('\n')) {
      const state = store.getState();
      const { line, candidates } = completeLine(text, { controller, state, focus: state.focus });
      if (line !== text) apply(() => edit.setText(line));
      else if (candidates.length > 1) controller.flash(candidates.join('  '));
      return;
    }
    const { order, focus } = store.getState();
    const index = order.indexOf(focus);
    focusIndex((index + (key.shift ? order.length - 1 : 1)) % order.length);
  }

  function focusIndex(index: number): void {
    const state = store.getState();
    const name = state.order[index];
    if (!name) return;
    const agent = state.agents[name]!;
    store.setState({ focus: name, view: 'pane', agents: { ...state.agents, [name]: { ...agent, unread: false } } });
  }

  function scroll(rows: number): void {
    const state = store.getState();
    const current = state.scroll[state.focus] ?? 0;
    store.setState({ scroll: { ...state.scroll, [state.focus]: Math.max(0, current + rows) } });
  }

  function recall(entry: string | undefined): void {
    if (entry !== undefined) apply(() => edit.setText(entry));
  }

  function submit(): void {
    const { text, cursor } = bufferRef.current;
    // A trailing backslash continues the input on a new line.
    if (text.slice(0, cursor).endsWith('\\')) {
      apply((b) => edit.insert(edit.backspace(b), '\n'));
      return;
    }
    const line = text.trim();
    if (!line) return;
    history.add(text);
    apply(() => edit.EMPTY_INPUT);
    const state = store.getState();
    store.setState({ scroll: { ...state.scroll, [state.focus]: 0 } });
    if (line.startsWith('/')) {
      void runCommandLine(line, { controller, state, focus: state.focus }).then((result) => {
        if (result.kind === 'quit') return quit();
        if (result.kind === 'view') return store.setState({ view: result.view });
        if (result.kind === 'error') return controller.flash(result.message, 'error');
        if (result.message) controller.flash(result.message);
      });
      return;
    }
    if (state.view !== 'pane') store.setState({ view: 'pane' });
    controller.sendTo(state.focus, text).catch((error: unknown) => controller.flash(String((error as Error).message ?? error), 'error'));
  }
}
