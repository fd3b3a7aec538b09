// /backlog's columns (docs/console.md#the-backlog-view): those that fit the width go on each issue's
// line, in priority order (number, phase, title, checks, approver, cost, pull request, branch); those
// that do not fit go on a second line under it (labelled where a value alone would not say what it is).
import type { BacklogRow } from '../../session/backlog-progress.js';
import { ISSUE_PHASES } from '../../runtime/backlog/issue-phase.js';

export type BacklogColumn = 'number' | 'phase' | 'title' | 'checks' | 'approver' | 'cost' | 'pr' | 'branch';

const HEADERS: Record<BacklogColumn, string> = {
  number: '#',
  phase: 'phase',
  title: 'issue',
  checks: 'checks',
  approver: 'approver',
  cost: 'cost',
  pr: 'pull request',
  branch: 'branch',
};

/** The order the columns are kept in as the width shrinks (the title takes what is left, at least TITLE_MIN). */
const PRIORITY: BacklogColumn[] = ['number', 'phase', 'title', 'checks', 'approver', 'cost', 'pr', 'branch'];
const TITLE_MIN = 14;
const PHASE_WIDTH = Math.max(...ISSUE_PHASES.map((phase) => phase.length)) + 1;
const TITLE_MAX = 48;
/** The order they are drawn in, left to right. */
const ORDER: BacklogColumn[] = ['number', 'title', 'phase', 'approver', 'checks', 'cost', 'pr', 'branch'];

export function backlogCell(row: BacklogRow, column: BacklogColumn): string {
  switch (column) {
    case 'number':
      return `#${row.number}`;
    case 'phase':
      return row.phase;
    case 'title':
      return row.title;
    case 'checks':
      return row.checks ? (row.checks.state === 'failed' ? `failed: ${row.checks.failed.join(', ')}` : row.checks.state) : row.watchingChecks ? 'pending' : '-';
    case 'approver':
      return row.approver;
    case 'cost':
      return `$${row.costUsd.toFixed(2)}`;
    case 'pr':
      return row.pullRequest?.url ?? '-';
    case 'branch':
      return row.branch;
  }
}

export interface BacklogLayout {
  /** The columns on each issue's line, left to right, with their widths (a space after each included). */
  line: Array<{ column: BacklogColumn; width: number; header: string }>;
  /** The columns on the second line (empty: one line per issue). */
  second: BacklogColumn[];
}

export function backlogLayout(rows: BacklogRow[], width: number): BacklogLayout {
  const natural = (column: BacklogColumn) => Math.max(HEADERS[column].length, ...rows.map((row) => backlogCell(row, column).length)) + 1;
  const widths = new Map<BacklogColumn, number>();
  let used = 0;
  const second: BacklogColumn[] = [];
  for (const column of PRIORITY) {
    // The phase as wide as its longest word, so columns do not jump as issues move on.
    const w = column === 'title' ? TITLE_MIN + 1 : column === 'phase' ? PHASE_WIDTH : natural(column);
    // Number, phase and title always stay; a column that does not fit moves to the second line.
    if (column === 'number' || column === 'phase' || column === 'title' || used + w <= width) {
      widths.set(column, w);
      used += w;
    } else second.push(column);
  }
  // The title takes what is left, up to its own length.
  const title = Math.min(Math.max(TITLE_MIN, natural('title') - 1, 0), TITLE_MAX) + 1;
  widths.set('title', Math.max(TITLE_MIN + 1, Math.min(title, width - (used - TITLE_MIN - 1))));
  return {
    line: ORDER.filter((column) => widths.has(column)).map((column) => ({ column, width: widths.get(column)!, header: HEADERS[column] })),
    second,
  };
}

/** The second line of an issue: its columns that did not fit, joined. */
export function secondLine(row: BacklogRow, columns: BacklogColumn[]): string {
  return columns
    .map((column) => (column === 'pr' || column === 'branch' ? backlogCell(row, column) : `${HEADERS[column]} ${backlogCell(row, column)}`))
    .join(' · ');
}
