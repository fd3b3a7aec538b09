// A best-of-N run (docs/best-of.md): one task given to N candidates, each in its own worktree, their
// results side by side (files and lines changed, verify, cost, a reviewer's verdict) and what the person
// picked. Kept in `.team/best-of/<id>.json` so that `huddle pick` (another process, later) finds the
// candidates, and added to the run record as `best_of`.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { writeJsonAtomicSync } from '../fs/atomic-file.js';

const candidateSchema = z.object({
  /** Its teammate name, `best<id>-<k>`; its branch is huddle/<name>. */
  name: z.string(),
  branch: z.string(),
  /** huddle's own loop or an external CLI (claude-code, codex, …). */
  agent: z.string(),
  model: z.string().optional(),
  task_id: z.number(),
  /** completed: its task was completed; stopped: it ended (or failed) without completing it. */
  state: z.enum(['running', 'completed', 'stopped']),
  error: z.string().optional(),
  files: z.object({ changed: z.number(), added: z.number(), removed: z.number(), list: z.array(z.string()) }),
  commits: z.number(),
  /** The verify command run by huddle in its worktree once it ended; absent without --verify. */
  verify: z.object({ ok: z.boolean(), summary: z.string() }).optional(),
  cost_usd: z.number(),
  model_calls: z.number(),
  wall_ms: z.number(),
  verdict: z.object({ score: z.number(), notes: z.string() }).optional(),
});

const verdictSchema = z.object({
  /** The reviewer's name. */
  by: z.string(),
  /** The candidate it would merge, or none of them. */
  pick: z.string().nullable(),
  reason: z.string(),
  cost_usd: z.number(),
});

export const bestOfRecordSchema = z.object({
  id: z.number().int().positive(),
  task: z.string(),
  /** The branch the candidates started from and the pick is merged into. */
  base: z.string(),
  verify: z.string().optional(),
  started_at: z.string(),
  candidates: z.array(candidateSchema),
  verdict: verdictSchema.optional(),
  /** What became of it: waiting for the person's pick, merged, opened as a pull request, or all discarded. */
  outcome: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('running') }),
    z.object({ kind: z.literal('waiting') }),
    z.object({ kind: z.literal('merged'), candidate: z.string(), message: z.string() }),
    z.object({ kind: z.literal('pull_request'), candidate: z.string(), message: z.string() }),
    z.object({ kind: z.literal('discarded'), message: z.string() }),
  ]),
  /** What was removed of each candidate (worktree, branch), in huddle's words. */
  discarded: z.array(z.string()).default([]),
});

export type BestOfRecord = z.infer<typeof bestOfRecordSchema>;
export type BestOfCandidate = BestOfRecord['candidates'][number];
export type BestOfVerdict = NonNullable<BestOfRecord['verdict']>;

export function bestOfDir(root: string): string {
  return path.join(root, '.team', 'best-of');
}

/** The candidate names of run `id`: `best<id>-<k>` (an agent name, so also a branch huddle/<name>). */
export function candidateName(id: number, k: number): string {
  return `best${id}-${k}`;
}

export function reviewerName(id: number): string {
  return `best${id}-judge`;
}

/** The next run's id: one past the highest kept. */
export function nextBestOfId(root: string): number {
  return Math.max(0, ...listIds(root)) + 1;
}

function listIds(root: string): number[] {
  try {
    return readdirSync(bestOfDir(root))
      .map((file) => /^(\d+)\.json$/.exec(file)?.[1])
      .filter((id): id is string => id !== undefined)
      .map(Number);
  } catch {
    // No best-of run here yet.
    return [];
  }
}

export function saveBestOf(root: string, record: BestOfRecord): void {
  mkdirSync(bestOfDir(root), { recursive: true });
  writeJsonAtomicSync(path.join(bestOfDir(root), `${record.id}.json`), record);
}

/** Run `id`, or the latest run when none is named; a clear Error when there is none or it cannot be read. */
export function loadBestOf(root: string, id?: number): BestOfRecord {
  const chosen = id ?? Math.max(0, ...listIds(root));
  if (!chosen) throw new Error(`no best-of run in ${root} (huddle best-of N "task" starts one)`);
  const file = path.join(bestOfDir(root), `${chosen}.json`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`no best-of run #${chosen} in ${root} (runs kept: ${listIds(root).join(', ') || 'none'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = bestOfRecordSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${path.relative(root, file)} is not a best-of record: ${parsed.error.issues[0]?.message ?? 'unreadable'}`);
  return parsed.data;
}

/** A candidate by its name, or its number k (`2` is `best<id>-2`). */
export function findCandidate(record: BestOfRecord, which: string): BestOfCandidate | undefined {
  const name = /^\d+$/.test(which) ? candidateName(record.id, Number(which)) : which;
  return record.candidates.find((candidate) => candidate.name === name);
}

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
      return record.verdict?.pick ? `waiting for your pick (the reviewer would merge ${record.verdict.pick})` : 'waiting for your pick (the reviewer picked none)';
    default:
      return outcome.message;
  }
}

/** The comparison as text: a head line, one block per candidate, the verdict (headless, the record). */
export function comparisonLines(record: BestOfRecord): string[] {
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
