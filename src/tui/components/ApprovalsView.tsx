// /approvals (Ctrl+Y): the "needs you" queue. Each waiting tool call with its agent, what it
// wants to run or write and why it needs you; ↑/↓ select, y approves, n denies, a approves and
// allow-lists (the keymap's view layer, src/tui/keys/console-keymap.ts, routes those keys here).
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import { truncateLine } from '../render/wrap.js';

export function ApprovalsView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const approvals = useStore(store, (state) => state.approvals);
  const selected = useStore(store, (state) => state.approvalIndex);
  // Two rows per request; keep the selected one in sight.
  const fits = Math.max(1, Math.floor((height - 2) / 2));
  const first = Math.max(0, Math.min(selected - fits + 1, approvals.length - fits));
  const shown = approvals.slice(first, first + fits);
  const textWidth = Math.max(10, width - 14);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold wrap="truncate">
        Needs you <Text dimColor>({approvals.length} waiting) · ↑/↓ select · y approve · n deny · a approve always · Esc closes</Text>
      </Text>
      {approvals.length === 0 ? <Text dimColor>Nothing is waiting for you.</Text> : null}
      {shown.map((request, i) => {
        const isSelected = first + i === selected;
        // A budget stop (runtime/budget.ts): y extends the budget, n stops the agent.
        // A stall or failure notice (agents/lifecycle/watchdog.ts): y restarts the agent, n dismisses.
        const notice = request.tool === 'stalled' || request.tool === 'failed';
        const always = notice
          ? 'a also restarts'
          : request.tool === 'plan'
            ? 'a also approves'
            : request.tool === 'budget'
              ? 'a also extends'
              : request.prefixes.length
                ? `a adds ${request.prefixes.map((p) => `'${p}'`).join(', ')} to the allow-list`
                : 'cannot be allow-listed';
        return (
          <Box key={request.id} flexDirection="column">
            <Text wrap="truncate" inverse={isSelected}>
              {`${isSelected ? '›' : ' '} ${request.agent.padEnd(10)} `}
              <Text color="cyan">{request.tool}</Text>
              {` ${truncateLine(request.summary, Math.max(4, textWidth - request.tool.length - 1))}`}
            </Text>
            <Text wrap="truncate" dimColor>
              {`${' '.repeat(13)}${truncateLine(`${request.reason} · ${always}`, textWidth)}`}
            </Text>
          </Box>
        );
      })}
    </Box>
  );
}
