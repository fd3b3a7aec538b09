// The console's keys (README "Keys", SPEC §8), as data. What each intent does is in intents.ts.
import { compileKeymap, type Binding, type Keymap } from './keymap.js';
import { TEXT } from './key-pattern.js';

export type IntentName =
  | 'console.quit'
  | 'view.close'
  | 'view.toggle'
  | 'agent.interrupt'
  | 'pane.next'
  | 'pane.previous'
  | 'pane.jump'
  | 'pane.pageUp'
  | 'pane.pageDown'
  | 'pane.toggleToolResults'
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
  | 'cursor.home'
  | 'cursor.end'
  | 'history.previous'
  | 'history.next';

export type ConsoleBinding = Binding<IntentName>;

export const CONSOLE_BINDINGS: readonly ConsoleBinding[] = [
  // ── views over the pane ──
  // The "needs you" queue: ↑/↓ select (else they walk the history); y, n, a answer while nothing
  // is typed, and only when pressed as themselves (Esc then y, read as Alt+y, types a y).
  { layer: 'view', views: ['approvals'], keys: ['up'], intent: 'approvals.select', arg: -1, when: ['approvalsWaiting'] },
  { layer: 'view', views: ['approvals'], keys: ['down'], intent: 'approvals.select', arg: 1, when: ['approvalsWaiting'] },
  { layer: 'view', views: ['approvals'], keys: ['y', 'Y'], intent: 'approvals.answer', arg: 'approve', when: ['inputEmpty'], exactKey: true },
  { layer: 'view', views: ['approvals'], keys: ['n', 'N'], intent: 'approvals.answer', arg: 'deny', when: ['inputEmpty'], exactKey: true },
  { layer: 'view', views: ['approvals'], keys: ['a', 'A'], intent: 'approvals.answer', arg: 'always', when: ['inputEmpty'], exactKey: true },
  { layer: 'view', keys: ['escape'], intent: 'view.close' },

  // ── the input line ──
  { layer: 'input', keys: ['enter'], intent: 'input.submit' },
  { layer: 'input', keys: ['tab'], intent: 'input.complete', when: ['slashLine'] },
  { layer: 'input', keys: ['up'], intent: 'history.previous' },
  { layer: 'input', keys: ['down'], intent: 'history.next' },
  { layer: 'input', keys: ['left'], intent: 'cursor.left' },
  { layer: 'input', keys: ['right'], intent: 'cursor.right' },
  { layer: 'input', keys: ['home', 'ctrl+a'], intent: 'cursor.home' },
  { layer: 'input', keys: ['end', 'ctrl+e'], intent: 'cursor.end' },
  { layer: 'input', keys: ['backspace'], intent: 'input.deleteLeft' },
  { layer: 'input', keys: ['delete'], intent: 'input.deleteRight' },
  { layer: 'input', keys: ['ctrl+u'], intent: 'input.clear' },
  { layer: 'input', keys: ['ctrl+w'], intent: 'input.deleteWordLeft' },
  { layer: 'input', keys: ['ctrl+j'], intent: 'input.newline' },

  // ── panes and the console ──
  { layer: 'global', keys: ['ctrl+c'], intent: 'console.quit' },
  { layer: 'global', keys: ['escape'], intent: 'agent.interrupt' },
  { layer: 'global', keys: ['ctrl+t'], intent: 'view.toggle', arg: 'tasks' },
  { layer: 'global', keys: ['ctrl+y'], intent: 'view.toggle', arg: 'approvals' },
  { layer: 'global', keys: ['ctrl+o'], intent: 'pane.toggleToolResults' },
  { layer: 'global', keys: ['tab'], intent: 'pane.next' },
  { layer: 'global', keys: ['shift+tab'], intent: 'pane.previous' },
  ...Array.from({ length: 9 }, (_, index): ConsoleBinding => ({ layer: 'global', keys: [`alt+${index + 1}`], intent: 'pane.jump', arg: index })),
  { layer: 'global', keys: ['pageup'], intent: 'pane.pageUp' },
  { layer: 'global', keys: ['pagedown'], intent: 'pane.pageDown' },

  // ── typing ── (an unbound Alt+key types the key: see keymap.ts)
  { layer: 'typing', keys: [TEXT], intent: 'input.insert' },
];

export const CONSOLE_KEYMAP: Keymap<IntentName> = compileKeymap(CONSOLE_BINDINGS);
