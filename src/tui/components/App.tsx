// The console's frame: tabs, the view (a pane, the board, the roster or help), input, status.
import { Box, useWindowSize } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleController } from '../console-controller.js';
import type { ConsoleStore } from '../state/console-store.js';
import type { InputHistory } from '../state/input-history.js';
import { useConsoleKeys } from '../hooks/useConsoleKeys.js';
import { AgentPane } from './AgentPane.js';
import { ApprovalsView } from './ApprovalsView.js';
import { HelpView } from './HelpView.js';
import { InputLine, inputRows } from './InputLine.js';
import { PageView } from './PageView.js';
import { RosterView } from './RosterView.js';
import { StatusBar } from './StatusBar.js';
import { SummaryView } from './SummaryView.js';
import { TabBar } from './TabBar.js';
import { TaskBoardView } from './TaskBoardView.js';
import { TerminalPane } from '../terminal/TerminalPane.js';

interface Props {
  store: ConsoleStore;
  controller: ConsoleController;
  history: InputHistory;
  quit: () => void;
}

export function App({ store, controller, history, quit }: Props) {
  const { columns, rows } = useWindowSize();
  const view = useStore(store, (state) => state.view);
  const focus = useStore(store, (state) => state.focus);
  // Only the input's height, not its text: typing re-renders the input line, not the frame.
  const inputHeight = useStore(store, (state) => inputRows(state.input));
  // Never taller than the terminal: a frame that overflows makes Ink clear the whole screen.
  const mainHeight = Math.max(3, rows - 1 - inputHeight - 1);
  useConsoleKeys({ store, controller, history, pageRows: Math.max(1, mainHeight - 2), quit });

  // A program in a terminal (a command teammate, a shell) shows its screen instead of a transcript.
  const terminal = controller.terminal(focus);
  const hint = terminal ? `keys go to ${focus}'s program (Shift+Tab or Ctrl+] leaves)` : focus === 'lead' ? 'ask the lead…' : `message ${focus}…`;
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <TabBar store={store} />
      <Box height={mainHeight} overflow="hidden">
        {view === 'tasks' ? (
          <TaskBoardView store={store} width={columns} height={mainHeight} />
        ) : view === 'team' ? (
          <RosterView store={store} width={columns} height={mainHeight} />
        ) : view === 'help' ? (
          <HelpView height={mainHeight} />
        ) : view === 'summary' ? (
          <SummaryView store={store} height={mainHeight} />
        ) : view === 'approvals' ? (
          <ApprovalsView store={store} width={columns} height={mainHeight} />
        ) : view === 'config' || view === 'mcp' ? (
          <PageView store={store} width={columns} height={mainHeight} />
        ) : terminal ? (
          <TerminalPane store={store} view={terminal} width={columns} height={mainHeight} />
        ) : (
          <AgentPane store={store} width={columns} height={mainHeight} />
        )}
      </Box>
      <InputLine store={store} target={focus} hint={hint} />
      <StatusBar store={store} />
    </Box>
  );
}
