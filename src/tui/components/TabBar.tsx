// One tab per agent: number (Alt+N), status glyph (a spinner while it works), name, unread mark.
// When the tabs do not fit, the numbers go, then names are shortened, then the row scrolls to keep
// the pane in view on screen.
import chalk from 'chalk';
import { Text } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { AgentStatus, ConsoleStore } from '../state/console-store.js';
import { spinnerFrame, useClock } from '../hooks/useClock.js';
import { statusMark } from './glyphs.js';
import { isBusy } from './progress.js';
import { truncateLine, visibleWidth } from '../render/wrap.js';

interface Tab {
  name: string;
  status: AgentStatus;
  busy: boolean;
  unread: boolean;
  focused: boolean;
}

const DEMO_BADGE = ' DEMO · scripted model ';

export function TabBar({ store, columns }: { store: ConsoleStore; columns: number }) {
  const tabs = useStore(
    store,
    useShallow((state) =>
      state.order.map((name) => {
        const agent = state.agents[name]!;
        return `${name}|${agent.status}|${isBusy(agent) ? 1 : 0}|${agent.unread ? 1 : 0}|${state.focus === name && state.view === 'pane' ? 1 : 0}`;
      }),
    ),
  ).map((tab): Tab => {
    const [name, status, busy, unread, focused] = tab.split('|') as [string, AgentStatus, string, string, string];
    return { name, status, busy: busy === '1', unread: unread === '1', focused: focused === '1' };
  });
  const demo = useStore(store, (state) => state.demo);
  const now = useClock(tabs.some((tab) => tab.busy));
  const badge = demo ? chalk.bgMagenta.white(DEMO_BADGE) : '';
  return <Text wrap="truncate">{badge + tabLine(tabs, columns - visibleWidth(badge), now)}</Text>;
}

function tabLine(tabs: Tab[], width: number, now: number): string {
  const render = (numbered: boolean, nameWidth: number) =>
    tabs.map((tab, index) => {
      const glyph = tab.busy && tab.status === 'working' ? chalk.green(spinnerFrame(now)) : statusMark(tab.status);
      const number = numbered && index < 9 ? chalk.dim(`${index + 1}:`) : '';
      const name = truncateLine(tab.name, nameWidth);
      const text = ` ${number}${glyph} ${name}${tab.unread ? chalk.yellow('*') : ' '}`;
      return tab.focused ? chalk.inverse(text) : text;
    });
  const size = (parts: string[]) => parts.reduce((sum, part) => sum + visibleWidth(part), 0);
  const longest = Math.max(4, ...tabs.map((tab) => tab.name.length));
  for (const numbered of [true, false]) {
    const parts = render(numbered, longest);
    if (size(parts) <= width) return parts.join('');
  }
  for (let nameWidth = longest - 1; nameWidth >= 4; nameWidth--) {
    const parts = render(false, nameWidth);
    if (size(parts) <= width) return parts.join('');
  }
  // Still too many: a window of tabs around the pane in view, with how many are left out.
  const parts = render(false, 4);
  const focus = Math.max(
    0,
    tabs.findIndex((tab) => tab.focused),
  );
  let first = focus;
  let last = focus;
  const fits = (a: number, b: number) => size(parts.slice(a, b + 1)) + 8 <= width;
  while (true) {
    if (last + 1 < parts.length && fits(first, last + 1)) last++;
    else if (first > 0 && fits(first - 1, last)) first--;
    else break;
  }
  return `${first > 0 ? chalk.dim(` ‹${first}`) : ''}${parts.slice(first, last + 1).join('')}${last < parts.length - 1 ? chalk.dim(` ${parts.length - 1 - last}›`) : ''}`;
}
