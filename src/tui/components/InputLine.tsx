// The input: a prompt mark, then the text wrapped to the width with a visible cursor, growing to
// a few rows (then scrolling with the cursor). It reads the buffer from the store itself, so a key
// press re-renders this line and nothing else (the frame only when its height changes).
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import type { InputBuffer } from '../state/input-buffer.js';
import { layoutInput, visibleInputRows } from './input-layout.js';
import { activity, isBusy } from './progress.js';
import { useClock } from '../hooks/useClock.js';

/** The prompt mark before the input: "lead › ". */
export function promptMark(target: string): string {
  return `${target} › `;
}

/** Columns the text gets: the width less the prompt mark and one column for the cursor at the end. */
function textWidth(columns: number, target: string): number {
  return columns - promptMark(target).length - 1;
}

/** Rows the input takes on screen at this width, at most `max`. */
export function inputRows(buffer: InputBuffer, columns: number, target: string, max: number): number {
  if (buffer.text === '') return 1;
  return Math.min(max, layoutInput(buffer, textWidth(columns, target)).rows.length);
}

interface Props {
  store: ConsoleStore;
  target: string;
  hint: string | undefined;
  columns: number;
  maxRows: number;
  /** While the agent in view works, the hint says what it does (the header's progress, where the eyes are). */
  progress?: boolean;
}

export function InputLine({ store, target, hint, columns, maxRows, progress = false }: Props) {
  const buffer = useStore(store, (state) => state.input);
  const agent = useStore(store, (state) => state.agents[target]);
  const busy = progress && agent !== undefined && isBusy(agent);
  // Ticks only while the agent works, and re-renders this line only.
  const now = useClock(busy);
  const doing = busy ? activity(agent, now) : undefined;
  const shownHint = doing ? `${target}: ${doing} · typing ${target === 'lead' ? 'steers it' : 'messages it'}, Esc interrupts` : hint;
  const mark = promptMark(target);
  const layout = layoutInput(buffer, textWidth(columns, target));
  const { rows, first } = visibleInputRows(layout, maxRows);
  return (
    <Box flexDirection="column">
      {rows.map((row, index) => {
        const prefix = index === 0 && first === 0 ? mark : index === 0 ? `${'↑'.padStart(mark.length - 2)}  ` : ' '.repeat(mark.length);
        const at = row.cursor;
        return (
          <Text key={first + index} wrap="truncate">
            <Text color="cyan">{prefix}</Text>
            {at === undefined ? (
              row.text
            ) : (
              <>
                {row.text.slice(0, at)}
                <Text inverse>{[...row.text.slice(at)][0] ?? ' '}</Text>
                {row.text.slice(at + ([...row.text.slice(at)][0]?.length ?? 0))}
              </>
            )}
            {buffer.text === '' && shownHint ? <Text dimColor>{shownHint}</Text> : null}
          </Text>
        );
      })}
    </Box>
  );
}
