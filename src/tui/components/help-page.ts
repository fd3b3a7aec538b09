// /help as text laid out for the width: every command with its arguments, then every key (made from
// the keymap, as docs/console.md#keys is), each description wrapped under its own column so nothing
// runs together at 80 columns.
import chalk from 'chalk';
import { COMMANDS } from '../commands/commands.js';
import { commandUsage } from '../commands/helpers.js';
import { CONSOLE_BINDINGS } from '../keys/console-keymap.js';
import { keySections } from '../keys/key-docs.js';
import { padLine, visibleWidth, wrapLines } from '../render/wrap.js';

const KEY_ORDER = "A view's keys come first, then the input line's, then the console's; where a row says \"else\", the first that applies wins.";

/** The help text as rows of at most `width` columns: the commands, then the keys by section (key-docs.ts). */
export function helpLines(width: number): string[] {
  const commands = COMMANDS.map((command): [string, string] => [commandUsage(command), command.description]);
  const sections = keySections(CONSOLE_BINDINGS).map(({ title, rows }) => ({ title, rows: rows.map((row): [string, string] => [row.keys, row.doc]) }));
  // One key column for every section, so the tables line up under each other.
  const allKeys = sections.flatMap((section) => section.rows);
  const keys = sections.flatMap(({ title, rows }) => ['', chalk.dim(title), ...table(rows, width, allKeys)]);
  return [chalk.bold('Commands'), ...table(commands, width), '', chalk.bold('Keys'), ...wrapLines(KEY_ORDER, width), ...keys];
}

/** Two columns: the left as wide as the widest of `sizedBy` needs, up to a third of the width; the right wrapped beside it. */
function table(rows: Array<[string, string]>, width: number, sizedBy: Array<[string, string]> = rows): string[] {
  const left = Math.min(Math.max(...sizedBy.map(([name]) => visibleWidth(name))) + 2, Math.max(14, Math.floor(width / 3)));
  const right = Math.max(20, width - left);
  const out: string[] = [];
  for (const [name, what] of rows) {
    const description = wrapLines(what, right);
    if (visibleWidth(name) > left - 2) {
      out.push(chalk.cyan(name));
      for (const line of description) out.push(' '.repeat(left) + line);
      continue;
    }
    description.forEach((line, i) => out.push((i === 0 ? chalk.cyan(padLine(name, left)) : ' '.repeat(left)) + line));
  }
  return out;
}
