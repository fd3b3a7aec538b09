// The bottom line: model, tokens, cost, task counts, and key hints (or a passing message).
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { ConsoleStore } from '../state/console-store.js';
import { formatTokens } from './glyphs.js';

export function StatusBar({ store }: { store: ConsoleStore }) {
  const [model, endpoint, flash, quitArmed] = useStore(store, useShallow((s) => [s.model, s.endpoint, s.flash, s.quitArmed] as const));
  const waiting = useStore(store, (s) => s.approvals.length);
  const totals = useStore(
    store,
    useShallow((s) => {
      let input = 0;
      let output = 0;
      let cost = 0;
      for (const name of s.order) {
        const agent = s.agents[name]!;
        input += agent.inputTokens;
        output += agent.outputTokens;
        cost += agent.costUsd;
      }
      const count = (status: string) => s.tasks.filter((t) => t.status === status).length;
      return [input, output, cost, count('pending'), count('in_progress'), count('completed')] as const;
    }),
  );
  const [input, output, cost, pending, active, done] = totals;
  const message = quitArmed ? { text: 'Press Ctrl+C again to quit', tone: 'warn' as const } : flash;
  const color = message?.tone === 'error' ? 'red' : message?.tone === 'warn' ? 'yellow' : 'green';
  return (
    <Box height={1} overflow="hidden">
      <Text wrap="truncate">
        {waiting > 0 ? <Text backgroundColor="yellow" color="black" bold>{` needs you: ${waiting} `}</Text> : null}
        {waiting > 0 ? ' ' : ''}
        <Text color="cyan">{model}</Text>
        <Text dimColor>{endpoint ? ` @ ${endpoint}` : ''}</Text>
        {` · ${formatTokens(input)} in ${formatTokens(output)} out · $${cost.toFixed(3)} · tasks ${pending} pending ${active} active ${done} done · `}
        {message ? <Text color={color}>{message.text}</Text> : <Text dimColor>{waiting > 0 ? 'Ctrl+Y answer · ' : ''}Tab panes · Ctrl+T tasks · Esc interrupt · /help</Text>}
      </Text>
    </Box>
  );
}
