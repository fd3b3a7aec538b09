// The command palette: typing '/' lists the commands with their one-line descriptions, filtered as
// you type (names that start with what is typed first, then names that contain it). It is open while the input is a bare "/name" being typed, unless Esc shut it for that line.
import { COMMANDS } from './commands.js';
import type { SlashCommand } from './types.js';
import type { ConsoleState } from '../state/console-store.js';

const NAME_BEING_TYPED = /^\/(\S*)$/;

export function paletteEntries(text: string): SlashCommand[] {
  const typed = NAME_BEING_TYPED.exec(text)?.[1];
  if (typed === undefined) return [];
  const query = typed.toLowerCase();
  const starts = COMMANDS.filter((command) => command.name.startsWith(query));
  const contains = COMMANDS.filter((command) => !command.name.startsWith(query) && command.name.includes(query));
  return [...starts, ...contains];
}

/** The palette's rows for this state, or none when it is shut. */
export function openPalette(state: ConsoleState): SlashCommand[] {
  const { text } = state.input;
  if (text === state.palette.closedFor || !NAME_BEING_TYPED.test(text)) return [];
  return paletteEntries(text);
}

/** The selected row, kept within the list. */
export function paletteSelection(state: ConsoleState, entries: readonly SlashCommand[]): number {
  return entries.length ? Math.min(state.palette.index, entries.length - 1) : 0;
}
