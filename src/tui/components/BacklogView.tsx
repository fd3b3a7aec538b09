// /backlog: each issue of the backlog this console works through, live (docs/console.md#the-backlog-view):
// phase, approver, checks, cost, pull request and branch; ↑/↓ select, Enter opens its teammate's pane.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { IssuePhase } from '../../runtime/backlog/issue-phase.js';
import type { ConsoleStore } from '../state/console-store.js';
import { backlogCell, backlogLayout, secondLine } from '../render/backlog-columns.js';
import { padLine, truncateLine } from '../render/wrap.js';

/** Rows of the view that are not issues: the title, the headers. */
export const BACKLOG_CHROME_ROWS = 2;

const PHASE_COLOR: Partial<Record<IssuePhase, string>> = {
  'awaiting approval': 'yellow',
  building: 'cyan',
  'in review': 'magenta',
  checks: 'blue',
  done: 'green',
  failed: 'red',
};

export function BacklogView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const backlog = useStore(store, (state) => state.backlog);
  const selected = useStore(store, (state) => Math.min(state.backlogIndex, Math.max(0, state.backlog.rows.length - 1)));
  const { rows } = backlog;
  const layout = backlogLayout(rows, width);
  const perIssue = layout.second.length ? 2 : 1;
  // The note wraps (it names the command that starts a backlog): its rows come out of the issues' room.
  const noteRows = backlog.note ? Math.ceil(backlog.note.length / Math.max(1, width)) : 0;
  const shown = Math.max(1, Math.floor((height - BACKLOG_CHROME_ROWS - noteRows) / perIssue));
  // The selected issue stays in view.
  const top = Math.max(0, Math.min(selected - shown + 1, rows.length - shown, selected));
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.phase, (counts.get(row.phase) ?? 0) + 1);
  const summary = [...counts].map(([phase, n]) => `${n} ${phase}`).join(', ');
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold wrap="truncate">
        Backlog{' '}
        <Text dimColor>
          ({backlog.source ?? 'not started'}: {rows.length} issue{rows.length === 1 ? '' : 's'}
          {summary ? `: ${summary}` : ''}) · ↑↓ Enter opens · Esc closes
        </Text>
      </Text>
      {backlog.note ? (
        <Text dimColor wrap="wrap">
          {backlog.note}
        </Text>
      ) : null}
      {rows.length ? (
        <Text dimColor wrap="truncate">
          {layout.line.map((cell) => padLine(cell.header, cell.width)).join('')}
        </Text>
      ) : null}
      {rows.slice(top, top + shown).map((row, i) => {
        const mark = top + i === selected;
        return (
          <Box key={row.number} flexDirection="column">
            <Text wrap="truncate" inverse={mark}>
              {layout.line.map((cell) => (
                <Text key={cell.column} color={cell.column === 'phase' ? PHASE_COLOR[row.phase] : undefined}>
                  {padLine(truncateLine(backlogCell(row, cell.column), cell.width - 1), cell.width)}
                </Text>
              ))}
            </Text>
            {perIssue === 2 ? (
              <Text dimColor wrap="truncate">
                {'   '}
                {truncateLine(secondLine(row, layout.second), Math.max(1, width - 3))}
              </Text>
            ) : null}
          </Box>
        );
      })}
      {rows.length > top + shown ? <Text dimColor>↓ {rows.length - top - shown} more</Text> : null}
    </Box>
  );
}
