// A best-of-N run (docs/best-of.md): one task given to N candidates at once, each a teammate in its own
// worktree and branch (huddle/best<id>-<k>, from the workspace's branch), with its own model or agent
// CLI. When each one ends, huddle commits what it left uncommitted, runs the verify command in its
// worktree and counts what it changed and spent; then a reviewer reads the N diffs and gives its
// verdict through best_of_verdict. The comparison is kept in .team/best-of/<id>.json, waiting for the
// person's pick (session/best-of-pick.ts).
import path from 'node:path';
import { childEnvironment } from '../runtime/process/spawn.js';
import { currentProcess } from '../runtime/fs/process-identity.js';
import { candidateName, nextBestOfId, reviewerName, saveBestOf, type BestOfCandidate, type BestOfRecord } from '../runtime/record/best-of-record.js';
import { branchChanges } from '../runtime/record/git-changes.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import { runVerify } from '../runtime/verify/verify.js';
import { LEAD_NAME, PERSON_SENDER } from '../runtime/vocabulary.js';
import { gitInCheckout } from '../runtime/workspace/git-run.js';
import { worktreeDiff, worktreeGitDir, worktreePath, worktreeStatus } from '../runtime/workspace/worktree.js';
import type { TeammateKind } from '../agents/external/launch.js';
import type { VerdictReceiver } from '../agents/team-context.js';
import type { TeamSession } from './team-session.js';

/** What the reviewer reads of each candidate's diff at most (it can run git diff for the rest). */
const REVIEW_DIFF_CHARS = 12_000;

export interface BestOfOptions {
  task: string;
  n: number;
  /** Models, one per candidate in turn (cycled); none: the run's model. */
  models?: string[] | undefined;
  /** Agents, one per candidate in turn (cycled): huddle's own loop, or an agent CLI. */
  agents?: TeammateKind[] | undefined;
  /** Run in each candidate's worktree once it ends; its result is a column of the comparison. */
  verify?: string | undefined;
  /** The reviewer's model (default: the run's). */
  reviewerModel?: string | undefined;
  /** One line per step, for the person. */
  say?: (line: string) => void;
}

export class BestOfRun {
  readonly #session: TeamSession;
  readonly #options: BestOfOptions;
  readonly #listeners = new Set<(record: BestOfRecord) => void>();
  #record: BestOfRecord | undefined;

  constructor(session: TeamSession, options: BestOfOptions) {
    if (!Number.isInteger(options.n) || options.n < 2 || options.n > 8) throw new Error(`best-of takes 2 to 8 candidates, not ${options.n}`);
    this.#session = session;
    this.#options = options;
  }

  get #root(): string {
    return this.#session.workspace.root;
  }

  /** The comparison as it stands (undefined before the run has started). */
  get record(): BestOfRecord | undefined {
    return this.#record;
  }

  /** Hears the comparison every time a candidate moves on; returns the unsubscribe. */
  onChange(listener: (record: BestOfRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  #changed(): void {
    const record = this.#record!;
    saveBestOf(this.#root, record);
    for (const listener of this.#listeners) listener(record);
  }

  #say(line: string): void {
    this.#options.say?.(this.#session.scrub(line));
  }

  /** Runs the candidates and the reviewer; resolves with the comparison, waiting for the person's pick. */
  async run(): Promise<BestOfRecord> {
    const root = this.#root;
    const pin = pinRepository(root);
    const branch = pin ? await runGit(root, ['symbolic-ref', '-q', '--short', 'HEAD'], { pin }) : undefined;
    if (!pin || !branch) throw new Error(`${root} is not a git repository with a commit: best-of gives each candidate a branch (git init && git commit first)`);
    if (branch.code !== 0) throw new Error('the workspace is not on a branch (detached HEAD): check out the branch the pick should be merged into');
    const base = branch.stdout.trim();
    const baseCommit = (await runGit(root, ['rev-parse', 'HEAD'], { pin })).stdout.trim();
    const { n, task } = this.#options;
    const id = nextBestOfId(root);
    this.#record = {
      id,
      task,
      base,
      ...(this.#options.verify ? { verify: this.#options.verify } : {}),
      started_at: new Date().toISOString(),
      candidates: [],
      outcome: { kind: 'running', by: currentProcess() },
      discarded: [],
    };
    for (let k = 1; k <= n; k++) {
      const agent = this.#options.agents?.length ? this.#options.agents[(k - 1) % this.#options.agents.length]! : 'huddle';
      const model = this.#options.models?.length ? this.#options.models[(k - 1) % this.#options.models.length] : undefined;
      const name = candidateName(id, k);
      // The verify command gates the task too: a candidate hears why its work fails while it can still fix it.
      const made = await this.#session.createTask(
        {
          subject: `best-of-${n} #${id}, candidate ${k}: ${task.split('\n')[0]!.slice(0, 80)}`,
          description: task,
          owner: name,
          ...(this.#options.verify ? { verify: this.#options.verify } : {}),
        },
        LEAD_NAME,
      );
      await this.#session.updateTask(made.id, { status: 'in_progress', owner: name }, LEAD_NAME);
      this.#record.candidates.push({
        name,
        branch: `huddle/${name}`,
        agent,
        ...(model ? { model } : {}),
        task_id: made.id,
        state: 'running',
        files: { changed: 0, added: 0, removed: 0, list: [] },
        commits: 0,
        cost_usd: 0,
        model_calls: 0,
        wall_ms: 0,
      });
    }
    this.#changed();
    this.#say(`best-of-${n} #${id}: ${this.#record.candidates.map((c) => `${c.name} (${[c.agent, c.model].filter(Boolean).join(' ')})`).join(', ')}`);
    await Promise.all(this.#record.candidates.map((candidate) => this.#runCandidate(candidate, baseCommit)));
    await this.#review();
    this.#record.outcome = { kind: 'waiting' };
    this.#changed();
    return this.#record;
  }

  /**
   * The run cut short (interrupted, failed): candidates still at work are marked stopped and the comparison
   * waits for a pick as it is, so that `huddle pick` can merge one, or remove them all with `none`.
   */
  abandon(why: string): void {
    const record = this.#record;
    if (!record || record.outcome.kind !== 'running') return;
    for (const candidate of record.candidates) {
      if (candidate.state !== 'running') continue;
      candidate.state = 'stopped';
      candidate.error = why;
    }
    record.outcome = { kind: 'waiting' };
    this.#changed();
  }

  async #runCandidate(candidate: BestOfCandidate, baseCommit: string): Promise<void> {
    const started = Date.now();
    const ended = this.#untilEnded(candidate.name, candidate.task_id);
    try {
      await this.#session.spawn(candidate.name, 'coder', this.#candidatePrompt(candidate), PERSON_SENDER, {
        worktree: true,
        ...(candidate.agent !== 'huddle' ? { agent: candidate.agent as TeammateKind } : {}),
        ...(candidate.model ? { model: candidate.model } : {}),
      });
      const end = await ended.promise;
      candidate.state = end.state;
      if (end.error) candidate.error = end.error;
    } catch (error) {
      ended.cancel();
      candidate.state = 'stopped';
      candidate.error = (error as Error).message.split('\n')[0];
    }
    // Done or not, it works no more: what it made is compared as it is.
    // An agent that stopped already has nothing to stop.
    await this.#session.shutdown(candidate.name, { now: true }).catch(() => undefined);
    candidate.wall_ms = Date.now() - started;
    await this.#settle(candidate, baseCommit);
    this.#say(`${candidate.name} ${candidate.state}: ${candidate.files.changed} file(s)${candidate.verify ? `, ${candidate.verify.summary}` : ''}`);
    this.#changed();
  }

  /** Its leftovers committed, its branch's changes counted, its verify run, its spend read. */
  async #settle(candidate: BestOfCandidate, baseCommit: string): Promise<void> {
    const root = this.#root;
    const dir = worktreePath(root, candidate.name);
    try {
      await commitLeftovers(root, candidate.name);
      await worktreeStatus(root, candidate.name);
      const changes = await branchChanges(root, baseCommit, `refs/heads/${candidate.branch}`);
      if (changes) {
        candidate.files = { changed: changes.files.length, added: changes.added, removed: changes.removed, list: changes.files.map((f) => f.path) };
        candidate.commits = changes.commits.length;
      }
    } catch (error) {
      candidate.error ??= `its branch could not be read: ${(error as Error).message.split('\n')[0]}`;
    }
    if (this.#options.verify) {
      const prefix = path.relative((await runGit(root, ['rev-parse', '--show-toplevel'], { pin: pinRepository(root) })).stdout.trim(), root);
      // In the sandbox, like the completion gate's run of it: the command runs what the candidate wrote.
      const spawn = this.#session.sandboxSpawn();
      const result = await runVerify({ command: this.#options.verify, cwd: path.join(dir, prefix), env: childEnvironment(), ...(spawn ? { spawn } : {}) });
      candidate.verify = { ok: result.ok, summary: result.summary };
    }
    const spend = this.#session.spend().find((agent) => agent.name === candidate.name);
    candidate.cost_usd = spend?.costUsd ?? 0;
    candidate.model_calls = spend?.modelCalls ?? 0;
  }

  /** Resolves once the candidate's task is completed, or it stops or goes idle without completing it. */
  #untilEnded(name: string, taskId: number): { promise: Promise<{ state: 'completed' | 'stopped'; error?: string }>; cancel: () => void } {
    let cancel = () => undefined as void;
    const promise = new Promise<{ state: 'completed' | 'stopped'; error?: string }>((resolve) => {
      let over = false;
      const finish = (end: { state: 'completed' | 'stopped'; error?: string }) => {
        if (over) return;
        over = true;
        offTasks();
        offEvents();
        resolve(end);
      };
      cancel = () => finish({ state: 'stopped' });
      const completed = async () => (await this.#session.tasks()).find((t) => t.id === taskId)?.status === 'completed';
      const offTasks = this.#session.onTasksChanged(() => {
        // The next board change looks again.
        void completed().then(
          (done) => done && finish({ state: 'completed' }),
          () => undefined,
        );
      });
      const offEvents = this.#session.subscribe((event) => {
        if (event.type !== 'status' || event.agent !== name) return;
        if (event.status !== 'idle' && event.status !== 'shutdown' && event.status !== 'failed') return;
        const error = event.status === 'failed' ? (event.error ?? 'failed') : undefined;
        void completed().then(
          (done) => finish(done ? { state: 'completed' } : { state: 'stopped', ...(error ? { error } : {}) }),
          () => finish({ state: 'stopped', ...(error ? { error } : {}) }),
        );
      });
    });
    return { promise, cancel: () => cancel() };
  }

  #candidatePrompt(candidate: BestOfCandidate): string {
    const verify = this.#options.verify ? ` The task's check is \`${this.#options.verify}\`: run it before you finish.` : '';
    return [
      `You are one of ${this.#options.n} candidates given the same task, each in its own worktree; the person keeps the best one. ` +
        `Task #${candidate.task_id} is yours and in progress. You are on branch ${candidate.branch}, made from ${this.#record!.base}.${verify}`,
      '',
      this.#options.task,
      '',
      `Make the change and commit it (git add -A && git commit -m "..."), then task_update {"task_id": ${candidate.task_id}, "status": "completed"} and end your turn. Work alone: the other candidates are not told about you.`,
    ].join('\n');
  }

  /** The reviewer reads the diffs and gives its verdict through best_of_verdict. */
  async #review(): Promise<void> {
    const record = this.#record!;
    if (record.candidates.every((c) => c.files.changed === 0)) {
      this.#say('no candidate changed anything: nothing to review');
      return;
    }
    const name = reviewerName(record.id);
    let heard: (() => void) | undefined;
    const verdictIn = new Promise<void>((resolve) => (heard = resolve));
    const receiver: VerdictReceiver = {
      accepts: (agent) => agent === name,
      record: (verdict, by) => {
        const names = record.candidates.map((c) => c.name);
        const unknown = [verdict.pick, ...verdict.candidates.map((c) => c.name)].filter((n) => n !== 'none' && !names.includes(n));
        if (unknown.length) return `unknown candidate ${unknown.join(', ')}: the candidates are ${names.join(', ')}`;
        for (const said of verdict.candidates) {
          const candidate = record.candidates.find((c) => c.name === said.name)!;
          candidate.verdict = { score: said.score, notes: said.notes };
        }
        record.verdict = { by, pick: verdict.pick === 'none' ? null : verdict.pick, reason: verdict.reason, cost_usd: 0 };
        heard?.();
        return undefined;
      },
    };
    this.#session.enableVerdicts(receiver);
    const ended = this.#untilEnded(name, -1);
    try {
      this.#say(`${name} reviews the ${record.candidates.length} candidates`);
      await this.#session.spawn(
        name,
        'reviewer',
        await this.#reviewPrompt(),
        PERSON_SENDER,
        this.#options.reviewerModel ? { model: this.#options.reviewerModel } : {},
      );
      await Promise.race([verdictIn, ended.promise]);
    } catch (error) {
      this.#say(`the reviewer could not run: ${(error as Error).message.split('\n')[0]}`);
    } finally {
      ended.cancel();
      this.#session.enableVerdicts(undefined);
      // Its verdict is in (or it stopped): it has nothing more to do.
      await this.#session.shutdown(name, { now: true }).catch(() => undefined);
    }
    if (record.verdict) record.verdict.cost_usd = this.#session.spend().find((agent) => agent.name === name)?.costUsd ?? 0;
    else this.#say(`${name} gave no verdict`);
  }

  async #reviewPrompt(): Promise<string> {
    const record = this.#record!;
    const parts = [
      `Compare ${record.candidates.length} candidates that each did the same task on their own branch from ${record.base}, and give your verdict with best_of_verdict: a score and notes for every candidate, and the one to merge ('none' if none should be merged). Weigh correctness first (the verify result counts), then how small and clear the change is. Call the tool once, then end your turn.`,
      '',
      'The task:',
      record.task,
    ];
    for (const candidate of record.candidates) {
      const diff = await worktreeDiff(this.#root, candidate.name).then(
        (d) =>
          d.text.length > REVIEW_DIFF_CHARS ? `${d.text.slice(0, REVIEW_DIFF_CHARS)}\n[cut: git diff ${record.base}...${candidate.branch} shows all]` : d.text,
        (error: Error) => `(its diff could not be read: ${error.message})`,
      );
      parts.push(
        '',
        `## ${candidate.name} (${[candidate.agent, candidate.model].filter(Boolean).join(' ')}), ${candidate.state}${candidate.error ? `: ${candidate.error}` : ''}`,
        `${candidate.files.changed} file(s) +${candidate.files.added} -${candidate.files.removed}; ${candidate.verify ? candidate.verify.summary : 'no verify command'}`,
        '```diff',
        diff,
        '```',
      );
    }
    return parts.join('\n');
  }
}

/** What a candidate did not commit is committed for it (in the sandbox's git), so that its branch is all of its work. */
export async function commitLeftovers(root: string, name: string): Promise<void> {
  const dir = worktreePath(root, name);
  const common = await runGit(root, ['rev-parse', '--path-format=absolute', '--git-common-dir'], { pin: pinRepository(root) });
  const access = { writable: [dir, worktreeGitDir(root, name)], readable: [common.stdout.trim()] };
  const status = await gitInCheckout(dir, ['status', '--porcelain', '--untracked-files=all'], access);
  if (status.code !== 0 || !status.stdout.trim()) return;
  await gitInCheckout(dir, ['add', '-A'], access);
  const identity = ['-c', 'user.name=huddle', '-c', 'user.email=huddle@localhost'];
  await gitInCheckout(dir, [...identity, 'commit', '-q', '--no-verify', '-m', `${name}: work it left uncommitted (committed by huddle)`], access);
}
