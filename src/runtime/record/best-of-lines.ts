// A best-of-N run in words (docs/best-of.md): a candidate's figures, where the run stands, the whole
// comparison. Apart from the record's file (best-of-record.ts, checked with zod) so that the console's
// view shows them without loading the schema before its first frame (docs/console.md#starting).
import { stripVTControlCharacters } from 'node:util';
import type { BestOfCandidate, BestOfRecord } from './best-of-record.js';

/** One candidate's figures on one line: `2 files +12 −4 · verify ✓ · $0.0123 · 7/10`. */
export function candidateFigures(candidate: BestOfCandidate): string {
  const files = `${candidate.files.changed} file${candidate.files.changed === 1 ? '' : 's'} +${candidate.files.added} −${candidate.files.removed}`;
  const verify = candidate.verify ? `verify ${candidate.verify.ok ? '✓' : '✗'}` : 'no verify';
  const verdict = candidate.verdict ? `${candidate.verdict.score}/10` : 'no verdict';
  return [files, verify, `$${candidate.cost_usd.toFixed(4)}`, verdict].join(' · ');
}

/** Where the run stands, in one line. */
export function outcomeLine(record: BestOfRecord): string {
  const outcome = record.outcome;
  switch (outcome.kind) {
    case 'running':
      return 'running';
    case 'waiting':
      return record.verdict?.pick
        ? `waiting for your pick (the reviewer would merge ${record.verdict.pick})`
        : 'waiting for your pick (the reviewer picked none)';
    default:
      return outcome.message;
  }
}

/** What an agent wrote (notes, a reason, file names), made safe to print: no escape sequences, no control characters. */
function plain(text: string): string {
  return stripVTControlCharacters(text).replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** The comparison as text: a head line, one block per candidate, the verdict (headless, the record). */
export function comparisonLines(record: BestOfRecord): string[] {
  return comparisonText(record).map(plain);
}

function comparisonText(record: BestOfRecord): string[] {
  const lines = [`best-of-${record.candidates.length} #${record.id} on ${record.base}: ${record.task.split('\n')[0]}`];
  for (const candidate of record.candidates) {
    const who = [candidate.agent, candidate.model].filter(Boolean).join(' ');
    const picked = record.verdict?.pick === candidate.name ? '  ← reviewer' : '';
    lines.push(`  ${candidate.name}  ${who}  ${candidate.state}${candidate.error ? ` (${candidate.error})` : ''}${picked}`);
    lines.push(`    ${candidateFigures(candidate)}`);
    if (candidate.files.list.length) lines.push(`    files: ${candidate.files.list.join(', ')}`);
    if (candidate.verify && !candidate.verify.ok) lines.push(`    ${candidate.verify.summary}`);
    if (candidate.verdict?.notes) lines.push(`    ${candidate.verdict.notes}`);
  }
  if (record.verdict) lines.push(`verdict (${record.verdict.by}): ${record.verdict.pick ?? 'none'}: ${record.verdict.reason}`);
  lines.push(outcomeLine(record));
  return lines;
}
