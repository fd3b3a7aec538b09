// /summary: the run record's lines (runtime/record), as the controller last made them.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';

export function SummaryView({ store, height }: { store: ConsoleStore; height: number }) {
  const lines = useStore(store, (state) => state.summary);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold>
        Run record <Text dimColor>· Esc closes</Text>
      </Text>
      {lines.map((line, index) => (
        <Text key={index} wrap="wrap">
          {line}
        </Text>
      ))}
    </Box>
  );
}
