// Reading the console's screen in PTY tests: its rows, the pane's footer while scrolled, the parts
// that must appear exactly once. Pure functions over the screen text PtyDriver.screen() returns.

export function rowsOf(screen: string): string[] {
  return screen.split('\n');
}

/** The index of the first row containing `needle` (a string or a pattern), or -1. */
export function rowOf(screen: string, needle: string | RegExp): number {
  return rowsOf(screen).findIndex((row) => (typeof needle === 'string' ? row.includes(needle) : needle.test(row)));
}

export function countRows(screen: string, needle: string | RegExp): number {
  return rowsOf(screen).filter((row) => (typeof needle === 'string' ? row.includes(needle) : needle.test(row))).length;
}

/** The scrolled pane's footer: rows above and below the view, or undefined when the pane follows its end. */
export function scrollFooter(screen: string): { above: number; below: number; row: number } | undefined {
  const rows = rowsOf(screen);
  for (let row = 0; row < rows.length; row++) {
    const match = /↑ (\d+) rows above · ↓ (\d+) below/.exec(rows[row]!);
    if (match) return { above: Number(match[1]), below: Number(match[2]), row };
  }
  return undefined;
}

/** The status bar is the last row and appears once. */
export const STATUS_BAR = /tasks \d+ pending \d+ active \d+ done/;

/** Whether the pane in view is `name`'s: its header (the second row) names it. */
export const paneOf = (name: string) => (screen: string) => new RegExp(`^\\S ${name} \\(`).test(rowsOf(screen)[1] ?? '');
