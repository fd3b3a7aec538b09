// /backlog's columns (docs/console.md#the-backlog-view): what fits the width stays on the issue's line, in
// priority order; the rest goes on a second line, labelled, so nothing is cut away at 80 columns.
import { describe, expect, it } from 'vitest';
import { backlogCell, backlogLayout, secondLine } from '../../../src/tui/render/backlog-columns.js';
import { issuePhase, type IssueProgress } from '../../../src/runtime/backlog/issue-phase.js';
import type { BacklogRow } from '../../../src/session/backlog-progress.js';

function progress(over: Partial<IssueProgress> = {}): IssueProgress {
  return {
    number: 1,
    title: 'Add a greeting to the app',
    name: 'issue-1-add-a-greeting',
    branch: 'huddle/issue-1-add-a-greeting-to-the-app',
    base: 'main',
    taskId: 1,
    started: true,
    shipped: true,
    pullRequest: { number: 3, url: 'https://github.invalid/acme/app/pull/3' },
    checks: { state: 'passed', failed: [] },
    costUsd: 0.0123,
    ...over,
  };
}

function row(over: Partial<IssueProgress> = {}, approver = 'auto-after 30 min'): BacklogRow {
  const p = progress(over);
  return { ...p, phase: issuePhase(p, true), approver };
}

describe('the backlog view columns', () => {
  it('keeps every column on one line when the width allows', () => {
    const layout = backlogLayout([row()], 160);
    expect(layout.line.map((c) => c.column)).toEqual(['number', 'title', 'phase', 'approver', 'checks', 'cost', 'pr', 'branch']);
    expect(layout.second).toEqual([]);
    expect(layout.line.reduce((sum, c) => sum + c.width, 0)).toBeLessThanOrEqual(160);
  });

  it('moves what does not fit at 80 columns to a second line, the link and the branch first', () => {
    const rows = [row()];
    const layout = backlogLayout(rows, 80);
    expect(layout.line.map((c) => c.column)).toEqual(['number', 'title', 'phase', 'approver', 'checks', 'cost']);
    expect(layout.second).toEqual(['pr', 'branch']);
    expect(layout.line.reduce((sum, c) => sum + c.width, 0)).toBeLessThanOrEqual(80);
    expect(secondLine(rows[0]!, layout.second)).toBe('https://github.invalid/acme/app/pull/3 · huddle/issue-1-add-a-greeting-to-the-app');
  });

  it('labels a cut column on the second line when the terminal is narrower still', () => {
    const layout = backlogLayout([row()], 40);
    expect(layout.second).toContain('approver');
    expect(secondLine(row(), layout.second)).toContain('approver auto-after 30 min');
  });

  it('says the checks and the cost', () => {
    expect(backlogCell(row({ checks: { state: 'failed', failed: ['test', 'lint'] } }), 'checks')).toBe('failed: test, lint');
    expect(backlogCell(row({ checks: undefined, watchingChecks: true }), 'checks')).toBe('pending');
    expect(backlogCell(row(), 'cost')).toBe('$0.01');
  });
});

describe('an issue phase', () => {
  it('follows the issue from the queue to done', () => {
    const steps: Array<[Partial<IssueProgress>, string]> = [
      [{ started: false, shipped: false }, 'queued'],
      [{ shipped: false, taskStatus: 'pending' }, 'planning'],
      [{ shipped: false, taskStatus: 'pending', plan: 'waiting' }, 'awaiting approval'],
      [{ shipped: false, taskStatus: 'pending', plan: 'revising' }, 'planning'],
      [{ shipped: false, taskStatus: 'in_progress', plan: 'approved' }, 'building'],
      [{ shipped: false, taskStatus: 'review', plan: 'approved' }, 'in review'],
      [{ shipped: false, taskStatus: 'completed' }, 'shipping'],
      [{ checks: undefined, watchingChecks: true }, 'checks'],
      [{}, 'done'],
      [{ checks: { state: 'failed', failed: ['test'] } }, 'failed'],
      [{ shipped: false, failed: true }, 'failed'],
    ];
    for (const [over, phase] of steps) expect(issuePhase(progress(over), true), JSON.stringify(over)).toBe(phase);
    // Without plans, a started issue is built at once.
    expect(issuePhase(progress({ shipped: false, taskStatus: 'pending' }), false)).toBe('building');
  });
});
