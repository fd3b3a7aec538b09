// /help as text laid out for the width: every command with its arguments, then every key, each
// description wrapped under its own column so nothing runs together at 80 columns.
import chalk from 'chalk';
import { COMMANDS } from '../commands/commands.js';
import { padLine, visibleWidth, wrapLines } from '../render/wrap.js';

export const KEYS: Array<[string, string]> = [
  ['Enter', 'send the input to the agent in view (the lead gets a prompt, a teammate a message)'],
  ['/', 'the command palette: commands filtered as you type; ↑/↓ pick, Tab completes, Enter runs'],
  ['Tab / Shift+Tab', 'next / previous pane (on a /command: complete it; again: the next choice)'],
  ['Alt+1 … Alt+9', 'jump to a pane'],
  ['Ctrl+G', 'the grid: every agent at once; arrows pick a tile, Enter opens its pane'],
  ['Ctrl+T', 'the task board'],
  ['1 / 2 / 3', 'answer the question at the bottom of the pane: yes / yes and allow it from now on / no (then type why and Enter)'],
  ['Ctrl+Y', 'the "needs you" queue (every question of every agent): ↑/↓ select, y approve, n deny, a approve always'],
  ['Esc', 'clear the input; else close the view; else interrupt the agent in view'],
  ['Ctrl+C', 'interrupt the agent in view; else clear the input; twice on an idle console: quit'],
  ['PgUp / PgDn', 'scroll the pane (or the view); the mouse wheel too'],
  ['Home / End', 'with an empty input: the top of the pane / back to its end (g and G while scrolled)'],
  ['Ctrl+F', 'search the pane: Enter or ↑ the match before, ↓ the one after, Esc ends it'],
  ['Ctrl+O', 'show or hide tool results in the pane (edits as a diff)'],
  ['↑ / ↓', 'input history (in a multi-line input: move between its lines first)'],
  ['\\ then Enter', 'a new line in the input (also Ctrl+J; pasting keeps newlines)'],
  ['Alt+M', 'mouse capture on or off: on, the wheel scrolls and Shift+drag selects text; off, drag selects as usual'],
];

/** The help text as rows of at most `width` columns. */
export function helpLines(width: number): string[] {
  const commands = COMMANDS.map((command): [string, string] => [`/${command.name}${command.args ? ` ${command.args}` : ''}`, command.description]);
  return [
    chalk.bold('Commands'),
    ...table(commands, width),
    '',
    chalk.bold('Keys'),
    ...table(KEYS, width),
  ];
}

/** Two columns: the left as wide as needed up to a third of the width, the right wrapped beside it. */
function table(rows: Array<[string, string]>, width: number): string[] {
  const left = Math.min(Math.max(...rows.map(([name]) => visibleWidth(name))) + 2, Math.max(14, Math.floor(width / 3)));
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
