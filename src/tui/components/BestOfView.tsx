// /best-of's compare view (docs/console.md#best-of): the candidates of a best-of-N run side by side. Wide
// enough (40 columns each), one column per candidate: who ran it, a summary row (files ±lines, verify,
// cost, the reviewer's score), the reviewer's notes, its files, the head of its diff. Narrower, a summary
// row per candidate, then the selected candidate's page (←/→). d shows its whole diff, p picks it, x
// discards them all; y or n answers the question p and x ask. Everything an agent wrote is sanitized.
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { BestOfCandidate } from '../../runtime/record/best-of-record.js';
import { candidateFigures, outcomeLine } from '../../runtime/record/best-of-lines.js';
import type { BestOfView as BestOfState, ConsoleStore } from '../state/console-store.js';
import { renderDiff } from '../render/diff.js';
import { padLine, sanitize, truncateLine, wrapLines } from '../render/wrap.js';

/** Rows of the view that are not its content: the title and the footer. */
export const BEST_OF_CHROME_ROWS = 2;
/** Below this many columns per candidate, one candidate per page. */
const MIN_COLUMN = 40;

function clean(text: string): string {
  return sanitize(text, false);
}

/** A candidate's rows at `width`: who, the summary row, the verdict's notes, its files, then its diff. */
function candidateRows(view: BestOfState, candidate: BestOfCandidate, width: number, selected: boolean, diff: boolean): string[] {
  const record = view.record;
  const mark = selected ? chalk.inverse(` ${candidate.name} `) : chalk.bold(` ${candidate.name} `);
  const picked = record.verdict?.pick === candidate.name ? chalk.green(" ← reviewer's pick") : '';
  const who = [candidate.agent, candidate.model].filter(Boolean).join(' ');
  const state = candidate.state === 'running' ? chalk.yellow('running…') : candidate.state === 'completed' ? 'completed' : chalk.yellow('stopped');
  const rows = [
    truncateLine(`${mark}${picked}`, width),
    truncateLine(`${clean(who)} · ${state}${candidate.error ? ` (${clean(candidate.error)})` : ''}`, width),
  ];
  if (candidate.state !== 'running') {
    const figures = candidateFigures(candidate).replace('verify ✓', chalk.green('verify ✓')).replace('verify ✗', chalk.red('verify ✗'));
    rows.push(...wrapLines(figures, width));
    if (candidate.verdict?.notes) rows.push(...wrapLines(chalk.dim(clean(candidate.verdict.notes)), width));
    if (candidate.files.list.length) rows.push(...wrapLines(chalk.dim(`files: ${clean(candidate.files.list.join(', '))}`), width));
  }
  if (!diff) return rows;
  rows.push(chalk.dim('─'.repeat(width)));
  const text = view.diffs[candidate.name];
  rows.push(...(text === undefined ? [chalk.dim(candidate.state === 'running' ? '(working)' : '(reading its diff…)')] : renderDiff(text, width)));
  return rows;
}

/** The view's title and content rows at this width (App scrolls them; the component draws them). */
export function bestOfContent(view: BestOfState | undefined, width: number): { title: string; lines: string[] } {
  if (!view) return { title: 'best-of', lines: ['No best-of run yet: /best-of N TASK starts one.'] };
  const record = view.record;
  const n = record.candidates.length;
  const title = `best-of-${n} #${record.id} on ${record.base}: ${clean(record.task.split('\n')[0] ?? '')}`;
  const selected = record.candidates[Math.min(view.selected, n - 1)]!;
  // d: the selected candidate alone, its whole diff.
  if (view.detail) return { title, lines: candidateRows(view, selected, width, true, true) };
  const lines: string[] = [...wrapLines(chalk.dim(clean(outcomeLine(record))), width)];
  if (record.verdict) lines.push(...wrapLines(chalk.dim(`verdict: ${clean(record.verdict.reason)}`), width));
  const column = Math.floor((width - (n - 1)) / n);
  if (column >= MIN_COLUMN) {
    const columns = record.candidates.map((candidate, index) => candidateRows(view, candidate, column, index === view.selected, true));
    const height = Math.max(...columns.map((rows) => rows.length));
    lines.push('');
    for (let row = 0; row < height; row++) lines.push(columns.map((rows) => padLine(rows[row] ?? '', column)).join(chalk.dim('│')));
    return { title, lines };
  }
  // Narrow: the summary row of every candidate, then the selected one's page.
  lines.push('');
  for (const [index, candidate] of record.candidates.entries()) {
    const mark = index === view.selected ? '▶' : ' ';
    const figures = candidate.state === 'running' ? 'running…' : candidateFigures(candidate);
    const picked = record.verdict?.pick === candidate.name ? ' ←' : '';
    lines.push(truncateLine(`${mark} ${candidate.name}  ${figures}${picked}`, width));
  }
  lines.push(chalk.dim(truncateLine(`── ${view.selected + 1}/${n} · ←/→ ${'─'.repeat(width)}`, width)));
  lines.push(...candidateRows(view, selected, width, true, true));
  return { title, lines };
}

function footer(view: BestOfState | undefined, base: string): string {
  if (!view) return '';
  if (view.busy) return chalk.yellow('working on it…');
  const confirming = view.confirming;
  if (confirming?.kind === 'pick') {
    const others = view.record.candidates.length - 1;
    return chalk.yellow(`Merge ${confirming.name} into ${base} and remove all ${others + 1} candidates' worktrees and branches? y yes · n no`);
  }
  if (confirming?.kind === 'discard')
    return chalk.yellow(`Discard all ${view.record.candidates.length} candidates (worktrees and branches), merging none? y yes · n no`);
  if (view.record.outcome.kind !== 'waiting') return '';
  return chalk.dim(view.detail ? 'Esc: back to the comparison · p pick it' : '←/→ candidate · d its diff · p pick it · x discard all · Esc closes');
}

export function BestOfView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const view = useStore(store, (state) => state.bestOf);
  const offset = useStore(store, (state) => state.viewScroll);
  const { title, lines } = bestOfContent(view, width);
  const shown = Math.max(1, height - BEST_OF_CHROME_ROWS);
  const top = Math.min(offset, Math.max(0, lines.length - shown));
  const below = Math.max(0, lines.length - top - shown);
  const more = below > 0 ? chalk.cyan(` · ↓ ${below} more rows`) : '';
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text wrap="truncate">{truncateLine(chalk.bold(title), width)}</Text>
      <Box height={shown} overflow="hidden">
        <Text wrap="truncate">{lines.slice(top, top + shown).join('\n')}</Text>
      </Box>
      <Text wrap="truncate">{truncateLine(`${footer(view, view?.record.base ?? '')}${more}`, width)}</Text>
    </Box>
  );
}
