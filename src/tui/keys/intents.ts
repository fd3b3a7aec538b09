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
import { openPalette, paletteSelection } from '../commands/palette.js';
import { gridAgents } from '../state/grid.js';
import { workflowAgents } from '../state/workflow-agents.js';
import { askChoices } from '../state/ask-choices.js';
import type { IntentName } from './console-keymap.js';
import type { KeyPress } from './key-press.js';
import { notInterruptedNote } from '../state/interrupt-note.js';

/** After one Ctrl+C, a second one within this window quits. */
export const QUIT_WINDOW_MS = 2_000;

export interface IntentDeps {
  store: ConsoleStore;
  controller: ConsoleController;
  history: InputHistory;
  quit: () => void;
  /** The pane in view's transcript area while scrolled, as laid out now: PgUp/PgDn move by its rows. */
  paneSize: () => act.PaneSize;
  /** The view over the pane: rows it shows, and rows it has (for scrolling help, a page, the board). */
  viewSize?: () => { shown: number; total: number };
}

type ApprovalDecision = Parameters<ConsoleController['answerApproval']>[1];

export type IntentHandler = (key: KeyPress, arg: string | number | undefined) => void;

export interface Intents {
  readonly handlers: Readonly<Record<IntentName, IntentHandler>>;
  dispose(): void;
}

/** Tab on an ambiguous word cycles through its completions while the line stays as Tab left it. */
interface CompletionCycle {
  base: string;
  candidates: string[];
  index: number;
  line: string;
}

export function createIntents({ store, controller, history, quit, paneSize, viewSize }: IntentDeps): Intents {
  let quitTimer: NodeJS.Timeout | undefined;
  let cycle: CompletionCycle | undefined;
  const editing =
    (change: (buffer: edit.InputBuffer) => edit.InputBuffer): IntentHandler =>
    () =>
      act.editInput(store, change);
  const recall = (entry: string | undefined) => {
    if (entry !== undefined) act.recallInput(store, entry);
  };
  const pageRows = () => Math.max(1, paneSize().rows - 1);
  const viewStep = (arg: string | number | undefined): number => {
    const shown = viewSize?.().shown ?? 10;
    const steps: Record<string, number> = { 'page-up': -(shown - 1), 'page-down': shown - 1, 'wheel-up': -3, 'wheel-down': 3, 'line-up': -1, 'line-down': 1 };
    return steps[String(arg)] ?? 0;
  };
  const viewMax = () => {
    const size = viewSize?.();
    return size ? Math.max(0, size.total - size.shown) : 0;
  };

  const handlers: Record<IntentName, IntentHandler> = {
    'console.quit': () => {
      if (store.getState().quitArmed) return quit();
      store.setState({ quitArmed: true });
      clearTimeout(quitTimer);
      quitTimer = setTimeout(() => store.setState({ quitArmed: false }), QUIT_WINDOW_MS);
    },
    'view.close': () => act.showView(store, 'pane'),
    'view.toggle': (_key, view) => act.toggleView(store, view as ViewName),
    'view.scroll': (_key, arg) => act.scrollView(store, viewStep(arg), viewMax()),
    'view.edge': (_key, edge) => act.scrollView(store, edge === 'top' ? -Infinity : Infinity, viewMax()),
    'agent.interrupt': () => {
      const { focus } = store.getState();
      if (!controller.interrupt(focus)) controller.flash(notInterruptedNote(focus, store.getState().agents[focus]));
    },
    'pane.next': () => act.cyclePane(store, 1),
    'pane.previous': () => act.cyclePane(store, -1),
    'pane.jump': (_key, index) => act.focusPaneAt(store, Number(index)),
    'pane.pageUp': () => act.scrollPane(store, paneSize(), pageRows()),
    'pane.pageDown': () => act.scrollPane(store, paneSize(), -pageRows()),
    'pane.scroll': (_key, rows) => act.scrollPane(store, paneSize(), Number(rows)),
    'pane.top': () => act.scrollPaneToEdge(store, paneSize(), 'top'),
    'pane.bottom': () => act.scrollPaneToEdge(store, paneSize(), 'bottom'),
    'pane.toggleToolResults': () => act.toggleToolResults(store),
    'search.open': () => act.openSearch(store),
    'search.close': () => act.closeSearch(store),
    'search.insert': (key) => act.searchPane(store, paneSize(), { query: (store.getState().search?.query ?? '') + key.text }),
    'search.deleteLeft': () => act.searchPane(store, paneSize(), { query: [...(store.getState().search?.query ?? '')].slice(0, -1).join('') }),
    'search.step': (_key, step) => act.searchPane(store, paneSize(), { step: Number(step) }),
    'palette.select': (_key, step) => act.selectPaletteRow(store, Number(step), openPalette(store.getState()).length),
    'palette.complete': () => {
      const command = selectedCommand();
      if (command) act.setInputText(store, `/${command.name} `);
    },
    'palette.pick': () => {
      const command = selectedCommand();
      if (!command) return submit();
      // A command that needs arguments is completed for them; one that does not runs now.
      if (command.args && !command.args.startsWith('[')) return act.setInputText(store, `/${command.name} `);
      act.setInputText(store, `/${command.name}`);
      submit();
    },
    'backlog.select': (_key, step) => act.moveBacklogSelection(store, Number(step)),
    'backlog.open': () => {
      const { backlog, backlogIndex, order } = store.getState();
      const row = backlog.rows[Math.min(backlogIndex, backlog.rows.length - 1)];
      if (!row) return controller.flash('the backlog has no issue to open', 'warn');
      if (!order.includes(row.name)) return controller.flash(`#${row.number} has no teammate yet (${row.phase}): its pane opens once it starts`, 'warn');
      act.focusPaneAt(store, order.indexOf(row.name));
    },
    'grid.move': (_key, step) => act.moveGridSelection(store, Number(step), gridAgents(store.getState()).length),
    'grid.focus': () => {
      const state = store.getState();
      const tiles = gridAgents(state);
      const name = tiles[Math.min(state.gridIndex, tiles.length - 1)];
      if (name) act.focusPaneAt(store, state.order.indexOf(name));
    },
    'workflow.select': (_key, step) => {
      const count = workflowAgents(store.getState().workflow).length;
      store.setState((state) => ({ workflowIndex: count ? Math.min(count - 1, Math.max(0, state.workflowIndex + Number(step))) : 0 }));
    },
    'workflow.act': (_key, arg) => {
      const state = store.getState();
      const selected = workflowAgents(state.workflow)[state.workflowIndex];
      const action = arg === 'pause' && state.workflow?.state === 'paused' ? 'resume' : (arg as 'pause' | 'restart' | 'stop');
      void controller.workflowAction(action, selected?.agent).then(
        (text) => controller.flash(text),
        (error: Error) => controller.flash(error.message, 'error'),
      );
    },
    'workflow.open': () => {
      const state = store.getState();
      const selected = workflowAgents(state.workflow)[state.workflowIndex];
      const index = selected ? state.order.indexOf(selected.agent) : -1;
      if (index >= 0) act.focusPaneAt(store, index);
      else controller.flash(selected ? `${selected.agent} has not started yet` : 'no step selected', 'warn');
    },
    'mouse.toggle': () => {
      act.toggleMouse(store);
      controller.flash(
        store.getState().mouse
          ? 'mouse on: the wheel scrolls; to select text hold Shift while dragging (Alt+M turns the mouse off)'
          : 'mouse off: drag to select and copy text as usual; PgUp/PgDn scroll (Alt+M turns the wheel back on)',
      );
    },
    'ask.answer': (_key, key) => {
      const state = store.getState();
      const request = state.approvals.find((r) => r.agent === state.focus);
      const choice = request && askChoices(request).find((c) => c.key === key);
      if (!request || !choice) return controller.flash(`${String(key)} is not one of the choices here`, 'warn');
      if (choice.withReason) return store.setState({ denying: request.id });
      controller.flash(controller.answerApproval(request.id, choice.answer), choice.answer === 'deny' ? 'warn' : 'info');
    },
    'ask.sendDenial': () => {
      const { denying, input } = store.getState();
      store.setState({ denying: undefined, input: edit.EMPTY_INPUT });
      if (denying) controller.flash(controller.answerApproval(denying, 'deny', input.text.trim() || undefined), 'warn');
    },
    'ask.cancelDenial': () => store.setState({ denying: undefined }),
    'approvals.select': (_key, step) => act.selectApproval(store, Number(step)),
    'approvals.answer': (_key, decision) => {
      const { approvals, approvalIndex } = store.getState();
      const request = approvals[Math.min(approvalIndex, approvals.length - 1)];
      if (!request) return controller.flash('nothing is waiting for you');
      controller.flash(controller.answerApproval(request.id, decision as ApprovalDecision), decision === 'deny' ? 'warn' : 'info');
    },
    'approvals.edit': () => {
      const { approvals, approvalIndex } = store.getState();
      const request = approvals[Math.min(approvalIndex, approvals.length - 1)];
      if (!request) return controller.flash('nothing is waiting for you');
      if (request.tool !== 'plan') return controller.flash('only a plan can be edited here; y, n or a answer this one', 'warn');
      const said = controller.editPlan(request.id);
      controller.flash(said.text, said.tone);
    },
    'bestof.select': (_key, step) => act.selectBestOfCandidate(store, Number(step)),
    'bestof.detail': (_key, how) => {
      const view = store.getState().bestOf;
      if (!view) return;
      act.patchBestOf(store, { detail: how === 'off' ? false : !view.detail });
      store.setState({ viewScroll: 0 });
    },
    'bestof.confirm': (_key, kind) => {
      const view = store.getState().bestOf;
      if (!view || view.busy) return;
      if (view.record.outcome.kind !== 'waiting') {
        return controller.flash(
          view.record.outcome.kind === 'running' ? 'the candidates are still at work: pick once they are done' : 'this best-of run is over',
          'warn',
        );
      }
      const candidate = view.record.candidates[view.selected]!;
      act.patchBestOf(store, { confirming: kind === 'pick' ? { kind: 'pick', name: candidate.name } : { kind: 'discard' } });
    },
    'bestof.answer': (_key, answer) => {
      const view = store.getState().bestOf;
      const confirming = view?.confirming;
      if (!view || !confirming) return;
      act.patchBestOf(store, { confirming: undefined });
      if (answer !== 'y') return controller.flash('nothing picked; the candidates wait');
      act.patchBestOf(store, { busy: true });
      controller.pickBestOf(confirming.kind === 'pick' ? confirming.name : 'none').then(
        (message) => controller.flash(message),
        (error: unknown) => controller.flash(String((error as Error).message ?? error), 'error'),
      );
    },
    'input.insert': (key) => act.editInput(store, (buffer) => edit.insert(buffer, key.text)),
    'input.newline': editing((buffer) => edit.insert(buffer, '\n')),
    'input.deleteLeft': editing(edit.backspace),
    'input.deleteRight': editing(edit.deleteForward),
    'input.deleteWordLeft': editing(edit.deleteWordBack),
    'input.clear': () => act.clearInput(store),
    'cursor.left': editing(edit.moveLeft),
    'cursor.right': editing(edit.moveRight),
    'cursor.up': editing(edit.lineUp),
    'cursor.down': editing(edit.lineDown),
    'cursor.home': editing(edit.home),
    'cursor.end': editing(edit.end),
    'history.previous': () => recall(history.previous(store.getState().input.text)),
    'history.next': () => recall(history.next()),
    'input.complete': () => complete(),
    'input.submit': () => submit(),
  };

  function selectedCommand() {
    const state = store.getState();
    const entries = openPalette(state);
    return entries[paletteSelection(state, entries)];
  }

  function complete(): void {
    const state = store.getState();
    const text = state.input.text;
    if (cycle && text === cycle.line) {
      cycle.index = (cycle.index + 1) % cycle.candidates.length;
      cycle.line = cycle.base + cycle.candidates[cycle.index]!;
      act.setInputText(store, cycle.line);
      controller.flash(choices(cycle));
      return;
    }
    cycle = undefined;
    const { line, candidates } = completeLine(text, { controller, state, focus: state.focus });
    if (line !== text || candidates.length <= 1) {
      if (line !== text) act.setInputText(store, line);
      return;
    }
    // Nothing more in common: the first choice, then the next on each Tab.
    const base = text.replace(/\S*$/, '');
    const words = candidates.map((candidate) => candidate.replace(/^\//, base === '' ? '/' : ''));
    cycle = { base, candidates: words, index: 0, line: base + words[0]! };
    act.setInputText(store, cycle.line);
    controller.flash(choices(cycle));
  }

  function choices(current: CompletionCycle): string {
    return `Tab: ${current.candidates.map((c, i) => (i === current.index ? `[${c}]` : c)).join('  ')}`;
  }

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
    store.setState((state) => ({
      input: edit.EMPTY_INPUT,
      palette: { index: 0, closedFor: undefined },
      scroll: { ...state.scroll, [state.focus]: undefined },
    }));
    const state = store.getState();
    if (line.startsWith('/')) {
      void runCommandLine(line, { controller, state, focus: state.focus }).then((result) => {
        if (result.kind === 'quit') return quit();
        if (result.kind === 'view') return act.showView(store, result.view);
        if (result.kind === 'page') return act.showPage(store, { title: result.title, lines: result.lines });
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
