// The person's pick of a best-of-N run (docs/best-of.md#picking): the chosen candidate's branch merged
// into the branch the run started from, without touching the person's uncommitted work
// (runtime/workspace/merge-keeping-work.ts), then every candidate's worktree and branch removed. Or no
// pick: all of them removed. Needs no session: `huddle pick` runs it on the record the run left.
import { loadBestOf, saveBestOf, findCandidate, type BestOfRecord } from '../runtime/record/best-of-record.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import { mergeKeepingWork } from '../runtime/workspace/merge-keeping-work.js';
import { removeWorktree, worktreeStatus } from '../runtime/workspace/worktree.js';

/** `auto`: the reviewer's verdict; `none`: discard every candidate; else a candidate's name or number. */
export type PickChoice = 'auto' | 'none' | string;

/** The pick carried out; returns the record as it now is. Throws an Error with one line saying why not. */
export async function pickBestOf(root: string, choice: PickChoice, id?: number): Promise<BestOfRecord> {
  const record = loadBestOf(root, id);
  if (record.outcome.kind === 'running') throw new Error(`best-of #${record.id} is still running; pick once its comparison is shown`);
  if (record.outcome.kind !== 'waiting') throw new Error(`best-of #${record.id} is over: ${record.outcome.message}`);
  let name: string | undefined;
  if (choice === 'auto') {
    if (!record.verdict)
      throw new Error(
        `best-of #${record.id} has no reviewer's verdict to go by; pick a candidate by name (${record.candidates.map((c) => c.name).join(', ')})`,
      );
    name = record.verdict.pick ?? undefined;
  } else if (choice !== 'none') {
    const candidate = findCandidate(record, choice);
    if (!candidate) throw new Error(`best-of #${record.id} has no candidate '${choice}' (its candidates: ${record.candidates.map((c) => c.name).join(', ')})`);
    name = candidate.name;
  }
  if (name) {
    const candidate = findCandidate(record, name)!;
    await worktreeStatus(root, name);
    const current = (await runGit(root, ['symbolic-ref', '-q', '--short', 'HEAD'], { pin: pinRepository(root) })).stdout.trim();
    if (current !== record.base)
      throw new Error(
        `the workspace is on ${current || 'a detached HEAD'}, not ${record.base} where best-of #${record.id} started; git switch ${record.base}, then pick again`,
      );
    if (candidate.files.changed === 0 && candidate.commits === 0) throw new Error(`${name} changed nothing; there is nothing to merge (pick another, or none)`);
    const merged = await mergeKeepingWork(
      root,
      candidate.branch,
      `Merge ${candidate.branch}: the pick of best-of-${record.candidates.length} #${record.id}\n\n${record.task}`,
    );
    record.outcome = { kind: 'merged', candidate: name, message: `merged ${candidate.branch} into ${merged.into} (${merged.commit})` };
  } else {
    record.outcome = { kind: 'discarded', message: `no candidate merged; all ${record.candidates.length} discarded` };
  }
  // The pick is in (or none was wanted): the record says so before anything is removed.
  saveBestOf(root, record);
  record.discarded = await discardAll(root, record);
  saveBestOf(root, record);
  return record;
}

/** Every candidate's worktree and branch removed (the picked one is merged by now); a line each. */
async function discardAll(root: string, record: BestOfRecord): Promise<string[]> {
  const lines: string[] = [];
  for (const candidate of record.candidates) {
    try {
      lines.push(`${candidate.name}: ${await removeWorktree(root, candidate.name, { force: true })}`);
    } catch (error) {
      lines.push(`${candidate.name}: not removed: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return lines;
}
