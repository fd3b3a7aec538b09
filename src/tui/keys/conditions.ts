// Named conditions a binding can require ("when"), read off the console's state at the moment the
// key is resolved. Named rather than written as functions so a keymap stays plain data that can
// be listed, tested and (one day) loaded from settings; "!name" negates.
import type { ConsoleState } from '../state/console-store.js';
import { openPalette } from '../commands/palette.js';

export interface KeyContext {
  state: ConsoleState;
  /** Views that take keys before the input line, topmost first ([] when a pane is in view). */
  views: readonly string[];
}

export const CONDITIONS = {
  /** Nothing typed in the input line. */
  inputEmpty: ({ state }: KeyContext) => state.input.text === '',
  /** The input holds a one-line slash command (Tab completes it). */
  slashLine: ({ state }: KeyContext) => state.input.text.startsWith('/') && !state.input.text.includes('\n'),
  /** The agent whose pane is in view is in a turn. */
  agentBusy: ({ state }: KeyContext) => state.agents[state.focus]?.status === 'working',
  /** Ctrl+C was pressed once and the second press would quit. */
  quitArmed: ({ state }: KeyContext) => state.quitArmed,
  /** Something is in the "needs you" queue. */
  approvalsWaiting: ({ state }: KeyContext) => state.approvals.length > 0,
  /** The command palette lists commands for what is typed. */
  paletteOpen: ({ state }: KeyContext) => openPalette(state).length > 0,
  /** The agent in view asks the person something (answered with 1, 2, 3 in its pane). */
  askInView: ({ state }: KeyContext) =>
    state.view === 'pane' && state.denying === undefined && state.approvals.some((request) => request.agent === state.focus),
  /** The person is typing why they say no to a request. */
  denying: ({ state }: KeyContext) => state.denying !== undefined,
  /** The pane in view is scrolled up (not following its end). */
  paneScrolled: ({ state }: KeyContext) => state.view === 'pane' && state.scroll[state.focus] !== undefined,
  /** /best-of's compare view asks whether to pick or discard (y or n answers). */
  bestOfConfirming: ({ state }: KeyContext) => state.bestOf?.confirming !== undefined,
  /** /best-of's compare view shows one candidate's whole diff. */
  bestOfDetail: ({ state }: KeyContext) => state.bestOf?.detail === true,
  /** The cursor is on the input's first line (↑ goes to the history) or its last (↓ does). */
  cursorOnFirstLine: ({ state }: KeyContext) => !state.input.text.slice(0, state.input.cursor).includes('\n'),
  cursorOnLastLine: ({ state }: KeyContext) => !state.input.text.slice(state.input.cursor).includes('\n'),
} satisfies Record<string, (context: KeyContext) => boolean>;

export type ConditionName = keyof typeof CONDITIONS;
export type Condition = ConditionName | `!${ConditionName}`;

export function holds(condition: Condition, context: KeyContext): boolean {
  const negated = condition.startsWith('!');
  const name = (negated ? condition.slice(1) : condition) as ConditionName;
  return CONDITIONS[name](context) !== negated;
}

/** The views that sit above the input line for this state, topmost first (a search is one, over its pane). */
export function activeViews(state: ConsoleState): string[] {
  if (state.view !== 'pane') return [state.view];
  return state.search ? ['search'] : [];
}
