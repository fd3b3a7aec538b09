// /config and /mcp: a page of text computed when the view opened (TextPage in the store).
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import { truncateLine } from '../render/wrap.js';

export function PageView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const page = useStore(store, (state) => state.page);
  const lines = page?.lines ?? [];
  const room = Math.max(0, height - 2);
  const shown = lines.length > room ? lines.slice(0, Math.max(0, room - 1)) : lines;
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold>
        {page?.title ?? ''} <Text dimColor>· Esc closes</Text>
      </Text>
      {shown.map((line, index) => (
        <Text key={index} wrap="truncate">
          {truncateLine(line, width)}
        </Text>
      ))}
      {lines.length > shown.length ? <Text dimColor>… {lines.length - shown.length} more lines (narrow it: /config KEY)</Text> : null}
    </Box>
  );
}
