// The notice above the input: what a command answered, what went wrong, a hint ("Press Ctrl+C
// again to quit"). Wrapped to the width so it can be read whole at any width, and kept until the
// person's next action (src/tui/keys/console-keys.ts decides what counts as one).
import chalk from 'chalk';
import { Text } from 'ink';
import type { ConsoleState, Flash } from '../state/console-store.js';
import { wrapLines } from '../render/wrap.js';

/** What the notice says now, if anything. */
export function currentNotice(state: Pick<ConsoleState, 'flash' | 'quitArmed' | 'agents' | 'order'>): Flash | undefined {
  if (state.quitArmed) {
    const working = state.order.filter((name) => state.agents[name]?.status === 'working');
    const also = working.length ? ` (${working.join(', ')} ${working.length === 1 ? 'is' : 'are'} working and will stop)` : '';
    return { text: `Press Ctrl+C again to quit${also}`, tone: 'warn' };
  }
  return state.flash;
}

/** The notice as rows of at most `columns`, no more than `maxRows` (the last says what was left out). */
export function noticeLines(notice: Flash | undefined, columns: number, maxRows: number): string[] {
  if (!notice) return [];
  const paint = notice.tone === 'error' ? chalk.red : notice.tone === 'warn' ? chalk.yellow : chalk.green;
  const mark = notice.tone === 'error' ? '✗ ' : notice.tone === 'warn' ? '! ' : '• ';
  const rows = wrapLines(notice.text, Math.max(10, columns - mark.length)).map((row, i) => paint(`${i === 0 ? mark : '  '}${row}`));
  if (rows.length <= maxRows) return rows;
  return [...rows.slice(0, maxRows - 1), chalk.dim(`  … ${rows.length - maxRows + 1} more rows`)];
}

export function NoticeLine({ lines }: { lines: string[] }) {
  if (lines.length === 0) return null;
  return <Text wrap="truncate">{lines.join('\n')}</Text>;
}
