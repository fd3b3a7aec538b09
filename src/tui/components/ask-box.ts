// A question for the person, in the pane of the agent that asks: what it wants to do (the command,
// or the edit as a diff), why it needs the person, and numbered choices without gaps — 1 yes, 2 yes
// and allow it from now on (when it can be allow-listed), then no and tell the agent why — answered
// with those keys while the pane is in view
// (src/tui/keys/console-keymap.ts). The needs-you queue (Ctrl+Y) still lists every question.
import chalk from 'chalk';
import type { ApprovalView } from '../state/console-store.js';
import { askChoices } from '../state/ask-choices.js';
import { renderDiff } from '../render/diff.js';
import { truncateLine, wrapLines } from '../render/wrap.js';

/** The question's rows for a pane `width` wide, at most `maxRows` (the diff is cut first). */
export function askLines(request: ApprovalView, waiting: number, width: number, maxRows: number, denying: boolean): string[] {
  const bar = chalk.yellow('│ ');
  const inner = Math.max(10, width - 2);
  const what =
    request.tool === 'budget' || request.tool === 'failed' || request.tool === 'stalled' || request.tool === 'plan'
      ? request.summary
      : request.tool === 'trust'
        ? `trust this workspace's ${request.summary}?`
        : `${request.agent} wants to ${request.tool === 'bash' ? 'run' : 'use'} ${request.tool === 'bash' ? '' : `${request.tool} `}${request.summary}`;
  const head = truncateLine(chalk.yellow(`╭ ${what}${waiting > 1 ? chalk.dim(` (1 of ${waiting} from ${request.agent})`) : ''}`), width);
  const why = wrapLines(request.reason, inner).map((row) => bar + chalk.dim(row));
  const choices = denying
    ? [chalk.yellow(`╰ why not? type it below; Enter tells ${request.agent} (or just Enter), Esc goes back`)]
    : wrapLines(
        `${askChoices(request)
          .map((choice) => `${chalk.bold(choice.key)} ${choice.label}`)
          .join('   ')}`,
        inner,
      ).map((row, i) => chalk.yellow(i === 0 ? '╰ ' : '  ') + row);
  const room = Math.max(0, maxRows - 1 - why.length - choices.length);
  let detail = request.detail ? renderDiff(request.detail, inner).map((row) => bar + row) : [];
  if (detail.length > room) detail = room > 1 ? [...detail.slice(0, room - 1), bar + chalk.dim(`… ${detail.length - room + 1} more lines`)] : [];
  return [head, ...why, ...detail, ...choices].slice(-Math.max(1, maxRows));
}
