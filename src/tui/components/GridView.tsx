// /grid (Ctrl+G): every agent's latest output at once, tiled: up to nine tiles, each with the
// agent's name, a spinner and what it does, and the last rows of its transcript. Arrows pick a
// tile, Enter brings its pane into view. The whole grid is one pre-laid-out <Text>.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { AgentView, ConsoleStore } from '../state/console-store.js';
import { gridAgents } from '../state/grid.js';
import { paneWindow } from '../render/pane-window.js';
import { fitParts } from '../render/fit.js';
import { padLine } from '../render/wrap.js';
import { spinnerFrame, useClock } from '../hooks/useClock.js';
import { statusMark } from './glyphs.js';
import { activity, isBusy } from './progress.js';

/** Tiles across: about square, no narrower than this many columns each. */
const MIN_TILE_WIDTH = 24;

export function gridShape(count: number, width: number): { columns: number; rows: number } {
  const columns = Math.max(1, Math.min(count, Math.ceil(Math.sqrt(count)), Math.floor((width + 1) / (MIN_TILE_WIDTH + 1))));
  return { columns, rows: Math.ceil(count / columns) };
}

export function GridView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const names = useStore(
    store,
    useShallow((state) => gridAgents(state)),
  );
  const agents = useStore(
    store,
    useShallow((state) => names.map((name) => state.agents[name]!)),
  );
  const selected = Math.min(
    useStore(store, (state) => state.gridIndex),
    Math.max(0, names.length - 1),
  );
  const now = useClock(agents.some(isBusy));
  const { columns, rows } = gridShape(names.length, width);
  const tileWidth = Math.floor((width - (columns - 1)) / columns);
  const tileHeight = Math.max(2, Math.floor((height - 1) / rows));
  const lines: string[] = [];
  for (let row = 0; row < rows; row++) {
    const tiles = agents
      .slice(row * columns, row * columns + columns)
      .map((agent, i) => tile(agent, row * columns + i === selected, tileWidth, tileHeight, now));
    for (let line = 0; line < tileHeight; line++) {
      lines.push(tiles.map((t) => t[line] ?? ' '.repeat(tileWidth)).join(chalk.dim('│')));
    }
  }
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text wrap="truncate">
        {chalk.bold('Grid')}
        {chalk.dim(` (${names.length} agents) · arrows pick a tile · Enter opens its pane · Esc closes`)}
      </Text>
      <Text wrap="truncate">{lines.join('\n')}</Text>
    </Box>
  );
}

function tile(agent: AgentView, selected: boolean, width: number, height: number, now: number): string[] {
  const glyph = isBusy(agent) && agent.status === 'working' ? chalk.green(spinnerFrame(now)) : statusMark(agent.status);
  const doing = activity(agent, now) ?? agent.status;
  const head = padLine(
    fitParts(
      [
        { text: `${glyph} ${chalk.bold(agent.name)}`, priority: 10 },
        { text: chalk.dim(doing), priority: 5 },
      ],
      width - 1,
      ' · ',
    ),
    width,
  );
  const body = agent.items.length ? paneWindow(agent.items, { width, rows: height - 1, expanded: false }, undefined).lines : [chalk.dim('nothing yet')];
  return [selected ? chalk.inverse(head) : head, ...body.map((line) => padLine(line, width))];
}
