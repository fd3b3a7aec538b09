// The console's frame, top to bottom: tabs, the view (a pane, the grid, the board, the roster, a
// page), the command palette while a command is typed, the notice, the input, the status bar.
// Every part's height is known before it is drawn, so the frame is exactly the terminal's size.
import { Box, useWindowSize } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { ConsoleController } from '../console-controller.js';
import type { ConsoleState, ConsoleStore } from '../state/console-store.js';
import type { InputHistory } from '../state/input-history.js';
import { openPalette, paletteSelection } from '../commands/palette.js';
import { useConsoleKeys, type ScreenSizes } from '../hooks/useConsoleKeys.js';
import { useCleanRedrawOnResize, useMouseReporting } from '../hooks/useTerminal.js';
import { AgentPane, PANE_CHROME_ROWS } from './AgentPane.js';
import { ApprovalsView } from './ApprovalsView.js';
import { GridView } from './GridView.js';
import { InputLine, inputRows } from './InputLine.js';
import { NoticeLine, currentNotice, noticeLines } from './NoticeLine.js';
import { PAGE_CHROME_ROWS, PAGE_VIEWS, PageView, pageContent } from './PageView.js';
import { Palette, paletteLines, paletteRows } from './Palette.js';
import { ROSTER_CHROME_ROWS, RosterView } from './RosterView.js';
import { StatusBar } from './StatusBar.js';
import { TabBar } from './TabBar.js';
import { BOARD_CHROME_ROWS, TaskBoardView } from './TaskBoardView.js';
import { BacklogView } from './BacklogView.js';
import { BEST_OF_CHROME_ROWS, BestOfView, bestOfContent } from './BestOfView.js';
import { TerminalPane } from './TerminalPane.js';
import { WorkflowsView } from './WorkflowsView.js';

interface Props {
  store: ConsoleStore;
  /** The session's side, once it is open: until then the frame is drawn and keys wait (useConsoleKeys). */
  ready: { controller: ConsoleController; history: InputHistory } | undefined;
  quit: () => void;
}

/** How many rows the view over the pane has, and shows, in `height` rows (for scrolling it). */
function viewSize(state: ConsoleState, columns: number, height: number): ScreenSizes['view'] {
  if (PAGE_VIEWS.includes(state.view)) return { shown: height - PAGE_CHROME_ROWS, total: pageContent(state, columns).lines.length };
  switch (state.view) {
    case 'tasks':
      return { shown: height - BOARD_CHROME_ROWS, total: state.tasks.length };
    case 'team':
      return { shown: height - ROSTER_CHROME_ROWS, total: state.order.length };
    case 'bestof':
      return { shown: height - BEST_OF_CHROME_ROWS, total: bestOfContent(state.bestOf, columns).lines.length };
    default:
      return { shown: height, total: 0 };
  }
}

export function App({ store, ready, quit }: Props) {
  const { columns, rows } = useWindowSize();
  useCleanRedrawOnResize(
    columns,
    rows,
    useStore(store, (state) => state.redraws),
  );
  useMouseReporting(useStore(store, (state) => state.mouse));
  const view = useStore(store, (state) => state.view);
  const focus = useStore(store, (state) => state.focus);
  // Only heights and short derived rows here: typing re-renders the input line, not the frame.
  const maxInputRows = Math.max(2, Math.floor(rows / 4));
  const inputHeight = useStore(store, (state) => inputRows(state.input, columns, state.focus, maxInputRows));
  const notice = useStore(
    store,
    useShallow((state) => noticeLines(currentNotice(state), columns, Math.max(3, Math.floor(rows / 4)))),
  );
  const palette = useStore(
    store,
    useShallow((state) => {
      const entries = openPalette(state);
      return paletteLines(entries, paletteSelection(state, entries), columns, paletteRows(entries, rows));
    }),
  );
  // Never taller than the terminal: a frame that overflows makes Ink clear the whole screen.
  const mainHeight = Math.max(3, rows - 1 - palette.length - notice.length - inputHeight - 1);
  useConsoleKeys({
    store,
    ready,
    quit,
    sizes: () => ({ pane: { width: columns, rows: Math.max(1, mainHeight - PANE_CHROME_ROWS) }, view: viewSize(store.getState(), columns, mainHeight) }),
  });

  // A program in a terminal (a command teammate, a shell) shows its screen instead of a transcript.
  const terminal = ready?.controller.terminal(focus);
  const denying = useStore(store, (state) => state.denying !== undefined);
  const hint = terminal
    ? `keys go to ${focus}'s program (Shift+Tab or Ctrl+] leaves)`
    : denying
      ? 'why not? (Enter sends it; Esc goes back)'
      : focus === 'lead'
        ? 'ask the lead… (/ for commands)'
        : `message ${focus}…`;
  return (
    <Box flexDirection="column" height={rows}>
      <TabBar store={store} columns={columns} />
      <Box height={mainHeight} overflow="hidden">
        {view === 'tasks' ? (
          <TaskBoardView store={store} width={columns} height={mainHeight} />
        ) : view === 'backlog' ? (
          <BacklogView store={store} width={columns} height={mainHeight} />
        ) : view === 'team' ? (
          <RosterView store={store} width={columns} height={mainHeight} />
        ) : PAGE_VIEWS.includes(view) ? (
          <PageView store={store} width={columns} height={mainHeight} />
        ) : view === 'approvals' ? (
          <ApprovalsView store={store} width={columns} height={mainHeight} />
        ) : view === 'bestof' ? (
          <BestOfView store={store} width={columns} height={mainHeight} />
        ) : view === 'grid' ? (
          <GridView store={store} width={columns} height={mainHeight} />
        ) : view === 'workflows' ? (
          <WorkflowsView store={store} width={columns} height={mainHeight} />
        ) : terminal ? (
          <TerminalPane store={store} view={terminal} width={columns} height={mainHeight} />
        ) : (
          <AgentPane store={store} width={columns} height={mainHeight} />
        )}
      </Box>
      <Palette lines={palette} />
      <NoticeLine lines={notice} />
      <InputLine store={store} target={focus} hint={hint} columns={columns} maxRows={maxInputRows} progress={!terminal && !denying} />
      <StatusBar store={store} columns={columns} />
    </Box>
  );
}
