// What key intents do to the console's own state: the input line, focus, views, scrolling. Each is
// one synchronous store update computed from the latest state (never from a rendered copy), so a
// burst of keys applies in order however far React is behind.
import { anchorRow, maxTop, rowAnchor, rowIndex, searchRows } from '../render/pane-window.js';
import type { BestOfView, ConsoleState, ConsoleStore, TextPage, ViewName } from './console-store.js';
import { EMPTY_INPUT, setText, type InputBuffer } from './input-buffer.js';

/** The pane's transcript area while scrolled (the pane in view, laid out now): width and rows. */
export interface PaneSize {
  width: number;
  rows: number;
}

/** Applies an edit (input-buffer.ts) to the input line; no update when nothing changes. */
export function editInput(store: ConsoleStore, edit: (buffer: InputBuffer) => InputBuffer): void {
  store.setState((state) => {
    const input = edit(state.input);
    if (input === state.input) return state;
    // A changed line filters the palette anew, from its first row.
    return input.text === state.input.text ? { input } : { input, palette: { ...state.palette, index: 0 } };
  });
}

export function setInputText(store: ConsoleStore, text: string): void {
  store.setState({ input: setText(text) });
}

/** Puts a recalled line in the input; the palette stays shut for it (↑ keeps walking the history). */
export function recallInput(store: ConsoleStore, text: string): void {
  store.setState(() => ({ input: setText(text), palette: { index: 0, closedFor: text.startsWith('/') ? text : undefined } }));
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
    return { focus: name, view: 'pane', search: undefined, agents: { ...state.agents, [name]: { ...agent, unread: false } } };
  });
}

/** The next (+1) or previous (-1) pane, wrapping around. */
export function cyclePane(store: ConsoleStore, step: 1 | -1): void {
  const { order, focus } = store.getState();
  focusPaneAt(store, (order.indexOf(focus) + order.length + step) % order.length);
}

/** The pane in view's top row now (the last page while following) and the last possible top. */
function paneTop(state: ConsoleState, size: PaneSize): { top: number; last: number; index: ReturnType<typeof rowIndex> } | undefined {
  const agent = state.agents[state.focus];
  if (!agent) return undefined;
  const index = rowIndex(agent.items, size.width, state.expanded[state.focus] ?? false);
  const last = maxTop(index, size.rows);
  const scroll = state.scroll[state.focus];
  return { top: scroll ? Math.min(anchorRow(agent.items, index, scroll), last) : last, last, index };
}

/** The view of the pane in view starting at `top` (reaching the last page follows the end again). */
function scrolledTo(state: ConsoleState, top: number, last: number, index: ReturnType<typeof rowIndex>): Partial<ConsoleState> {
  const items = state.agents[state.focus]?.items ?? [];
  // All of it on screen (last = 0): nothing to scroll, the pane keeps following its end.
  const anchor = top >= last || last === 0 ? undefined : rowAnchor(items, index, Math.max(0, top));
  if (!anchor && !state.scroll[state.focus]) return state;
  return { scroll: { ...state.scroll, [state.focus]: anchor } };
}

/** Scrolls the pane in view up (positive rows) or down, within what is there; the end follows again. */
export function scrollPane(store: ConsoleStore, size: PaneSize, rows: number): void {
  store.setState((state) => {
    const at = paneTop(state, size);
    return at ? scrolledTo(state, at.top - rows, at.last, at.index) : state;
  });
}

/** To the first row of the pane in view, or back to following its end. */
export function scrollPaneToEdge(store: ConsoleStore, size: PaneSize, edge: 'top' | 'bottom'): void {
  store.setState((state) => {
    if (edge === 'bottom') return state.scroll[state.focus] ? { scroll: { ...state.scroll, [state.focus]: undefined } } : state;
    const at = paneTop(state, size);
    return at ? scrolledTo(state, 0, at.last, at.index) : state;
  });
}

export function followPane(store: ConsoleStore, agent: string): void {
  store.setState((state) => (state.scroll[agent] ? { scroll: { ...state.scroll, [agent]: undefined } } : state));
}

// ---- search in the pane ----------------------------------------------------------------------

export function openSearch(store: ConsoleStore): void {
  store.setState((state) => (state.search ? state : { search: { query: '', match: 0 }, view: 'pane' }));
}

export function closeSearch(store: ConsoleStore): void {
  store.setState((state) => (state.search ? { search: undefined } : state));
}

/** Changes the query (or which match, `step` older (+) or newer (-)) and brings that match into view. */
export function searchPane(store: ConsoleStore, size: PaneSize, change: { query?: string; step?: number }): void {
  store.setState((state) => {
    if (!state.search) return state;
    const query = change.query ?? state.search.query;
    const agent = state.agents[state.focus];
    const expanded = state.expanded[state.focus] ?? false;
    const rows = agent ? searchRows(agent.items, size.width, expanded, query) : [];
    const match = rows.length ? Math.max(0, Math.min(rows.length - 1, (change.query !== undefined ? 0 : state.search.match) + (change.step ?? 0))) : 0;
    const search = { query, match };
    const row = rows[rows.length - 1 - match];
    if (row === undefined || !agent) return { search };
    const index = rowIndex(agent.items, size.width, expanded);
    const last = maxTop(index, size.rows);
    // The match a third of the way down the pane, with its context above it.
    const top = Math.max(0, Math.min(last, row - Math.floor(size.rows / 3)));
    const anchor = rowAnchor(agent.items, index, top);
    return { search, scroll: { ...state.scroll, [state.focus]: anchor } };
  });
}

// ---- views -------------------------------------------------------------------------------------

export function toggleView(store: ConsoleStore, view: ViewName): void {
  store.setState((state) => ({ view: state.view === view ? 'pane' : view, viewScroll: 0, search: undefined }));
}

export function showView(store: ConsoleStore, view: ViewName): void {
  store.setState((state) => (state.view === view ? state : { view, viewScroll: 0, search: undefined }));
}

/** Command output that is a page (a table, a listing): a view that fits and scrolls. */
export function showPage(store: ConsoleStore, page: TextPage): void {
  store.setState({ page, view: 'page', viewScroll: 0, search: undefined });
}

/** Scrolls a view over the pane; `maxRows` is how far it can go (its rows less the rows shown). */
export function scrollView(store: ConsoleStore, rows: number, maxRows: number): void {
  store.setState((state) => {
    const next = Math.max(0, Math.min(maxRows, state.viewScroll + rows));
    return next === state.viewScroll ? state : { viewScroll: next };
  });
}

// ---- /grid ------------------------------------------------------------------------------------

/** Moves the selected tile by `step` (wrapping), over `count` tiles. */
export function moveGridSelection(store: ConsoleStore, step: number, count: number): void {
  store.setState((state) => ({ gridIndex: count ? (((state.gridIndex + step) % count) + count) % count : 0 }));
}

/** /backlog: the issue above or below (stops at the ends: a list, not tiles). */
export function moveBacklogSelection(store: ConsoleStore, step: number): void {
  store.setState((state) => ({ backlogIndex: Math.max(0, Math.min(state.backlog.rows.length - 1, state.backlogIndex + step)) }));
}

// ---- the palette ------------------------------------------------------------------------------

export function selectPaletteRow(store: ConsoleStore, step: number, count: number): void {
  store.setState((state) => ({ palette: { ...state.palette, index: count ? (((state.palette.index + step) % count) + count) % count : 0 } }));
}

/** Esc on the palette: it stays shut for this line. */
export function closePalette(store: ConsoleStore): void {
  store.setState((state) => ({ palette: { index: 0, closedFor: state.input.text } }));
}

export function toggleMouse(store: ConsoleStore): void {
  store.setState((state) => ({ mouse: !state.mouse }));
}

export function toggleToolResults(store: ConsoleStore): void {
  store.setState((state) => ({ expanded: { ...state.expanded, [state.focus]: !state.expanded[state.focus] } }));
}

/** Moves the selection in the "needs you" queue, staying on a request that exists. */
export function selectApproval(store: ConsoleStore, step: number): void {
  store.setState((state) => ({ approvalIndex: Math.max(0, Math.min(state.approvals.length - 1, state.approvalIndex + step)) }));
}

// ---- /best-of ---------------------------------------------------------------------------------

/** Changes the compare view's state (nothing when no best-of run is shown). */
export function patchBestOf(store: ConsoleStore, patch: Partial<BestOfView>): void {
  store.setState((state) => (state.bestOf ? { bestOf: { ...state.bestOf, ...patch } } : state));
}

/** The candidate before or after the selected one (wrapping); a page at 80 columns. */
export function selectBestOfCandidate(store: ConsoleStore, step: number): void {
  store.setState((state) => {
    const view = state.bestOf;
    if (!view) return state;
    const n = view.record.candidates.length;
    return { bestOf: { ...view, selected: (view.selected + step + n) % n }, viewScroll: 0 };
  });
}
