// A terminal pane: the screen of a program running in a PTY (a `command` teammate, a shell), as
// its headless terminal holds it. Redrawn at most every 50 ms while the program writes; sized to
// the pane (the program is told its new size). Keys reach it through the console's dispatcher.
import { Box, Text } from 'ink';
import { useEffect, useReducer } from 'react';
import { useStore } from 'zustand';
import type { TerminalView } from '../../session/team-session.js';
import type { ConsoleStore } from '../state/console-store.js';
import { STATUS_COLOR, STATUS_GLYPH } from './glyphs.js';

const REDRAW_MS = 50;

interface Props {
  store: ConsoleStore;
  view: TerminalView;
  width: number;
  height: number;
}

export function TerminalPane({ store, view, width, height }: Props) {
  const name = useStore(store, (state) => state.focus);
  const agent = useStore(store, (state) => state.agents[state.focus]);
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    const off = view.onChange(() => {
      timer ??= setTimeout(() => {
        timer = undefined;
        redraw();
      }, REDRAW_MS);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, [view]);
  const rows = Math.max(1, height - 1);
  useEffect(() => view.resize(width, rows), [view, width, rows]);
  const lines = view.lines().slice(0, rows);
  const status = agent?.status ?? 'idle';
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Box height={1} overflow="hidden">
        <Text color={STATUS_COLOR[status]}>{STATUS_GLYPH[status]} </Text>
        <Text bold>{name}</Text>
        <Text dimColor> terminal{view.running ? '' : ' (ended)'} · keys go to the program · Shift+Tab or Ctrl+] leaves</Text>
      </Box>
      <Text wrap="truncate">{lines.join('\n')}</Text>
    </Box>
  );
}
