// The person's pick of a best-of-N run (docs/best-of.md#picking): the chosen candidate's branch merged
// into the branch the run started from, without touching the person's uncommitted work
// (runtime/workspace/merge-keeping-work.ts), then every candidate's worktree and branch removed. Or, with
// a remote, the chosen branch pushed and opened as a pull request by huddle's own process (as a backlog
// run ships: runtime/forge), the others removed. Or no pick: all of them removed. Needs no session:
// `huddle pick` runs it on the record the run left.
import { loadBestOf, saveBestOf, findCandidate, type BestOfRecord } from '../runtime/record/best-of-record.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import { mergeKeepingWork } from '../runtime/workspace/merge-keeping-work.js';
import { removeWorktree, worktreeStatus } from '../runtime/workspace/worktree.js';
import type { Octokit } from '@octokit/rest';
import type { GitHubRepo } from '../runtime/forge/github-repo.js';
import { pushBranch } from '../runtime/forge/push.js';
import { comparisonLines } from '../runtime/record/best-of-lines.js';
import { scrub } from '../runtime/secrets.js';
import { commitLeftovers } from './best-of-run.js';

/** Where a pick goes instead of a merge: the remote its branch is pushed to, and GitHub for its pull request. */
export interface PickShipping {
  remote: { name: string; url: string };
  /** Absent: the branch is pushed, no pull request opened (not a GitHub remote). */
  github?: { client: Octokit; repo: GitHubRepo } | undefined;
  /** For an https remote (registered as a secret; no agent ever holds it). */
  token?: string | undefined;
}

/** `auto`: the reviewer's verdict; `none`: discard every candidate; else a candidate's name or number. */
export type PickChoice = 'auto' | 'none' | string;

/** The pick carried out; returns the record as it now is. Throws an Error with one line saying why not. */
export async function pickBestOf(root: string, choice: PickChoice, id?: number, ship?: PickShipping): Promise<BestOfRecord> {
  const record = loadBestOf(root, id);
  if (record.outcome.kind === 'running') throw new Error(`best-of #${record.id} is still running; pick once its comparison is shown`);
  if (record.outcome.kind !== 'waiting') throw new Error(`best-of #${record.id} is over: ${record.outcome.message}`);
  let name: string | undefined;
  if (choice === 'auto') {
    if (!record.verdict)
      throw new Error(
        `best-of #${record.id} has no reviewer's verdict to go by; pick a candidate by name (${record.candidates.map((c) => c.name).join(', ')})`,
      );
    // A reviewer that picked none does not decide to discard them all: the person says `none`.
    if (!record.verdict.pick)
      throw new Error(
        `best-of #${record.id}: the reviewer picked none; pick a candidate by name (${record.candidates.map((c) => c.name).join(', ')}), or none to discard them all`,
      );
    name = record.verdict.pick;
  } else if (choice !== 'none') {
    const candidate = findCandidate(record, choice);
    if (!candidate) throw new Error(`best-of #${record.id} has no candidate '${choice}' (its candidates: ${record.candidates.map((c) => c.name).join(', ')})`);
    name = candidate.name;
  }
  if (name) {
    const candidate = findCandidate(record, name)!;
    await worktreeStatus(root, name);
    // A run cut short never settled its candidates: what the pick left uncommitted becomes a commit of its
    // branch now, so the merge (and the worktree's removal after it) loses none of it.
    await commitLeftovers(root, name);
    const current = (await runGit(root, ['symbolic-ref', '-q', '--short', 'HEAD'], { pin: pinRepository(root) })).stdout.trim();
    if (current !== record.base)
      throw new Error(
        `the workspace is on ${current || 'a detached HEAD'}, not ${record.base} where best-of #${record.id} started; git switch ${record.base}, then pick again`,
      );
    const ahead = await runGit(root, ['rev-list', '--count', `${record.base}..refs/heads/${candidate.branch}`], { pin: pinRepository(root) });
    if (ahead.code === 0 && Number(ahead.stdout.trim()) === 0) throw new Error(`${name} changed nothing; there is nothing to merge (pick another, or none)`);
    if (ship) {
      record.outcome = { kind: 'pull_request', candidate: name, message: await shipPick(root, record, candidate.branch, ship) };
      saveBestOf(root, record);
      record.discarded = await discardAll(root, record, name);
      saveBestOf(root, record);
      return record;
    }
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

/** The pick's branch pushed, and its pull request opened into the base; one line saying what was done. */
async function shipPick(root: string, record: BestOfRecord, branch: string, ship: PickShipping): Promise<string> {
  await pushBranch(root, ship.remote.url, branch, ship.token);
  const pushed = `pushed ${branch} to ${ship.remote.name}`;
  if (!ship.github) return `${pushed} (no GitHub repository for a pull request); ${branch} is kept`;
  const body = [
    `The pick of best-of-${record.candidates.length} #${record.id}.`,
    '',
    '```',
    ...comparisonLines(record),
    '```',
    '',
    '_Opened by huddle for its candidate; the candidate never held a credential._',
  ].join('\n');
  // Octokit is loaded for a pull request only (the console and a merge never need it).
  const { openPullRequest } = await import('../runtime/forge/github.js');
  const pr = await openPullRequest(ship.github.client, {
    ...ship.github.repo,
    head: branch,
    base: record.base,
    title: scrub(record.task.split('\n')[0]!.slice(0, 120)),
    body: scrub(body),
  });
  return `${pushed}; opened ${pr.url} (into ${record.base}); ${branch} is kept for it`;
}

/** Every candidate's worktree and branch removed (the picked one is merged by now), but `keep`'s; a line each. */
async function discardAll(root: string, record: BestOfRecord, keep?: string): Promise<string[]> {
  const lines: string[] = [];
  for (const candidate of record.candidates) {
    if (candidate.name === keep) continue;
    try {
      lines.push(`${candidate.name}: ${await removeWorktree(root, candidate.name, { force: true })}`);
    } catch (error) {
      lines.push(`${candidate.name}: not removed: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return lines;
}
