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

/** A task's verify gate: its last run in this session (✓/✗), or that it has one still to pass. */
function verifyCell(task: { verify?: string; verify_result?: unknown }): string {
  const result = task.verify_result as { ok: boolean; summary: string } | undefined;
  if (result) return `${result.ok ? '✓' : '✗'} ${result.summary}`;
  return task.verify ? `verify: ${task.verify}` : '';
}

function blockers(task: { blockedBy: number[] }): string {
  return task.blockedBy.length ? task.blockedBy.map((id) => `#${id}`).join(' ') : '-';
}

export function TaskBoardView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const tasks = useStore(store, (state) => state.tasks);
  const offset = useStore(store, (state) => state.viewScroll);
  const counts = tasks.reduce<Record<string, number>>((acc, task) => ({ ...acc, [task.status]: (acc[task.status] ?? 0) + 1 }), {});
  // A verify column only when some task has a verify gate, as wide as it needs up to a point.
  const verifyWidth = Math.min(48, Math.max(0, ...tasks.map((task) => verifyCell(task).length)));
  const subjectWidth = Math.max(10, width - 4 - 12 - 12 - 16 - 4 - verifyWidth);
  const shown = Math.max(1, height - BOARD_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, tasks.length - shown));
  const rows = tasks.slice(top, top + shown);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold wrap="truncate">
        Tasks{' '}
        <Text dimColor>
          ({tasks.length}: {counts.pending ?? 0} pending, {counts.in_progress ?? 0} in progress, {counts.review ?? 0} review, {counts.completed ?? 0} completed)
          · Esc closes
        </Text>
      </Text>
      <Text
        dimColor
        wrap="truncate"
      >{`${'#'.padEnd(4)}${'status'.padEnd(12)}${'subject'.padEnd(subjectWidth + 2)}${'owner'.padEnd(12)}${verifyWidth ? `${'blocked by'.padEnd(16)}verify` : 'blocked by'}`}</Text>
      {tasks.length === 0 ? <Text dimColor>The board is empty. The lead creates tasks with task_create.</Text> : null}
      {rows.map((task) => (
        <Text key={task.id} wrap="truncate">
          {String(task.id).padEnd(4)}
          <Text color={STATUS_COLOR[task.status]}>{task.status.padEnd(12)}</Text>
          {padLine(truncateLine(task.subject, subjectWidth), subjectWidth + 2)}
          {padLine(truncateLine(ownerCell(task), 11), 12)}
          {verifyWidth ? padLine(blockers(task), 16) : blockers(task)}
          {verifyWidth ? (
            <Text color={(task.verify_result as { ok?: boolean } | undefined)?.ok === false ? 'red' : undefined} dimColor={!task.verify_result}>
              {truncateLine(verifyCell(task), verifyWidth)}
            </Text>
          ) : null}
        </Text>
      ))}
      {tasks.length > top + rows.length ? <Text dimColor>↓ {tasks.length - top - rows.length} more (PgDn)</Text> : null}
    </Box>
  );
}
