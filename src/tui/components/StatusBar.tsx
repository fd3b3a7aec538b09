// The bottom line: who needs the person, the tasks, tokens and cost (live while agents stream),
// the model and key hints; the least important parts give way first on a narrow terminal.
import chalk from 'chalk';
import { Text } from 'ink';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/shallow';
import type { ConsoleStore } from '../state/console-store.js';
import { fitParts } from '../render/fit.js';
import { formatTokens } from '../render/tokens.js';
import { liveCost, liveOutputTokens } from './progress.js';

export function StatusBar({ store, columns }: { store: ConsoleStore; columns: number }) {
  const [model, endpoint, view, mouse] = useStore(
    store,
    useShallow((s) => [s.model, s.endpoint, s.view, s.mouse] as const),
  );
  const waiting = useStore(store, (s) => s.approvals.length);
  const sandboxOff = useStore(store, (s) => s.sandboxOff);
  const [input, output, estimated, cost, pending, active, done] = useStore(
    store,
    useShallow((s) => {
      let inputTokens = 0;
      let outputTokens = 0;
      let guessed = false;
      let dollars = 0;
      for (const name of s.order) {
        const agent = s.agents[name]!;
        const out = liveOutputTokens(agent);
        inputTokens += agent.inputTokens;
        outputTokens += out.tokens;
        guessed ||= out.estimated;
        dollars += liveCost(agent, s.model);
      }
      const count = (status: string) => s.tasks.filter((t) => t.status === status).length;
      return [inputTokens, outputTokens, guessed, Math.round(dollars * 1000) / 1000, count('pending'), count('in_progress'), count('completed')] as const;
    }),
  );
  const hints = view === 'pane' ? `Tab panes · / commands · Ctrl+G grid${mouse ? '' : ' · Alt+M mouse'}` : 'Esc closes';
  const line = fitParts(
    [
      { text: waiting > 0 ? chalk.bgYellow.black.bold(` needs you: ${waiting} `) + chalk.dim(' Ctrl+Y') : '', priority: 10 },
      // Unsandboxed by necessity is a warning that stays in view; on purpose (HUDDLE_SANDBOX=off), a quiet note.
      { text: sandboxOff ? (sandboxOff.onPurpose ? chalk.dim('sandbox: off') : chalk.yellow.bold('sandbox: off — install bubblewrap')) : '', priority: 9 },
      { text: chalk.cyan(model) + (endpoint ? chalk.dim(` @ ${endpoint}`) : ''), priority: 4 },
      { text: `${formatTokens(input)} in ${estimated ? '~' : ''}${formatTokens(output)} out · $${cost.toFixed(3)}`, priority: 8 },
      { text: `tasks ${pending} pending ${active} active ${done} done`, priority: 9 },
      { text: chalk.dim(hints), priority: 2 },
    ],
    columns,
    chalk.dim(' · '),
  );
  return <Text wrap="truncate">{line}</Text>;
}
