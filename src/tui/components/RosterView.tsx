// /team: the roster, live: status and why, current task, tokens, cost, context use, last activity.
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import { STATUS_COLOR, STATUS_GLYPH, contextPercent, formatAgo, formatTokens } from './glyphs.js';
import { padLine, truncateLine } from '../render/wrap.js';

export function RosterView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const agents = useStore(store, (state) => state.agents);
  const order = useStore(store, (state) => state.order);
  const tasks = useStore(store, (state) => state.tasks);
  const now = useNow(1000);
  const statusWidth = Math.max(12, width - 12 - 10 - 16 - 14 - 8 - 6 - 10);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold>
        Team <Text dimColor>({order.length} agents) · Esc closes</Text>
      </Text>
      <Text dimColor>{`${'name'.padEnd(12)}${'status'.padEnd(statusWidth + 2)}${'task'.padEnd(8)}${'tokens'.padEnd(16)}${'cache r/w'.padEnd(14)}${'cost'.padEnd(10)}${'ctx'.padEnd(6)}active`}</Text>
      {order.map((name) => {
        const agent = agents[name]!;
        const task = tasks.find((t) => t.owner === name && t.status === 'in_progress');
        // Liveness: a working agent's tool is UI-only (too frequent for the roster file).
        const tool = agent.status === 'working' && agent.activeTool ? `running ${agent.activeTool}` : undefined;
        const why = [agent.reason, tool].filter(Boolean).join(' · ');
        const status = `${agent.status}${why ? `: ${why}` : ''}`;
        return (
          <Text key={name} wrap="truncate">
            {name.padEnd(12)}
            <Text color={STATUS_COLOR[agent.status]}>{STATUS_GLYPH[agent.status]} </Text>
            {padLine(truncateLine(status, statusWidth), statusWidth)}
            {'  '}
            {(task ? `#${task.id}` : '-').padEnd(8)}
            {`${formatTokens(agent.inputTokens)}/${formatTokens(agent.outputTokens)}`.padEnd(16)}
            {`${formatTokens(agent.cacheReadTokens)}/${formatTokens(agent.cacheWriteTokens)}`.padEnd(14)}
            {`$${agent.costUsd.toFixed(3)}`.padEnd(10)}
            {`${contextPercent(agent.contextTokens, agent.model)}%`.padEnd(6)}
            {formatAgo(agent.lastActivity, now)}
          </Text>
        );
      })}
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
