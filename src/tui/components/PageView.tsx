// A view of text that is longer than the screen: /help, /config, /mcp, /summary and command output
// that is a page (/cost, /budget, /worktree). A title row, the rows that fit from where it is
// scrolled to, and a footer saying what is below. Lines are wrapped to the width, never cut.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleState, ConsoleStore, ViewName } from '../state/console-store.js';
import { truncateLine, visibleWidth, wrapLines } from '../render/wrap.js';
import { helpLines } from './help-page.js';

/** Rows of a page view that are not its text: the title and the footer. */
export const PAGE_CHROME_ROWS = 2;

/** Views shown as a page. */
export const PAGE_VIEWS: readonly ViewName[] = ['help', 'page', 'config', 'mcp', 'summary'];

/** The title and rows of the page in view at this width. */
export function pageContent(state: Pick<ConsoleState, 'view' | 'page' | 'summary'>, width: number): { title: string; lines: string[] } {
  if (state.view === 'help') return { title: 'Help', lines: helpLines(width) };
  if (state.view === 'summary') return { title: 'Summary of the run', lines: state.summary.flatMap((line) => wrapLines(line, width)) };
  const page = state.page;
  return { title: page?.title ?? '', lines: page ? page.lines.flatMap((line) => wrapLines(line, width)) : [] };
}

/** The title, cut to leave room for the hint (itself cut last, on a very narrow screen). */
function titleLine(title: string, hint: string, width: number): string {
  const room = Math.max(10, width - visibleWidth(hint) - 3);
  return truncateLine(`${chalk.bold(truncateLine(title, room))}${chalk.dim(` · ${hint}`)}`, width);
}

export function PageView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const view = useStore(store, (state) => state.view);
  const page = useStore(store, (state) => state.page);
  const summary = useStore(store, (state) => state.summary);
  const offset = useStore(store, (state) => state.viewScroll);
  const { title, lines } = pageContent({ view, page, summary }, width);
  const shown = Math.max(1, height - PAGE_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, lines.length - shown));
  const below = Math.max(0, lines.length - top - shown);
  const where = lines.length > shown ? ` · rows ${top + 1}–${Math.min(lines.length, top + shown)} of ${lines.length} · PgUp/PgDn, ↑/↓, Home/End` : '';
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text wrap="truncate">{titleLine(title, `Esc closes${where}`, width)}</Text>
      <Box height={shown} overflow="hidden">
        <Text wrap="truncate">{lines.slice(top, top + shown).join('\n')}</Text>
      </Box>
      <Text wrap="truncate">{below > 0 ? chalk.cyan(`↓ ${below} more rows (PgDn)`) : top > 0 ? chalk.dim('end') : ''}</Text>
    </Box>
  );
}
