// One tab per agent: number (Alt+N), status glyph, name, unread mark.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { ConsoleStore } from '../state/console-store.js';
import { STATUS_COLOR, STATUS_GLYPH } from './glyphs.js';

export function TabBar({ store }: { store: ConsoleStore }) {
  const tabs = useStore(
    store,
    useShallow((state) =>
      state.order.map((name) => {
        const agent = state.agents[name]!;
        return `${name}|${agent.status}|${agent.unread ? 1 : 0}|${state.focus === name && state.view === 'pane' ? 1 : 0}`;
      }),
    ),
  );
  const demo = useStore(store, (state) => state.demo);
  return (
    <Box height={1} overflow="hidden">
      {demo ? <Text backgroundColor="magenta" color="white"> DEMO · scripted model </Text> : null}
      {tabs.map((tab, index) => {
        const [name, status, unread, focused] = tab.split('|') as [string, keyof typeof STATUS_GLYPH, string, string];
        return (
          <Text key={name} inverse={focused === '1'}>
            {' '}
            <Text dimColor>{index < 9 ? `${index + 1}:` : ''}</Text>
            <Text color={STATUS_COLOR[status]}>{STATUS_GLYPH[status]}</Text> {name}
            <Text color="yellow">{unread === '1' ? '*' : ' '}</Text>
          </Text>
        );
      })}
    </Box>
  );
}
