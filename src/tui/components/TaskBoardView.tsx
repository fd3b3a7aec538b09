// /tasks (Ctrl+T): the board, live: id, status, subject, owner, blockers.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import { padLine, truncateLine } from '../render/wrap.js';

const STATUS_COLOR: Record<string, string> = { pending: 'yellow', in_progress: 'cyan', review: 'magenta', completed: 'green' };

/** The owner, and while in review who reviews it: `alice→rita`. */
function ownerCell(task: { owner: string | null; status: string; reviewer?: string | null }): string {
  const owner = task.owner ?? '-';
  return task.status === 'review' && task.reviewer ? `${owner}→${task.reviewer}` : owner;
}

/** Rows of the board that are not tasks: the title, the headers and the footer. */
export const BOARD_CHROME_ROWS = 3;

export function TaskBoardView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const tasks = useStore(store, (state) => state.tasks);
  const offset = useStore(store, (state) => state.viewScroll);
  const counts = tasks.reduce<Record<string, number>>((acc, task) => ({ ...acc, [task.status]: (acc[task.status] ?? 0) + 1 }), {});
  const subjectWidth = Math.max(10, width - 4 - 12 - 12 - 16 - 4);
  const shown = Math.max(1, height - BOARD_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, tasks.length - shown));
  const rows = tasks.slice(top, top + shown);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold wrap="truncate">
        Tasks <Text dimColor>({tasks.length}: {counts.pending ?? 0} pending, {counts.in_progress ?? 0} in progress, {counts.review ?? 0} review, {counts.completed ?? 0} completed) · Esc closes</Text>
      </Text>
      <Text dimColor wrap="truncate">{`${'#'.padEnd(4)}${'status'.padEnd(12)}${'subject'.padEnd(subjectWidth + 2)}${'owner'.padEnd(12)}blocked by`}</Text>
      {tasks.length === 0 ? <Text dimColor>The board is empty. The lead creates tasks with task_create.</Text> : null}
      {rows.map((task) => (
        <Text key={task.id} wrap="truncate">
          {String(task.id).padEnd(4)}
          <Text color={STATUS_COLOR[task.status]}>{task.status.padEnd(12)}</Text>
          {padLine(truncateLine(task.subject, subjectWidth), subjectWidth + 2)}
          {padLine(truncateLine(ownerCell(task), 11), 12)}
          {task.blockedBy.length ? task.blockedBy.map((id) => `#${id}`).join(' ') : '-'}
        </Text>
      ))}
      {tasks.length > top + rows.length ? <Text dimColor>↓ {tasks.length - top - rows.length} more (PgDn)</Text> : null}
    </Box>
  );
}
