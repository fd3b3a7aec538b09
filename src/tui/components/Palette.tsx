// The command palette over the bottom of the pane while a command name is being typed: every
// matching command with its arguments and one-line description, the selected one highlighted
// (↑/↓ move, Tab completes, Enter runs; src/tui/keys/console-keymap.ts).
import chalk from 'chalk';
import { Text } from 'ink';
import type { SlashCommand } from '../commands/types.js';
import { padLine, truncateLine } from '../render/wrap.js';

export const MAX_PALETTE_ROWS = 8;

export function paletteRows(entries: readonly SlashCommand[], screenRows: number): number {
  if (entries.length === 0) return 0;
  return Math.min(entries.length, MAX_PALETTE_ROWS, Math.max(2, Math.floor(screenRows / 3)));
}

export function paletteLines(entries: readonly SlashCommand[], selected: number, columns: number, rows: number): string[] {
  if (rows === 0) return [];
  const first = Math.max(0, Math.min(selected - rows + 1, entries.length - rows));
  const shown = entries.slice(first, first + rows);
  const nameWidth = Math.min(30, Math.max(...entries.map((c) => usage(c).length)) + 2);
  return shown.map((command, i) => {
    const index = first + i;
    const more = (i === 0 && first > 0) || (i === shown.length - 1 && first + rows < entries.length);
    const name = padLine(usage(command), nameWidth);
    const line = truncateLine(`${index === selected ? '›' : more ? '⋮' : ' '} ${name}${command.description}`, columns);
    return index === selected ? chalk.inverse(padLine(line, columns)) : `${chalk.cyan(line.slice(0, nameWidth + 2))}${chalk.dim(line.slice(nameWidth + 2))}`;
  });
}

function usage(command: SlashCommand): string {
  return `/${command.name}${command.args ? ` ${command.args}` : ''}`;
}

export function Palette({ lines }: { lines: string[] }) {
  if (lines.length === 0) return null;
  return <Text wrap="truncate">{lines.join('\n')}</Text>;
}
