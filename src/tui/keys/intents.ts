// What each intent of the console's keymap does. The console's own state changes through
// state/console-actions.ts; everything that reaches the team goes through the ConsoleController
// (and slash commands through commands/dispatch.ts). Handlers read the store when they run, so
// each sees what the key before it left.
import type { ConsoleController } from '../console-controller.js';
import { completeLine, runCommandLine } from '../commands/dispatch.js';
import type { ConsoleStore, ViewName } from '../state/console-store.js';
import type { InputHistory } from '../state/input-history.js';
import * as edit from '../state/input-buffer.js';
import * as act from '../state/console-actions.js';
import type { IntentName } from './console-keymap.js';
import type { KeyPress } from './key-press.js';

/** After one Ctrl+C, a second one within this window quits. */
export const QUIT_WINDOW_MS = 2_000;

export interface IntentDeps {
  store: ConsoleStore;
  controller: ConsoleController;
  history: InputHistory;
  quit: () => void;
  /** Rows one PgUp/PgDn moves (the pane's height less its header). */
  pageRows: () => number;
}

type ApprovalDecision = Parameters<ConsoleController['answerApproval']>[1];

export type IntentHandler = (key: KeyPress, arg: string | number | undefined) => void;

export interface Intents {
  readonly handlers: Readonly<Record<IntentName, IntentHandler>>;
  dispose(): void;
}

export function createIntents({ store, controller, history, quit, pageRows }: IntentDeps): Intents {
  let quitTimer: NodeJS.Timeout | undefined;
  const editing = (change: (buffer: edit.InputBuffer) => edit.InputBuffer): IntentHandler => () => act.editInput(store, change);
  const recall = (entry: string | undefined) => {
    if (entry !== undefined) act.setInputText(store, entry);
  };

  const handlers: Record<IntentName, IntentHandler> = {
    'console.quit': () => {
      if (store.getState().quitArmed) return quit();
      act.clearInput(store);
      store.setState({ quitArmed: true });
      clearTimeout(quitTimer);
      quitTimer = setTimeout(() => store.setState({ quitArmed: false }), QUIT_WINDOW_MS);
    },
    'view.close': () => act.showView(store, 'pane'),
    'view.toggle': (_key, view) => act.toggleView(store, view as ViewName),
    'agent.interrupt': () => {
      const { focus } = store.getState();
      if (!controller.interrupt(focus)) controller.flash(`${focus} is not in a turn`);
    },
    'pane.next': () => act.cyclePane(store, 1),
    'pane.previous': () => act.cyclePane(store, -1),
    'pane.jump': (_key, index) => act.focusPaneAt(store, Number(index)),
    'pane.pageUp': () => act.scrollPane(store, pageRows()),
    'pane.pageDown': () => act.scrollPane(store, -pageRows()),
    'pane.toggleToolResults': () => act.toggleToolResults(store),
    'approvals.select': (_key, step) => act.selectApproval(store, Number(step)),
    'approvals.answer': (_key, decision) => {
      const { approvals, approvalIndex } = store.getState();
      const request = approvals[Math.min(approvalIndex, approvals.length - 1)];
      if (!request) return controller.flash('nothing is waiting for you');
      controller.flash(controller.answerApproval(request.id, decision as ApprovalDecision), decision === 'deny' ? 'warn' : 'info');
    },
    'input.insert': (key) => act.editInput(store, (buffer) => edit.insert(buffer, key.text)),
    'input.newline': editing((buffer) => edit.insert(buffer, '\n')),
    'input.deleteLeft': editing(edit.backspace),
    'input.deleteRight': editing(edit.deleteForward),
    'input.deleteWordLeft': editing(edit.deleteWordBack),
    'input.clear': () => act.clearInput(store),
    'cursor.left': editing(edit.moveLeft),
    'cursor.right': editing(edit.moveRight),
    'cursor.home': editing(edit.home),
    'cursor.end': editing(edit.end),
    'history.previous': () => recall(history.previous(store.getState().input.text)),
    'history.next': () => recall(history.next()),
    'input.complete': () => {
      const state = store.getState();
      const text = state.input.text;
      const { line, candidates } = completeLine(text, { controller, state, focus: state.focus });
      if (line !== text) act.setInputText(store, line);
      else if (candidates.length > 1) controller.flash(candidates.join('  '));
    },
    'input.submit': () => submit(),
  };

  function submit(): void {
    const { text, cursor } = store.getState().input;
    // A trailing backslash continues the input on a new line.
    if (text.slice(0, cursor).endsWith('\\')) {
      act.editInput(store, (buffer) => edit.insert(edit.backspace(buffer), '\n'));
      return;
    }
    const line = text.trim();
    if (!line) return;
    history.add(text);
    store.setState((state) => ({ input: edit.EMPTY_INPUT, scroll: { ...state.scroll, [state.focus]: 0 } }));
    const state = store.getState();
    if (line.startsWith('/')) {
      void runCommandLine(line, { controller, state, focus: state.focus }).then((result) => {
        if (result.kind === 'quit') return quit();
        if (result.kind === 'view') return act.showView(store, result.view);
        if (result.kind === 'error') return controller.flash(result.message, 'error');
        if (result.message) controller.flash(result.message);
      });
      return;
    }
    if (line.startsWith('!')) {
      // !cmd: the command in the person's shell pane (opened when none is).
      const command = line.slice(1).trim();
      controller.shell(command || undefined).then(
        (message) => controller.flash(message),
        (error: unknown) => controller.flash(String((error as Error).message ?? error), 'error'),
      );
      return;
    }
    act.showView(store, 'pane');
    controller.sendTo(state.focus, text).catch((error: unknown) => controller.flash(String((error as Error).message ?? error), 'error'));
  }

  return {
    handlers,
    dispose: () => clearTimeout(quitTimer),
  };
}
