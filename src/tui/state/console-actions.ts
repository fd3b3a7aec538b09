// What key intents do to the console's own state: the input line, focus, views, scrolling. Each is
// one synchronous store update computed from the latest state (never from a rendered copy), so a
// burst of keys applies in order however far React is behind.
import type { ConsoleStore, ViewName } from './console-store.js';
import { EMPTY_INPUT, setText, type InputBuffer } from './input-buffer.js';

/** Applies an edit (input-buffer.ts) to the input line; no update when nothing changes. */
export function editInput(store: ConsoleStore, edit: (buffer: InputBuffer) => InputBuffer): void {
  store.setState((state) => {
    const input = edit(state.input);
    return input === state.input ? state : { input };
  });
}

export function setInputText(store: ConsoleStore, text: string): void {
  store.setState({ input: setText(text) });
}

export function clearInput(store: ConsoleStore): void {
  store.setState((state) => (state.input.text === '' && state.input.cursor === 0 ? state : { input: EMPTY_INPUT }));
}

/** Brings the pane at `index` (tab order) into view and marks it read. */
export function focusPaneAt(store: ConsoleStore, index: number): void {
  store.setState((state) => {
    const name = state.order[index];
    const agent = name ? state.agents[name] : undefined;
    if (!name || !agent) return state;
    return { focus: name, view: 'pane', agents: { ...state.agents, [name]: { ...agent, unread: false } } };
  });
}

/** The next (+1) or previous (-1) pane, wrapping around. */
export function cyclePane(store: ConsoleStore, step: 1 | -1): void {
  const { order, focus } = store.getState();
  focusPaneAt(store, (order.indexOf(focus) + order.length + step) % order.length);
}

/** Scrolls the pane in view up (positive rows) or down; never below the bottom. */
export function scrollPane(store: ConsoleStore, rows: number): void {
  store.setState((state) => ({ scroll: { ...state.scroll, [state.focus]: Math.max(0, (state.scroll[state.focus] ?? 0) + rows) } }));
}

export function toggleView(store: ConsoleStore, view: ViewName): void {
  store.setState((state) => ({ view: state.view === view ? 'pane' : view }));
}

export function showView(store: ConsoleStore, view: ViewName): void {
  store.setState((state) => (state.view === view ? state : { view }));
}

export function toggleToolResults(store: ConsoleStore): void {
  store.setState((state) => ({ expanded: { ...state.expanded, [state.focus]: !state.expanded[state.focus] } }));
}

/** Moves the selection in the "needs you" queue, staying on a request that exists. */
export function selectApproval(store: ConsoleStore, step: number): void {
  store.setState((state) => ({ approvalIndex: Math.max(0, Math.min(state.approvals.length - 1, state.approvalIndex + step)) }));
}
