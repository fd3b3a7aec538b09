// The input: a prompt mark, the text with a visible cursor, growing to a few lines. It reads the
// buffer from the store itself, so a key press re-renders this line and nothing else.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import type { InputBuffer } from '../state/input-buffer.js';

export const MAX_INPUT_ROWS = 5;

export function inputRows(buffer: InputBuffer): number {
  return Math.min(MAX_INPUT_ROWS, buffer.text.split('\n').length);
}

export function InputLine({ store, target, hint }: { store: ConsoleStore; target: string; hint: string | undefined }) {
  const buffer = useStore(store, (state) => state.input);
  const before = buffer.text.slice(0, buffer.cursor);
  const at = buffer.text.slice(buffer.cursor, buffer.cursor + 1);
  const after = buffer.text.slice(buffer.cursor + 1);
  const cursorChar = at === '' || at === '\n' ? ' ' : at;
  const lines = `${before}\u0000${at === '\n' ? '\n' : ''}${after}`.split('\n');
  const shown = lines.slice(-MAX_INPUT_ROWS);
  return (
    <Box flexDirection="column">
      {shown.map((line, index) => {
        const marker = line.indexOf('\u0000');
        const prefix = index === 0 && lines.length === shown.length ? `${target} › ` : ' '.repeat(target.length + 3);
        return (
          <Text key={index} wrap="truncate-start">
            <Text color="cyan">{prefix}</Text>
            {marker < 0 ? (
              line
            ) : (
              <>
                {line.slice(0, marker)}
                <Text inverse>{cursorChar}</Text>
                {line.slice(marker + 1)}
              </>
            )}
            {index === shown.length - 1 && hint && buffer.text === '' ? <Text dimColor>{hint}</Text> : null}
          </Text>
        );
      })}
    </Box>
  );
}
