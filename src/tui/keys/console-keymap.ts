// The console's keys (README.md#keys), as data. What each intent does is in intents.ts.
// Esc and Ctrl+C work as in Claude Code: Esc clears what is typed, else closes what is open, else
// interrupts the agent in view; Ctrl+C interrupts a busy agent, else clears, else (twice) quits.
import { compileKeymap, type Binding, type Keymap } from './keymap.js';
import { TEXT } from './key-pattern.js';

export type IntentName =
  | 'console.quit'
  | 'view.close'
  | 'view.toggle'
  | 'view.scroll'
  | 'view.edge'
  | 'agent.interrupt'
  | 'pane.next'
  | 'pane.previous'
  | 'pane.jump'
  | 'pane.pageUp'
  | 'pane.pageDown'
  | 'pane.scroll'
  | 'pane.top'
  | 'pane.bottom'
  | 'pane.toggleToolResults'
  | 'search.open'
  | 'search.close'
  | 'search.insert'
  | 'search.deleteLeft'
  | 'search.step'
  | 'palette.select'
  | 'palette.complete'
  | 'palette.pick'
  | 'grid.move'
  | 'grid.focus'
  | 'mouse.toggle'
  | 'ask.answer'
  | 'ask.sendDenial'
  | 'ask.cancelDenial'
  | 'approvals.select'
  | 'approvals.answer'
  | 'input.insert'
  | 'input.newline'
  | 'input.submit'
  | 'input.complete'
  | 'input.deleteLeft'
  | 'input.deleteRight'
  | 'input.deleteWordLeft'
  | 'input.clear'
  | 'cursor.left'
  | 'cursor.right'
  | 'cursor.up'
  | 'cursor.down'
  | 'cursor.home'
  | 'cursor.end'
  | 'history.previous'
  | 'history.next';

export type ConsoleBinding = Binding<IntentName>;

/** Rows one turn of the mouse wheel scrolls. */
export const WHEEL_ROWS = 3;

/** Views over the pane that scroll with PgUp/PgDn, ↑/↓, Home/End and the wheel. */
const SCROLLING_VIEWS = ['help', 'page', 'tasks', 'team'];

export const CONSOLE_BINDINGS: readonly ConsoleBinding[] = [
  // ── views over the pane ──
  // The "needs you" queue: ↑/↓ select (else they walk the history); y, n, a answer while nothing
  // is typed, and only when pressed as themselves (Esc then y, read as Alt+y, types a y).
  { layer: 'view', views: ['approvals'], keys: ['up'], intent: 'approvals.select', arg: -1, when: ['approvalsWaiting'] },
  { layer: 'view', views: ['approvals'], keys: ['down'], intent: 'approvals.select', arg: 1, when: ['approvalsWaiting'] },
  { layer: 'view', views: ['approvals'], keys: ['y', 'Y'], intent: 'approvals.answer', arg: 'approve', when: ['inputEmpty'], exactKey: true },
  { layer: 'view', views: ['approvals'], keys: ['n', 'N'], intent: 'approvals.answer', arg: 'deny', when: ['inputEmpty'], exactKey: true },
  { layer: 'view', views: ['approvals'], keys: ['a', 'A'], intent: 'approvals.answer', arg: 'always', when: ['inputEmpty'], exactKey: true },
  // A search in the pane takes the typing; Enter and ↑ go to the match before, ↓ to the one after.
  { layer: 'view', views: ['search'], keys: ['escape'], intent: 'search.close' },
  { layer: 'view', views: ['search'], keys: ['enter', 'up', 'ctrl+f'], intent: 'search.step', arg: 1 },
  { layer: 'view', views: ['search'], keys: ['down'], intent: 'search.step', arg: -1 },
  { layer: 'view', views: ['search'], keys: ['backspace'], intent: 'search.deleteLeft' },
  { layer: 'view', views: ['search'], keys: [TEXT], intent: 'search.insert' },
  // /grid: arrows pick a tile, Enter brings its pane into view (while nothing is typed).
  { layer: 'view', views: ['grid'], keys: ['left', 'up'], intent: 'grid.move', arg: -1, when: ['inputEmpty'] },
  { layer: 'view', views: ['grid'], keys: ['right', 'down'], intent: 'grid.move', arg: 1, when: ['inputEmpty'] },
  { layer: 'view', views: ['grid'], keys: ['enter'], intent: 'grid.focus', when: ['inputEmpty'] },
  // Views that are longer than the screen scroll.
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['pageup'], intent: 'view.scroll', arg: 'page-up' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['pagedown'], intent: 'view.scroll', arg: 'page-down' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['wheelup'], intent: 'view.scroll', arg: 'wheel-up' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['wheeldown'], intent: 'view.scroll', arg: 'wheel-down' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['up'], intent: 'view.scroll', arg: 'line-up', when: ['inputEmpty'] },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['down'], intent: 'view.scroll', arg: 'line-down', when: ['inputEmpty'] },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['home', 'g'], intent: 'view.edge', arg: 'top', when: ['inputEmpty'] },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['end', 'G'], intent: 'view.edge', arg: 'bottom', when: ['inputEmpty'] },
  { layer: 'view', keys: ['escape'], intent: 'view.close', when: ['inputEmpty'] },

  // ── the input line ──
  // Saying why a request is denied: Enter sends the reason (or none), Esc on an empty line goes back.
  { layer: 'input', keys: ['enter'], intent: 'ask.sendDenial', when: ['denying'] },
  { layer: 'input', keys: ['escape'], intent: 'ask.cancelDenial', when: ['denying', 'inputEmpty'] },
  { layer: 'input', keys: ['escape'], intent: 'input.clear', when: ['!inputEmpty'] },
  // The palette (typing '/'): ↑/↓ pick a command, Tab completes it, Enter runs it (or completes one that takes arguments).
  { layer: 'input', keys: ['up'], intent: 'palette.select', arg: -1, when: ['paletteOpen'] },
  { layer: 'input', keys: ['down'], intent: 'palette.select', arg: 1, when: ['paletteOpen'] },
  { layer: 'input', keys: ['tab'], intent: 'palette.complete', when: ['paletteOpen'] },
  { layer: 'input', keys: ['enter'], intent: 'palette.pick', when: ['paletteOpen'] },
  { layer: 'input', keys: ['enter'], intent: 'input.submit' },
  { layer: 'input', keys: ['tab'], intent: 'input.complete', when: ['slashLine'] },
  // In a multi-line input ↑/↓ move between its lines; from the first or last line they walk the history.
  { layer: 'input', keys: ['up'], intent: 'cursor.up', when: ['!cursorOnFirstLine'] },
  { layer: 'input', keys: ['down'], intent: 'cursor.down', when: ['!cursorOnLastLine'] },
  { layer: 'input', keys: ['up'], intent: 'history.previous' },
  { layer: 'input', keys: ['down'], intent: 'history.next' },
  { layer: 'input', keys: ['left'], intent: 'cursor.left' },
  { layer: 'input', keys: ['right'], intent: 'cursor.right' },
  { layer: 'input', keys: ['ctrl+a'], intent: 'cursor.home' },
  { layer: 'input', keys: ['ctrl+e'], intent: 'cursor.end' },
  // Home/End edit a line being typed; on an empty input they go to the top or end of the pane.
  { layer: 'input', keys: ['home'], intent: 'cursor.home', when: ['!inputEmpty'] },
  { layer: 'input', keys: ['end'], intent: 'cursor.end', when: ['!inputEmpty'] },
  { layer: 'input', keys: ['backspace'], intent: 'input.deleteLeft' },
  { layer: 'input', keys: ['delete'], intent: 'input.deleteRight' },
  { layer: 'input', keys: ['ctrl+u'], intent: 'input.clear' },
  { layer: 'input', keys: ['ctrl+w'], intent: 'input.deleteWordLeft' },
  { layer: 'input', keys: ['ctrl+j'], intent: 'input.newline' },

  // ── panes and the console ──
  // The question in the pane in view: 1 yes, 2 yes and allow from now on, 3 no (ask-box.ts).
  ...(['1', '2', '3'] as const).map((key): ConsoleBinding => ({ layer: 'global', keys: [key], intent: 'ask.answer', arg: key, when: ['askInView', 'inputEmpty'], exactKey: true })),
  { layer: 'global', keys: ['ctrl+c'], intent: 'agent.interrupt', when: ['agentBusy'] },
  { layer: 'global', keys: ['ctrl+c'], intent: 'input.clear', when: ['!inputEmpty'] },
  { layer: 'global', keys: ['ctrl+c'], intent: 'console.quit' },
  { layer: 'global', keys: ['escape'], intent: 'agent.interrupt' },
  { layer: 'global', keys: ['ctrl+t'], intent: 'view.toggle', arg: 'tasks' },
  { layer: 'global', keys: ['ctrl+y'], intent: 'view.toggle', arg: 'approvals' },
  { layer: 'global', keys: ['ctrl+g'], intent: 'view.toggle', arg: 'grid' },
  { layer: 'global', keys: ['ctrl+o'], intent: 'pane.toggleToolResults' },
  { layer: 'global', keys: ['ctrl+f'], intent: 'search.open' },
  { layer: 'global', keys: ['alt+m'], intent: 'mouse.toggle', exactKey: true },
  { layer: 'global', keys: ['tab'], intent: 'pane.next' },
  { layer: 'global', keys: ['shift+tab'], intent: 'pane.previous' },
  ...Array.from({ length: 9 }, (_, index): ConsoleBinding => ({ layer: 'global', keys: [`alt+${index + 1}`], intent: 'pane.jump', arg: index })),
  { layer: 'global', keys: ['pageup'], intent: 'pane.pageUp' },
  { layer: 'global', keys: ['pagedown'], intent: 'pane.pageDown' },
  { layer: 'global', keys: ['wheelup'], intent: 'pane.scroll', arg: WHEEL_ROWS },
  { layer: 'global', keys: ['wheeldown'], intent: 'pane.scroll', arg: -WHEEL_ROWS },
  { layer: 'global', keys: ['home'], intent: 'pane.top' },
  { layer: 'global', keys: ['end'], intent: 'pane.bottom' },
  // Scrolled up, the pane reads like a pager: g and G to the top and the end. ('/' stays the
  // palette, scrolled or not: a command is what a person who types '/' wants; Ctrl+F searches.)
  { layer: 'global', keys: ['g'], intent: 'pane.top', when: ['inputEmpty', 'paneScrolled'], exactKey: true },
  { layer: 'global', keys: ['G'], intent: 'pane.bottom', when: ['inputEmpty', 'paneScrolled'], exactKey: true },

  // ── typing ── (an unbound Alt+key types the key: see keymap.ts)
  { layer: 'typing', keys: [TEXT], intent: 'input.insert' },
];

export const CONSOLE_KEYMAP: Keymap<IntentName> = compileKeymap(CONSOLE_BINDINGS);
