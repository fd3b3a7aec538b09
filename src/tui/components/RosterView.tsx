// /team: the roster, live: status and why, current task, tokens, cost, context use, last activity,
// and (a team across hosts) where each agent runs.
// Every cell is padded by its visible width (the status glyph included), so data sits under its header.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import type { AgentView, ConsoleStore } from '../state/console-store.js';
import type { Task } from '../../runtime/store/board.js';
import { contextPercent, formatAgo, statusMark } from './glyphs.js';
import { formatTokens } from '../render/tokens.js';
import { padLine } from '../render/wrap.js';
import { hostNames } from '../render/host-names.js';

/** Rows of /team that are not agents: the title and the column headers (and a footer when it scrolls). */
export const ROSTER_CHROME_ROWS = 3;

/** The task an agent is on: one it owns in progress (or in review), else the one its status names. */
export function currentTask(agent: AgentView, tasks: readonly Task[]): string {
  const owned = tasks.filter((t) => t.owner === agent.name && t.status !== 'completed');
  const task = owned.find((t) => t.status === 'in_progress') ?? owned.find((t) => t.status === 'review') ?? owned[0];
  if (task) return `#${task.id}${task.status === 'review' ? ' rev' : task.status === 'pending' ? ' next' : ''}`;
  const named = /(?:task )?#(\d+)/i.exec(agent.reason ?? '');
  return named ? `#${named[1]}` : '-';
}

export function RosterView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const agents = useStore(store, (state) => state.agents);
  const order = useStore(store, (state) => state.order);
  const tasks = useStore(store, (state) => state.tasks);
  const offset = useStore(store, (state) => state.viewScroll);
  const now = useNow(1000);
  const nameWidth = Math.max(8, ...order.map((name) => name.length + 2));
  // A team across hosts (PostgreSQL) says where each agent runs; a team in one process has no column for it.
  const hosts = order.some((name) => agents[name]?.host !== undefined);
  const where = hostNames(order.map((name) => agents[name]?.host));
  const hostWidth = hosts ? Math.min(26, Math.max(6, ...[...where.values()].map((label) => label.length + 1))) : 0;
  // Narrow, why an agent waits (the status) and the host matter more than the cache's counts (which
  // /cost also shows) and the last activity: those columns go first, so the status keeps its words.
  const cache = width >= 110 + hostWidth;
  const active = width >= 100 + hostWidth;
  const fixed = [8, 14, ...(cache ? [12] : []), 9, 6, ...(active ? [9] : []), ...(hosts ? [hostWidth] : [])]; // task, tokens, [cache reads/writes,] cost, ctx, [active,] [host]
  const statusWidth = Math.max(14, width - nameWidth - fixed.reduce((a, b) => a + b, 0));
  // A cell is cut one column short of its width: there is always a gap before the next column.
  const row = (cells: string[], widths: number[]) => cells.map((cell, i) => (i < cells.length - 1 ? `${padLine(cell, widths[i]! - 1)} ` : cell)).join('');
  const widths = [nameWidth, statusWidth, ...fixed];
  const shown = Math.max(1, height - ROSTER_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, order.length - shown));
  const rows = order.slice(top, top + shown).map((name) => {
    const agent = agents[name]!;
    // Liveness: a working agent's tool is UI-only (too frequent for the roster file).
    const tool = agent.status === 'working' && agent.activeTool ? `running ${agent.activeTool}` : undefined;
    const why = [agent.reason, tool].filter(Boolean).join(' · ');
    const status = `${statusMark(agent.status)} ${agent.status}${why ? `: ${why}` : ''}`;
    return row(
      [
        name,
        status,
        currentTask(agent, tasks),
        `${formatTokens(agent.inputTokens)}/${formatTokens(agent.outputTokens)}`,
        ...(cache ? [`${formatTokens(agent.cacheReadTokens)}/${formatTokens(agent.cacheWriteTokens)}`] : []),
        `$${agent.costUsd.toFixed(3)}`,
        `${contextPercent(agent.contextTokens, agent.model)}%`,
        ...(active ? [formatAgo(agent.lastActivity, now)] : []),
        ...(hosts ? [agent.host ? (where.get(agent.host) ?? agent.host) : 'here'] : []),
      ],
      widths,
    );
  });
  const more = order.length - top - rows.length;
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text wrap="truncate">
        {chalk.bold('Team')}
        {chalk.dim(` (${order.length} agents) · Esc closes`)}
      </Text>
      <Text wrap="truncate">
        {chalk.dim(
          row(
            ['name', '  status', 'task', 'in/out', ...(cache ? ['cache r/w'] : []), 'cost', 'ctx', ...(active ? ['active'] : []), ...(hosts ? ['host'] : [])],
            widths,
          ),
        )}
      </Text>
      <Text wrap="truncate">{rows.join('\n')}</Text>
      {more > 0 ? <Text dimColor>↓ {more} more (PgDn)</Text> : null}
    </Box>
  );
}

/** The time, refreshed at a low rate only while a view that shows ages is open. */
function useNow(intervalMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
