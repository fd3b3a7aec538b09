// The focused agent's pane: a header with what the agent is doing (spinner, elapsed time, live
// token counts), then only the transcript rows that fit; scrolled up or searching, a footer says
// where the view is and how to move. Exactly `height` rows, whatever the transcript holds.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { AgentView, ConsoleStore } from '../state/console-store.js';
import { paneWindow, highlightMatches, searchRows, type PaneWindow } from '../render/pane-window.js';
import { useShallow } from 'zustand/shallow';
import { fitParts } from '../render/fit.js';
import { askLines } from './ask-box.js';
import { wrapLines } from '../render/wrap.js';
import { spinnerFrame, useClock } from '../hooks/useClock.js';
import { contextPercent, statusMark } from './glyphs.js';
import { formatTokens } from '../render/tokens.js';
import { activity, isBusy, liveCost, liveOutputTokens } from './progress.js';
import { hostNames } from '../render/host-names.js';

interface Props {
  store: ConsoleStore;
  width: number;
  height: number;
}

/** Rows of a pane that are not transcript while it is scrolled: the header and the footer. */
export const PANE_CHROME_ROWS = 2;

export function AgentPane({ store, width, height }: Props) {
  const name = useStore(store, (state) => state.focus);
  const agent = useStore(store, (state) => state.agents[state.focus]);
  const scroll = useStore(store, (state) => state.scroll[state.focus]);
  const search = useStore(store, (state) => state.search);
  const expanded = useStore(store, (state) => state.expanded[state.focus] ?? false);
  const keyMissing = useStore(store, (state) => state.keyMissing);
  const asks = useStore(
    store,
    useShallow((state) => state.approvals.filter((request) => request.agent === state.focus)),
  );
  const denying = useStore(store, (state) => state.denying);
  const model = useStore(store, (state) => state.model);
  useStore(store, (state) => state.highlighterReady);
  const now = useClock(agent !== undefined && isBusy(agent));
  if (!agent) return <Box height={height} />;

  const footer = scroll !== undefined || search !== undefined;
  // Under the transcript: a question the agent asks the person, and what the person sent that the
  // agent has not read yet (until it does).
  const ask = asks[0] ? askLines(asks[0], asks.length, width, Math.max(3, Math.floor((height - 2) * 0.6)), denying === asks[0].id) : [];
  const queued = [...queuedLines(name, agent.queued, width, Math.floor((height - 2) / 2)), ...ask];
  const bodyRows = Math.max(1, height - 1 - (footer ? 1 : 0));
  const view = paneWindow(agent.items, { width, rows: Math.max(1, bodyRows - queued.length), expanded }, scroll);
  const shown = search?.query ? view.lines.map((line) => highlightMatches(line, search.query)) : view.lines;
  const lines = queued.length ? [...shown, ...Array<string>(Math.max(0, bodyRows - queued.length - shown.length)).fill(''), ...queued] : shown;
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text wrap="truncate">{header(name, agent, width, now, model)}</Text>
      <Box height={bodyRows} overflow="hidden">
        {agent.items.length === 0 && queued.length === 0 ? <EmptyPane name={name} keyMissing={keyMissing} /> : <Text wrap="truncate">{lines.join('\n')}</Text>}
      </Box>
      {footer ? <Text wrap="truncate">{search ? searchFooter(agent, search, width, expanded) : scrollFooter(view, width)}</Text> : null}
    </Box>
  );
}

/** The person's messages not yet in the agent's context, dim, under the transcript (at most `max` rows). */
function queuedLines(name: string, queued: string[] | undefined, width: number, max: number): string[] {
  if (!queued?.length) return [];
  const rows = queued.flatMap((text) => wrapLines(`⧗ queued for ${name}: ${text}`, width - 2).map((row, i) => chalk.dim(i === 0 ? row : `  ${row}`)));
  return rows.length <= max ? rows : [...rows.slice(0, max - 1), chalk.dim(`  … ${rows.length - max + 1} more rows queued`)];
}

function header(name: string, agent: AgentView, width: number, now: number, model: string): string {
  const busy = isBusy(agent);
  const glyph = agent.restarting ? chalk.cyan('↻') : busy && agent.status === 'working' ? chalk.green(spinnerFrame(now)) : statusMark(agent.status);
  const state = agent.restarting ? 'restarting…' : agent.status;
  const doing = activity(agent, now);
  const out = liveOutputTokens(agent);
  const reason = !busy && agent.reason ? `: ${agent.reason}` : '';
  return fitParts(
    [
      { text: `${glyph} ${chalk.bold(name)} ${chalk.dim(`(${agent.role}) ${state}${agent.restarting ? '' : reason}`)}`, priority: 10 },
      { text: doing ? (busy ? chalk.yellow(doing) : chalk.dim(doing)) : '', priority: 9 },
      { text: chalk.dim(`${formatTokens(agent.inputTokens)} in ${out.estimated ? '~' : ''}${formatTokens(out.tokens)} out`), priority: 8 },
      { text: chalk.dim(`$${liveCost(agent, model).toFixed(3)}`), priority: 6 },
      { text: chalk.dim(`ctx ${contextPercent(agent.contextTokens, agent.model)}%`), priority: 5 },
      // Run by another process of the team (a worker): which machine.
      { text: agent.host ? chalk.dim(`on ${hostNames([agent.host]).get(agent.host)}`) : '', priority: 7 },
      { text: busy && agent.status === 'working' ? chalk.dim('Esc interrupts') : '', priority: 4 },
    ],
    width,
    chalk.dim(' · '),
  );
}

function scrollFooter(view: PaneWindow, width: number): string {
  return fitParts(
    [
      { text: chalk.cyan(`↑ ${view.above} rows above`), priority: 10 },
      { text: chalk.cyan(`↓ ${view.below} below`), priority: 10 },
      { text: chalk.dim('PgUp/PgDn'), priority: 5 },
      { text: chalk.dim('g top'), priority: 4 },
      { text: chalk.dim('G or End: back to the end'), priority: 6 },
      { text: chalk.dim('Ctrl+F search'), priority: 3 },
    ],
    width,
    chalk.dim(' · '),
  );
}

function searchFooter(agent: AgentView, search: { query: string; match: number }, width: number, expanded: boolean): string {
  const count = search.query ? searchRows(agent.items, width, expanded, search.query).length : 0;
  const where = !search.query ? 'type to search this pane' : count === 0 ? chalk.yellow('no match') : `match ${count - search.match} of ${count}`;
  return fitParts(
    [
      { text: `${chalk.cyan('search:')} ${search.query}${chalk.inverse(' ')}`, priority: 10 },
      { text: where, priority: 9 },
      { text: chalk.dim('Enter/↑ earlier · ↓ later'), priority: 5 },
      { text: chalk.dim('Esc ends the search'), priority: 6 },
    ],
    width,
    chalk.dim(' · '),
  );
}

function EmptyPane({ name, keyMissing }: { name: string; keyMissing: boolean }) {
  if (keyMissing) {
    return (
      <Box flexDirection="column">
        <Text color="yellow">No API key is set, so the agents cannot reach a model.</Text>
        <Text> </Text>
        <Text>Quit (Ctrl+C twice), then either:</Text>
        <Text> export ANTHROPIC_API_KEY=sk-ant-… then run huddle again, or</Text>
        <Text> huddle --api-key-file ~/.config/anthropic-key</Text>
        <Text>For another server that speaks the Anthropic Messages API, also set ANTHROPIC_BASE_URL.</Text>
        <Text> </Text>
        <Text dimColor>To look around without a key: huddle demo</Text>
      </Box>
    );
  }
  return name === 'lead' ? (
    <Box flexDirection="column">
      <Text>Tell the lead what to build. It plans tasks, spawns teammates and reports back.</Text>
      <Text dimColor>Tab switches panes · / lists commands · Ctrl+G shows the whole team · /help</Text>
    </Box>
  ) : (
    <Text dimColor>Nothing yet. Typing here sends a message to {name}.</Text>
  );
}
