// A best-of-N run (docs/best-of.md): one task given to N candidates, each in its own worktree, their
// results side by side (files and lines changed, verify, cost, a reviewer's verdict) and what the person
// picked. Kept in `.team/best-of/<id>.json` so that `huddle pick` (another process, later) finds the
// candidates, and added to the run record as `best_of`.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { writeJsonAtomicSync } from '../fs/atomic-file.js';
import { liveness, type ProcessIdentity } from '../fs/process-identity.js';

/** One candidate of a best-of-N run, as the comparison shows it. */
export interface BestOfCandidate {
  /** Its teammate name, `best<id>-<k>`; its branch is huddle/<name>. */
  name: string;
  branch: string;
  /** huddle's own loop or an external CLI (claude-code, codex, …). */
  agent: string;
  model?: string | undefined;
  task_id: number;
  /** completed: its task was completed (its verify gate passed); stopped: it ended, or failed, without completing it. */
  state: 'running' | 'completed' | 'stopped';
  error?: string | undefined;
  /** What its branch changed since the base: files, lines added and removed. */
  files: { changed: number; added: number; removed: number; list: string[] };
  commits: number;
  /** The verify command run by huddle in its worktree once it ended; absent without one. */
  verify?: { ok: boolean; summary: string } | undefined;
  cost_usd: number;
  model_calls: number;
  wall_ms: number;
  /** The reviewer's word on it: 0 (unusable) to 10 (merge as it is). */
  verdict?: { score: number; notes: string } | undefined;
}

/** The reviewer's verdict, given through best_of_verdict. */
export interface BestOfVerdict {
  /** The reviewer's name. */
  by: string;
  /** The candidate it would merge, or null for none of them. */
  pick: string | null;
  reason: string;
  cost_usd: number;
}

/** What became of a run: under way, waiting for the person's pick, merged, opened as a pull request, or all discarded. */
export type BestOfOutcome =
  /** `by`: the process running it, so that a later reader can tell a run under way from one killed outright. */
  | { kind: 'running'; by?: ProcessIdentity | undefined }
  | { kind: 'waiting' }
  | { kind: 'merged'; candidate: string; message: string }
  | { kind: 'pull_request'; candidate: string; message: string }
  | { kind: 'discarded'; message: string };

/** A best-of-N run (docs/best-of.md#the-record). */
export interface BestOfRecord {
  id: number;
  task: string;
  /** The branch the candidates started from and the pick is merged into. */
  base: string;
  verify?: string | undefined;
  started_at: string;
  candidates: BestOfCandidate[];
  verdict?: BestOfVerdict | undefined;
  outcome: BestOfOutcome;
  /** What was removed of each candidate (worktree, branch), in huddle's words. */
  discarded: string[];
}

const candidateSchema = z.object({
  name: z.string(),
  branch: z.string(),
  agent: z.string(),
  model: z.string().optional(),
  task_id: z.number(),
  state: z.enum(['running', 'completed', 'stopped']),
  error: z.string().optional(),
  files: z.object({ changed: z.number(), added: z.number(), removed: z.number(), list: z.array(z.string()) }),
  commits: z.number(),
  verify: z.object({ ok: z.boolean(), summary: z.string() }).optional(),
  cost_usd: z.number(),
  model_calls: z.number(),
  wall_ms: z.number(),
  verdict: z.object({ score: z.number(), notes: z.string() }).optional(),
});

/** What .team/best-of/<id>.json must hold to be picked from (a file edited by hand is checked, not trusted). */
const bestOfRecordSchema: z.ZodType<BestOfRecord> = z.object({
  id: z.number().int().positive(),
  task: z.string(),
  base: z.string(),
  verify: z.string().optional(),
  started_at: z.string(),
  candidates: z.array(candidateSchema),
  verdict: z.object({ by: z.string(), pick: z.string().nullable(), reason: z.string(), cost_usd: z.number() }).optional(),
  outcome: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('running'),
      by: z.object({ pid: z.number(), start: z.string().optional(), host: z.string() }).optional(),
    }),
    z.object({ kind: z.literal('waiting') }),
    z.object({ kind: z.literal('merged'), candidate: z.string(), message: z.string() }),
    z.object({ kind: z.literal('pull_request'), candidate: z.string(), message: z.string() }),
    z.object({ kind: z.literal('discarded'), message: z.string() }),
  ]),
  discarded: z.array(z.string()),
});

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
  return orphanedAsInterrupted(parsed.data);
}

/** What a candidate still at work when its run's process died is marked with. */
export const KILLED_RUN = 'interrupted: its run was killed';

/**
 * A record left `running` by a process that no longer runs (killed outright, SIGKILL or a crash, so it never
 * wrote that it stopped) is read as a run interrupted: its candidates still at work are stopped, and it waits
 * for a pick. A run on another host (its process cannot be asked from here) is left as it says.
 */
function orphanedAsInterrupted(record: BestOfRecord): BestOfRecord {
  const outcome = record.outcome;
  if (outcome.kind !== 'running' || !outcome.by || liveness(outcome.by) !== 'dead') return record;
  for (const candidate of record.candidates) {
    if (candidate.state !== 'running') continue;
    candidate.state = 'stopped';
    candidate.error = KILLED_RUN;
  }
  record.outcome = { kind: 'waiting' };
  return record;
}

/** A candidate by its name, or its number k (`2` is `best<id>-2`). */
export function findCandidate(record: BestOfRecord, which: string): BestOfCandidate | undefined {
  const name = /^\d+$/.test(which) ? candidateName(record.id, Number(which)) : which;
  return record.candidates.find((candidate) => candidate.name === name);
}
