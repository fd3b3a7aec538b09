// The console's keys (docs/console.md#keys), as data, each with the line the docs and /help show. What each intent does is in intents.ts.
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
  | 'backlog.select'
  | 'backlog.open'
  | 'grid.move'
  | 'grid.focus'
  | 'workflow.select'
  | 'workflow.act'
  | 'workflow.open'
  | 'mouse.toggle'
  | 'ask.answer'
  | 'ask.sendDenial'
  | 'ask.cancelDenial'
  | 'approvals.select'
  | 'approvals.answer'
  | 'approvals.edit'
  | 'bestof.select'
  | 'bestof.detail'
  | 'bestof.confirm'
  | 'bestof.answer'
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

/** Every console binding says in one line what it does: /help, docs/console.md#keys and the README's cheat-sheet are made from these. */
export type ConsoleBinding = Binding<IntentName> & { doc: string };

/** The question in the pane is answered with 1, 2 or 3 (ask-box.ts). */
const ASK_DOC =
  'answer the question at the bottom of the pane by its number: 1 yes, then (for a command) 2 yes and allow it from now on; the last number is no (type why, then Enter)';

/** Rows one turn of the mouse wheel scrolls. */
export const WHEEL_ROWS = 3;

/** Views over the pane that scroll with PgUp/PgDn, ↑/↓, Home/End and the wheel. */
const SCROLLING_VIEWS = ['help', 'page', 'tasks', 'team', 'bestof'];

export const CONSOLE_BINDINGS: readonly ConsoleBinding[] = [
  // ── views over the pane ──
  // The "needs you" queue: ↑/↓ select (else they walk the history); y, n, a answer while nothing
  // is typed, and only when pressed as themselves (Esc then y, read as Alt+y, types a y).
  { layer: 'view', views: ['approvals'], keys: ['up'], intent: 'approvals.select', arg: -1, when: ['approvalsWaiting'], doc: 'select the request above' },
  { layer: 'view', views: ['approvals'], keys: ['down'], intent: 'approvals.select', arg: 1, when: ['approvalsWaiting'], doc: 'select the request below' },
  {
    layer: 'view',
    views: ['approvals'],
    keys: ['y', 'Y'],
    intent: 'approvals.answer',
    arg: 'approve',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'approve the selected request',
  },
  {
    layer: 'view',
    views: ['approvals'],
    keys: ['n', 'N'],
    intent: 'approvals.answer',
    arg: 'deny',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'deny it (type why, then Enter)',
  },
  {
    layer: 'view',
    views: ['approvals'],
    keys: ['a', 'A'],
    intent: 'approvals.answer',
    arg: 'always',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'approve it and add the command to the allow-list',
  },
  {
    layer: 'view',
    views: ['approvals'],
    keys: ['e', 'E'],
    intent: 'approvals.edit',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'edit the selected plan in $EDITOR (then y approves your text; an auto-approval waits anew)',
  },
  // /best-of's compare view: ←/→ pick a candidate, d its whole diff, p merges it and x discards them all (each asks y or n first).
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['y', 'Y'],
    intent: 'bestof.answer',
    arg: 'y',
    when: ['bestOfConfirming', 'inputEmpty'],
    exactKey: true,
    doc: 'best-of: yes, pick (or discard) as asked',
  },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['n', 'N'],
    intent: 'bestof.answer',
    arg: 'n',
    when: ['bestOfConfirming', 'inputEmpty'],
    exactKey: true,
    doc: 'best-of: no, leave the candidates as they are',
  },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['escape'],
    intent: 'bestof.answer',
    arg: 'n',
    when: ['bestOfConfirming'],
    doc: 'best-of: no, leave the candidates as they are',
  },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['escape'],
    intent: 'bestof.detail',
    arg: 'off',
    when: ['bestOfDetail', 'inputEmpty'],
    doc: 'best-of: back from a diff to the comparison',
  },
  { layer: 'view', views: ['bestof'], keys: ['left'], intent: 'bestof.select', arg: -1, when: ['inputEmpty'], doc: 'best-of: the candidate before' },
  { layer: 'view', views: ['bestof'], keys: ['right'], intent: 'bestof.select', arg: 1, when: ['inputEmpty'], doc: 'best-of: the candidate after' },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['d', 'D'],
    intent: 'bestof.detail',
    arg: 'toggle',
    when: ['inputEmpty'],
    exactKey: true,
    doc: "best-of: the selected candidate's whole diff",
  },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['p', 'P'],
    intent: 'bestof.confirm',
    arg: 'pick',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'best-of: merge the selected candidate and remove the rest (asks first)',
  },
  {
    layer: 'view',
    views: ['bestof'],
    keys: ['x', 'X'],
    intent: 'bestof.confirm',
    arg: 'discard',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'best-of: discard every candidate, merging none (asks first)',
  },
  // A search in the pane takes the typing; Enter and ↑ go to the match before, ↓ to the one after.
  { layer: 'view', views: ['search'], keys: ['escape'], intent: 'search.close', doc: 'end the search' },
  { layer: 'view', views: ['search'], keys: ['enter', 'up', 'ctrl+f'], intent: 'search.step', arg: 1, doc: 'the match before' },
  { layer: 'view', views: ['search'], keys: ['down'], intent: 'search.step', arg: -1, doc: 'the match after' },
  { layer: 'view', views: ['search'], keys: ['backspace'], intent: 'search.deleteLeft', doc: 'delete the last character searched for' },
  { layer: 'view', views: ['search'], keys: [TEXT], intent: 'search.insert', doc: 'type what to search for (matches are highlighted)' },
  // /grid: arrows pick a tile, Enter brings its pane into view (while nothing is typed).
  { layer: 'view', views: ['grid'], keys: ['left', 'up'], intent: 'grid.move', arg: -1, when: ['inputEmpty'], doc: 'the tile before' },
  { layer: 'view', views: ['grid'], keys: ['right', 'down'], intent: 'grid.move', arg: 1, when: ['inputEmpty'], doc: 'the tile after' },
  { layer: 'view', views: ['grid'], keys: ['enter'], intent: 'grid.focus', when: ['inputEmpty'], doc: "open the tile's pane" },
  // /backlog: arrows pick an issue, Enter brings its teammate's pane into view (while nothing is typed).
  { layer: 'view', views: ['backlog'], keys: ['up'], intent: 'backlog.select', arg: -1, when: ['inputEmpty'], doc: 'the issue above' },
  { layer: 'view', views: ['backlog'], keys: ['down'], intent: 'backlog.select', arg: 1, when: ['inputEmpty'], doc: 'the issue below' },
  { layer: 'view', views: ['backlog'], keys: ['enter'], intent: 'backlog.open', when: ['inputEmpty'], doc: "open the issue's teammate pane" },
  // /workflows: ↑/↓ pick a step's agent; p, r, s act on the run while nothing is typed.
  { layer: 'view', views: ['workflows'], keys: ['up'], intent: 'workflow.select', arg: -1, when: ['inputEmpty'], doc: 'select the agent above' },
  { layer: 'view', views: ['workflows'], keys: ['down'], intent: 'workflow.select', arg: 1, when: ['inputEmpty'], doc: 'select the agent below' },
  {
    layer: 'view',
    views: ['workflows'],
    keys: ['p'],
    intent: 'workflow.act',
    arg: 'pause',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'pause the run (no new step starts; those at work go on); again: resume it',
  },
  {
    layer: 'view',
    views: ['workflows'],
    keys: ['r'],
    intent: 'workflow.act',
    arg: 'restart',
    when: ['inputEmpty'],
    exactKey: true,
    doc: "restart the selected agent: a new one takes its step's task",
  },
  {
    layer: 'view',
    views: ['workflows'],
    keys: ['s'],
    intent: 'workflow.act',
    arg: 'stop',
    when: ['inputEmpty'],
    exactKey: true,
    doc: 'stop the run (its steps stop; /workflow run FILE goes on where it stopped)',
  },
  { layer: 'view', views: ['workflows'], keys: ['enter'], intent: 'workflow.open', when: ['inputEmpty'], doc: "open the selected agent's pane" },
  // Views that are longer than the screen scroll.
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['pageup'], intent: 'view.scroll', arg: 'page-up', doc: 'scroll a page up' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['pagedown'], intent: 'view.scroll', arg: 'page-down', doc: 'scroll a page down' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['wheelup'], intent: 'view.scroll', arg: 'wheel-up', doc: 'scroll up' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['wheeldown'], intent: 'view.scroll', arg: 'wheel-down', doc: 'scroll down' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['up'], intent: 'view.scroll', arg: 'line-up', when: ['inputEmpty'], doc: 'scroll up' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['down'], intent: 'view.scroll', arg: 'line-down', when: ['inputEmpty'], doc: 'scroll down' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['home', 'g'], intent: 'view.edge', arg: 'top', when: ['inputEmpty'], doc: 'the top' },
  { layer: 'view', views: SCROLLING_VIEWS, keys: ['end', 'G'], intent: 'view.edge', arg: 'bottom', when: ['inputEmpty'], doc: 'the end' },
  { layer: 'view', keys: ['escape'], intent: 'view.close', when: ['inputEmpty'], doc: 'close the view (with nothing typed)', cheat: true },

  // ── the input line ──
  // Saying why a request is denied: Enter sends the reason (or none), Esc on an empty line goes back.
  { layer: 'input', keys: ['enter'], intent: 'ask.sendDenial', when: ['denying'], doc: 'saying no to a request: send why (or nothing)' },
  {
    layer: 'input',
    keys: ['escape'],
    intent: 'ask.cancelDenial',
    when: ['denying', 'inputEmpty'],
    doc: 'saying no to a request, nothing typed: go back to the question',
  },
  { layer: 'input', keys: ['escape'], intent: 'input.clear', when: ['!inputEmpty'], doc: 'clear what is typed', cheat: true },
  // The palette (typing '/'): ↑/↓ pick a command, Tab completes it, Enter runs it (or completes one that takes arguments).
  { layer: 'input', keys: ['up'], intent: 'palette.select', arg: -1, when: ['paletteOpen'], doc: 'in the palette (typing /): pick the command above' },
  { layer: 'input', keys: ['down'], intent: 'palette.select', arg: 1, when: ['paletteOpen'], doc: 'in the palette: pick the command below' },
  { layer: 'input', keys: ['tab'], intent: 'palette.complete', when: ['paletteOpen'], doc: 'in the palette: complete the command' },
  {
    layer: 'input',
    keys: ['enter'],
    intent: 'palette.pick',
    when: ['paletteOpen'],
    doc: 'in the palette: run the command (or complete one that takes arguments)',
  },
  {
    layer: 'input',
    keys: ['enter'],
    intent: 'input.submit',
    doc: 'send the input to the agent in view: a prompt for the lead, a message for a teammate',
    cheat: true,
  },
  { layer: 'input', keys: ['tab'], intent: 'input.complete', when: ['slashLine'], doc: "on a /command's argument: complete it (again: the next choice)" },
  // In a multi-line input ↑/↓ move between its lines; from the first or last line they walk the history.
  { layer: 'input', keys: ['up'], intent: 'cursor.up', when: ['!cursorOnFirstLine'], doc: 'in a multi-line input: the line above' },
  { layer: 'input', keys: ['down'], intent: 'cursor.down', when: ['!cursorOnLastLine'], doc: 'in a multi-line input: the line below' },
  { layer: 'input', keys: ['up'], intent: 'history.previous', doc: 'the previous input from the history' },
  { layer: 'input', keys: ['down'], intent: 'history.next', doc: 'the next input from the history' },
  { layer: 'input', keys: ['left'], intent: 'cursor.left', doc: 'move the cursor left' },
  { layer: 'input', keys: ['right'], intent: 'cursor.right', doc: 'move the cursor right' },
  { layer: 'input', keys: ['ctrl+a'], intent: 'cursor.home', doc: 'to the start of the line' },
  { layer: 'input', keys: ['ctrl+e'], intent: 'cursor.end', doc: 'to the end of the line' },
  // Home/End edit a line being typed; on an empty input they go to the top or end of the pane.
  { layer: 'input', keys: ['home'], intent: 'cursor.home', when: ['!inputEmpty'], doc: 'with text typed: to the start of the line' },
  { layer: 'input', keys: ['end'], intent: 'cursor.end', when: ['!inputEmpty'], doc: 'with text typed: to the end of the line' },
  { layer: 'input', keys: ['backspace'], intent: 'input.deleteLeft', doc: 'delete the character before the cursor' },
  { layer: 'input', keys: ['delete'], intent: 'input.deleteRight', doc: 'delete the character under the cursor' },
  { layer: 'input', keys: ['ctrl+u'], intent: 'input.clear', doc: 'clear the input' },
  { layer: 'input', keys: ['ctrl+w'], intent: 'input.deleteWordLeft', doc: 'delete the word before the cursor' },
  { layer: 'input', keys: ['ctrl+j'], intent: 'input.newline', doc: 'a new line in the input (so does \\ then Enter)' },

  // ── panes and the console ──
  // The question in the pane in view: 1 yes, 2 yes and allow from now on, 3 no (ask-box.ts).
  ...(['1', '2', '3'] as const).map((key): ConsoleBinding => ({
    layer: 'global',
    keys: [key],
    intent: 'ask.answer',
    arg: key,
    when: ['askInView', 'inputEmpty'],
    exactKey: true,
    doc: ASK_DOC,
    cheat: true,
  })),
  { layer: 'global', keys: ['ctrl+c'], intent: 'agent.interrupt', when: ['agentBusy'], doc: 'interrupt the agent in view while it works', cheat: true },
  { layer: 'global', keys: ['ctrl+c'], intent: 'input.clear', when: ['!inputEmpty'], doc: 'clear what is typed', cheat: true },
  { layer: 'global', keys: ['ctrl+c'], intent: 'console.quit', doc: 'quit (press it twice)', cheat: true },
  { layer: 'global', keys: ['escape'], intent: 'agent.interrupt', doc: 'interrupt the agent in view', cheat: true },
  { layer: 'global', keys: ['ctrl+t'], intent: 'view.toggle', arg: 'tasks', doc: 'the task board', cheat: true },
  { layer: 'global', keys: ['ctrl+y'], intent: 'view.toggle', arg: 'approvals', doc: 'the needs-you queue: every question of every agent', cheat: true },
  { layer: 'global', keys: ['ctrl+g'], intent: 'view.toggle', arg: 'grid', doc: "the grid: every agent's latest output at once", cheat: true },
  { layer: 'global', keys: ['ctrl+o'], intent: 'pane.toggleToolResults', doc: 'show or hide tool results in the pane (edits as a diff)' },
  { layer: 'global', keys: ['ctrl+f'], intent: 'search.open', doc: 'search the pane', cheat: true },
  { layer: 'global', keys: ['alt+m'], intent: 'mouse.toggle', exactKey: true, doc: 'mouse capture on or off (on: the wheel scrolls, Shift+drag selects)' },
  { layer: 'global', keys: ['tab'], intent: 'pane.next', doc: 'the next pane', cheat: true },
  { layer: 'global', keys: ['shift+tab'], intent: 'pane.previous', doc: 'the previous pane', cheat: true },
  ...Array.from({ length: 9 }, (_, index): ConsoleBinding => ({
    layer: 'global',
    keys: [`alt+${index + 1}`],
    intent: 'pane.jump',
    arg: index,
    doc: 'jump to a pane',
    label: 'Alt+1 … Alt+9',
    cheat: true,
  })),
  { layer: 'global', keys: ['pageup'], intent: 'pane.pageUp', doc: 'scroll the pane a page up' },
  { layer: 'global', keys: ['pagedown'], intent: 'pane.pageDown', doc: 'scroll the pane a page down' },
  { layer: 'global', keys: ['wheelup'], intent: 'pane.scroll', arg: WHEEL_ROWS, doc: 'scroll the pane up' },
  { layer: 'global', keys: ['wheeldown'], intent: 'pane.scroll', arg: -WHEEL_ROWS, doc: 'scroll the pane down' },
  { layer: 'global', keys: ['home'], intent: 'pane.top', doc: 'with nothing typed: the top of the pane' },
  { layer: 'global', keys: ['end'], intent: 'pane.bottom', doc: "with nothing typed: back to the pane's end" },
  // Scrolled up, the pane reads like a pager: g and G to the top and the end. ('/' stays the
  // palette, scrolled or not: a command is what a person who types '/' wants; Ctrl+F searches.)
  {
    layer: 'global',
    keys: ['g'],
    intent: 'pane.top',
    when: ['inputEmpty', 'paneScrolled'],
    exactKey: true,
    doc: 'while scrolled up, nothing typed: the top of the pane',
  },
  {
    layer: 'global',
    keys: ['G'],
    intent: 'pane.bottom',
    when: ['inputEmpty', 'paneScrolled'],
    exactKey: true,
    doc: "while scrolled up, nothing typed: back to the pane's end",
  },

  // ── typing ── (an unbound Alt+key types the key: see keymap.ts)
  { layer: 'typing', keys: [TEXT], intent: 'input.insert', doc: 'type into the input' },
];

export const CONSOLE_KEYMAP: Keymap<IntentName> = compileKeymap(CONSOLE_BINDINGS);
