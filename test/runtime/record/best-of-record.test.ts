// The best-of record (runtime/record/best-of-record.ts, its words in best-of-lines.ts): kept and read back, refused in one line when
// missing or not a record, its candidates found by number or name, and printed without anything an
// agent wrote reaching the terminal as control sequences.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { comparisonLines } from '../../../src/runtime/record/best-of-lines.js';
import { findCandidate, loadBestOf, nextBestOfId, saveBestOf, type BestOfCandidate, type BestOfRecord } from '../../../src/runtime/record/best-of-record.js';

let root: string;
beforeEach(() => (root = mkdtempSync(path.join(os.tmpdir(), 'huddle-best-of-record-'))));
afterEach(() => rmSync(root, { recursive: true, force: true }));

function candidate(k: number, more: Partial<BestOfCandidate> = {}): BestOfCandidate {
  return {
    name: `best1-${k}`,
    branch: `huddle/best1-${k}`,
    agent: 'huddle',
    task_id: k,
    state: 'completed',
    files: { changed: 1, added: 3, removed: 1, list: ['a.txt'] },
    commits: 1,
    verify: { ok: true, summary: 'verify passed: true (exit 0, 0 s)' },
    cost_usd: 0.0123,
    model_calls: 2,
    wall_ms: 1000,
    ...more,
  };
}

function record(): BestOfRecord {
  return {
    id: 1,
    task: 'Fix it',
    base: 'main',
    started_at: '2026-01-01T00:00:00.000Z',
    candidates: [candidate(1, { verdict: { score: 8, notes: 'good\x1b[2J\x1b]0;owned\x07 and\nsmall' } }), candidate(2, { state: 'stopped' })],
    verdict: { by: 'best1-judge', pick: 'best1-1', reason: 'it passes', cost_usd: 0.01 },
    outcome: { kind: 'waiting' },
    discarded: [],
  };
}

describe('the best-of record', () => {
  it('is kept, read back (the latest unless named) and numbered on', () => {
    expect(nextBestOfId(root)).toBe(1);
    saveBestOf(root, record());
    saveBestOf(root, { ...record(), id: 2, task: 'Second' });
    expect(loadBestOf(root).task).toBe('Second');
    expect(loadBestOf(root, 1).task).toBe('Fix it');
    expect(nextBestOfId(root)).toBe(3);
    expect(findCandidate(loadBestOf(root, 1), '2')?.name).toBe('best1-2');
    expect(findCandidate(loadBestOf(root, 1), 'best1-1')?.name).toBe('best1-1');
    expect(findCandidate(loadBestOf(root, 1), '7')).toBeUndefined();
  });

  it('refuses a missing run or a file that is not a record, in one line', () => {
    expect(() => loadBestOf(root)).toThrow(`no best-of run in ${root} (huddle best-of N "task" starts one)`);
    saveBestOf(root, record());
    expect(() => loadBestOf(root, 4)).toThrow(`no best-of run #4 in ${root} (runs kept: 1)`);
    mkdirSync(path.join(root, '.team', 'best-of'), { recursive: true });
    writeFileSync(path.join(root, '.team', 'best-of', '5.json'), '{"id": 5}');
    expect(() => loadBestOf(root, 5)).toThrow(/^\.team\/best-of\/5\.json is not a best-of record: /);
    writeFileSync(path.join(root, '.team', 'best-of', '6.json'), 'not json');
    expect(() => loadBestOf(root, 6)).toThrow(/^\.team\/best-of\/6\.json is not a best-of record/);
  });

  it('prints the comparison with no control sequence an agent wrote, one line per row', () => {
    const lines = comparisonLines(record());
    expect(lines).toContain('    1 file +3 −1 · verify ✓ · $0.0123 · 8/10');
    expect(lines).toContain('  best1-1  huddle  completed  ← reviewer');
    expect(lines).toContain('    good and small');
    expect(lines.join('\n')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(lines.at(-2)).toBe('verdict (best1-judge): best1-1: it passes');
    expect(lines.at(-1)).toBe('waiting for your pick (the reviewer would merge best1-1)');
  });
});
