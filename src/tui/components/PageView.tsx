// A view of text that is longer than the screen: /help, and command output that is a page. A title
// row, the rows that fit from where it is scrolled to, and a footer saying what is above and below.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleState, ConsoleStore } from '../state/console-store.js';
import { wrapLines } from '../render/wrap.js';
import { helpLines } from './help-page.js';

/** Rows of a page view that are not its text: the title and the footer. */
export const PAGE_CHROME_ROWS = 2;

/** The title and rows of the page in view (help or a command's page) at this width. */
export function pageContent(state: Pick<ConsoleState, 'view' | 'page'>, width: number): { title: string; lines: string[] } {
  if (state.view === 'help') return { title: 'Help', lines: helpLines(width) };
  const page = state.page;
  return { title: page?.title ?? '', lines: page ? wrapLines(page.text, width) : [] };
}

export function PageView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const view = useStore(store, (state) => state.view);
  const page = useStore(store, (state) => state.page);
  const offset = useStore(store, (state) => state.viewScroll);
  const { title, lines } = pageContent({ view, page }, width);
  const shown = Math.max(1, height - PAGE_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, lines.length - shown));
  const below = Math.max(0, lines.length - top - shown);
  const where = lines.length > shown ? ` · rows ${top + 1}–${Math.min(lines.length, top + shown)} of ${lines.length} · PgUp/PgDn, ↑/↓, Home/End` : '';
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text wrap="truncate">
        {chalk.bold(title)}
        {chalk.dim(` · Esc closes${where}`)}
      </Text>
      <Box height={shown} overflow="hidden">
        <Text wrap="truncate">{lines.slice(top, top + shown).join('\n')}</Text>
      </Box>
      <Text wrap="truncate">{below > 0 ? chalk.cyan(`↓ ${below} more rows (PgDn)`) : top > 0 ? chalk.dim('end') : ''}</Text>
    </Box>
  );
}
