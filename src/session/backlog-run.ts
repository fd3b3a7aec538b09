// A backlog run (docs/backlog.md): one task per issue on the board, one teammate in its own worktree
// and branch per issue (`huddle/issue-<n>-<slug>`, from the base, or stacked on the branch of the
// issue it depends on, made only once that one is done), one reviewer for them all, and the lead's
// open_pull_request carried out here, in huddle's process: push with huddle's git, the pull
// request through Octokit. What the run did per issue becomes the record's `backlog`.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Octokit } from '@octokit/rest';
import type { Shipper } from '../agents/team-context.js';
import { issueBranch, issueSlugName, type Issue } from '../runtime/backlog/issue.js';
import type { BacklogIssueRecord } from '../runtime/record/backlog-record.js';
import type { IssueProgress } from '../runtime/backlog/issue-phase.js';
import type { Playbook } from '../runtime/backlog/playbook.js';
import { findingLine, taskFindings } from '../runtime/store/board/findings.js';
import { branchChanges } from '../runtime/record/git-changes.js';
import { checksOf, findPullRequest, openPullRequest, type PullRequest } from '../runtime/forge/github.js';
import type { GitHubRepo } from '../runtime/forge/github-repo.js';
import { pushBranch } from '../runtime/forge/push.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import type { Task } from '../runtime/store/board.js';
import { HUDDLE_SENDER, LEAD_NAME } from '../runtime/vocabulary.js';
import { worktreePath, worktreeStatus } from '../runtime/workspace/worktree.js';
import type { TeamSession } from './team-session.js';

export interface BacklogRunOptions {
  /** In dependency order (runtime/backlog/issue.ts, orderIssues). */
  issues: Issue[];
  /** The branch the issues' branches start from and their pull requests go into. */
  base: string;
  /** Where the branches are pushed: the person's `origin` URL; undefined: nothing is pushed. */
  remote?: { name: string; url: string } | undefined;
  /** Where pull requests are opened; undefined: `huddle merge` merges the reviewed branches. */
  github?: { client: Octokit; repo: GitHubRepo } | undefined;
  /** For an https remote (registered as a secret; never given to an agent). */
  token?: string | undefined;
  /** A command every issue's task must pass before it is completed (over the playbook's). */
  verify?: string | undefined;
  /** Teammates send a plan for approval before they build (the lead, or the person, approves): the playbook's plan phase, unless --plan-approval off. */
  planFirst: boolean;
  /** How often an open pull request's check runs are read until they finish (0: not watched). */
  checksPollMs?: number;
  /** The phases each issue goes through (docs/playbooks.md). */
  playbook: Playbook;
}

interface IssueState {
  issue: Issue;
  name: string;
  branch: string;
  base: string;
  taskId: number;
  startedAt?: number;
  reviewedAt?: number;
  shippedAt?: number;
  pushed?: { remote: string; commit: string };
  pr?: PullRequest;
  verify: Array<{ ok: boolean; summary: string }>;
  /** The last word of the pull request's check runs. */
  checks?: { state: 'pending' | 'passed' | 'failed'; failed: string[] };
  watching?: boolean;
  /** The teammate's plan: sent and not answered yet, approved, sent back (from the bus's plan messages). */
  plan?: 'waiting' | 'approved' | 'revising';
  /** Check runs that failed and were sent back to the builder. */
  checkFailures: number;
  /** A retry cap of the playbook was reached: the issue is given up. */
  failed?: string;
  /** The plan it sent to the person (the needs-you queue: not on the bus unless the person edits it). */
  planAsked?: string;
  /** Its `explore` calls under way (their ids): its explorers are at work. */
  exploring: Set<string>;
  /** What the runs before a --resume spent on it and took (their record's figures). */
  carried?: { cost_usd: number; model_calls: number; wall_ms: number };
}

const REVIEWER = 'reviewer';
/** How long after a pull request is opened its check runs may take to be listed, in a repository that runs CI. */
const CHECKS_APPEAR_MS = 5 * 60_000;

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** `Issue #N: TITLE`: how a backlog task is named, and found again on --resume. */
function taskSubject(issue: Issue): string {
  return `Issue #${issue.number}: ${issue.title}`;
}

export class BacklogRun implements Shipper {
  readonly #session: TeamSession;
  readonly #options: BacklogRunOptions;
  readonly #states = new Map<number, IssueState>();
  readonly #byTask = new Map<number, IssueState>();
  #stops: Array<() => void> = [];
  /** Set by close(): no issue starts any more. */
  #closed = false;
  /** Teammates being started: shipping waits for them, so the lead's turn outlasts the gap before they work. */
  #starting: Promise<void> = Promise.resolve();

  constructor(session: TeamSession, options: BacklogRunOptions) {
    this.#session = session;
    this.#options = options;
  }

  get #root(): string {
    return this.#session.workspace.root;
  }

  /** The role of every issue's builder (the playbook's implement phase): whose plan approver the issues have. */
  get builderRole(): string {
    return this.#playbook.builder.role;
  }

  get #playbook(): Playbook {
    return this.#options.playbook;
  }

  /** The verify gate's command: the run's --verify, else the playbook's; none when the playbook turns the gate off. */
  get #verifyCommand(): string | undefined {
    return this.#playbook.verify ? (this.#options.verify ?? this.#playbook.verify.command) : undefined;
  }

  /** Tasks, the reviewer and the first teammates; returns the lead's prompt. */
  async start(): Promise<string> {
    const { board, enableShipping } = this.#session.backlogParts();
    enableShipping(this);
    const existing = new Map((await board.list()).map((task) => [task.subject, task]));
    for (const issue of this.#options.issues) await this.#admit(issue, existing);
    if (existing.size > 0) await this.#seedFromEarlierRuns();
    this.#stops.push(
      this.#session.subscribe((event) => {
        if (event.type === 'message_sent') return this.#notePlan(event);
        if ((event.type === 'tool_call' || event.type === 'tool_result') && event.name === 'explore' && event.subagent === undefined) {
          const exploring = [...this.#states.values()].find((s) => s.name === event.agent)?.exploring;
          if (event.type === 'tool_call') exploring?.add(event.id);
          else exploring?.delete(event.id);
          return;
        }
        if (event.type === 'approval_requested' && event.tool === 'plan') {
          // A plan for the person goes to the needs-you queue, not the lead's inbox.
          this.#notePlan({ from: event.agent, to: LEAD_NAME, message_type: 'plan_approval_request', id: event.id });
          const asking = [...this.#states.values()].find((s) => s.name === event.agent);
          if (asking && event.detail) asking.planAsked = event.detail;
          return;
        }
        if (event.type !== 'verify') return;
        const state = this.#byTask.get(event.task_id);
        if (!state) return;
        state.verify.push({ ok: event.ok, summary: event.summary });
        const cap = this.#playbook.verify?.retries;
        const failures = state.verify.filter((run) => !run.ok).length;
        if (!event.ok && cap !== undefined && failures > cap && !state.failed)
          void this.#giveUp(state, `its verify command failed ${plural(failures, 'time')} (the playbook allows ${plural(cap, 'retry', 'retries')})`);
      }),
      board.onChange((change) => {
        if (change.source !== 'local') return;
        // An idle teammate leaves after timeouts.idleMs: a task coming to review brings the reviewer back.
        if (change.action === 'review_requested' && this.#byTask.has(change.task.id) && this.#playbook.reviewer) {
          this.#starting = this.#starting.then(() => this.#ensureReviewer());
          return;
        }
        if (change.action !== 'review_approved' && change.action !== 'completed') return;
        const state = this.#byTask.get(change.task.id);
        if (!state || state.reviewedAt !== undefined || change.task.status !== 'completed') return;
        state.reviewedAt = Date.now();
        if (this.#playbook.ship && !state.failed) void this.#tellReviewed(state);
        this.#starting = this.#starting.then(() => this.#startReady());
      }),
    );
    await this.#ensureReviewer();
    this.#starting = this.#startReady();
    await this.#starting;
    // A resumed run: an issue approved before it stopped has its pull request found again, or is shipped now.
    for (const state of this.#states.values()) {
      if (state.reviewedAt === undefined || !this.#playbook.ship) continue;
      const { github } = this.#options;
      // GitHub not answering: the lead is told to ship it, which finds the pull request or opens it.
      const pr = github ? await findPullRequest(github.client, github.repo, state.branch).catch(() => undefined) : undefined;
      if (pr) {
        state.pr = pr;
        state.shippedAt = Date.now();
        // Its checks were being read when the run stopped, or not yet: they are read again.
        if (github && state.checks?.state !== 'passed') this.#watchChecks(state, github);
      } else await this.#tellReviewed(state);
    }
    return this.#leadPrompt();
  }

  /**
   * A resumed run: what the run before it learned of each issue and no store keeps (its verify runs,
   * the push, the checks) comes from that run's record, so the record at the end lists it still.
   */
  async #seedFromEarlierRuns(): Promise<void> {
    // Verify runs from the event record, which has each one before the task moved on: the stopped run's own
    // record was written as it stopped and can miss the run of a task completed in that moment.
    // A record that cannot be read leaves the list to what this run sees itself.
    for (const { events } of await this.#session.earlierEvents().catch(() => [])) {
      for (const event of events) {
        if (event.type !== 'verify') continue;
        this.#byTask.get(Number(event['task_id']))?.verify.push({ ok: event['ok'] === true, summary: String(event['summary'] ?? '') });
      }
    }
    this.#seedFromLastRecord();
  }

  /** What only the stopped run's record has: pushes, checks, and the figures it spent. */
  #seedFromLastRecord(): void {
    const logs = path.join(this.#session.workspace.teamDir, 'logs');
    let entries: BacklogIssueRecord[] | undefined;
    try {
      const last = readdirSync(logs)
        .filter((name) => /^run-.*\.json$/.test(name))
        .sort()
        .at(-1);
      if (last) entries = (JSON.parse(readFileSync(path.join(logs, last), 'utf8')) as { backlog?: BacklogIssueRecord[] }).backlog;
    } catch {
      // No record, or one that cannot be read: the resumed run's record starts from what it sees itself.
    }
    for (const entry of entries ?? []) {
      const state = this.#states.get(entry.issue);
      if (!state || state.branch !== entry.branch) continue;
      if (entry.pushed) state.pushed = entry.pushed;
      if (entry.checks) state.checks = entry.checks;
      state.carried = { cost_usd: entry.cost_usd ?? 0, model_calls: entry.model_calls ?? 0, wall_ms: entry.wall_ms ?? 0 };
    }
  }

  /** A retry cap was reached: the builder stops working on it, the lead is told, the record says why. */
  async #giveUp(state: IssueState, why: string): Promise<void> {
    state.failed = why;
    const { bus } = this.#session.backlogParts();
    const say = (to: string, content: string) =>
      bus.send({ type: 'message', from: HUDDLE_SENDER, to, content }).catch((error: Error) => this.#warn(`could not tell ${to}: ${error.message}`));
    this.#warn(`issue #${state.issue.number} is given up: ${why}`);
    await say(state.name, `Stop working on issue #${state.issue.number}: ${why}. Leave your branch as it is and go idle.`);
    await say(LEAD_NAME, `Issue #${state.issue.number} is given up: ${why}. Do not ship it; end with it listed as failed.`);
  }

  /** An issue's task (found again by subject on --resume, else made) and its place in the run. */
  async #admit(issue: Issue, existing: Map<string, Task>): Promise<IssueState> {
    const { board } = this.#session.backlogParts();
    const name = issueSlugName(issue);
    const deps = this.#depsOf(issue);
    // A resumed run finds its tasks again by subject: nothing is made twice.
    let task = existing.get(taskSubject(issue));
    if (!task) {
      task = await board.create(
        {
          subject: taskSubject(issue),
          description: this.#description(issue, name, deps),
          blockedBy: deps.map((dep) => dep.taskId),
          requires_review: this.#playbook.reviewer !== undefined,
          ...(this.#verifyCommand ? { verify: this.#verifyCommand } : {}),
          ...(this.#playbook.reviewer ? { review_domains: this.#playbook.reviewer.domains } : {}),
        },
        HUDDLE_SENDER,
      );
      task = await board.update(task.id, { owner: name }, HUDDLE_SENDER);
    }
    const state: IssueState = {
      issue,
      name,
      branch: issueBranch(issue),
      base: deps[0]?.branch ?? this.#options.base,
      taskId: task.id,
      verify: [],
      checkFailures: 0,
      exploring: new Set(),
    };
    if (task.status === 'completed') state.reviewedAt = Date.now();
    this.#states.set(issue.number, state);
    this.#byTask.set(task.id, state);
    return state;
  }

  /**
   * Issues taken in while the run goes on (huddle watch): each gets its task and, once its
   * dependencies are reviewed, its teammate; the lead is told. An issue already in the run is left as it is.
   */
  async add(issues: Issue[]): Promise<Issue[]> {
    const { board, bus } = this.#session.backlogParts();
    const existing = new Map((await board.list()).map((task) => [task.subject, task]));
    const added: IssueState[] = [];
    for (const issue of issues) if (!this.#states.has(issue.number)) added.push(await this.#admit(issue, existing));
    if (added.length === 0) return [];
    this.#starting = this.#starting.then(() => this.#startReady());
    await this.#starting;
    const lines = added.map((state) => `- #${state.issue.number} ${state.issue.title} (task #${state.taskId}, ${state.name}, ${state.branch})`);
    await bus
      .send({
        type: 'message',
        from: HUDDLE_SENDER,
        to: LEAD_NAME,
        content: `New backlog issue${added.length === 1 ? '' : 's'} taken in:\n${lines.join('\n')}`,
      })
      .catch((error: Error) => this.#warn(`could not tell the lead about new issues: ${error.message}`));
    return added.map((state) => state.issue);
  }

  /** The issue's dependencies in this run; one outside it (closed, or not picked yet by huddle watch) holds nothing up. */
  #depsOf(issue: Issue): IssueState[] {
    return issue.dependsOn.map((n) => this.#states.get(n)).filter((dep): dep is IssueState => dep !== undefined);
  }

  /** Numbers of the issues in the run. */
  get numbers(): number[] {
    return [...this.#states.keys()];
  }

  /** Where each issue is now, cheaply (no git): for the console's backlog view and huddle watch. */
  async snapshot(): Promise<IssueProgress[]> {
    const { board } = this.#session.backlogParts();
    // The board closing (the run ending) leaves the tasks' statuses unknown, not the issues unlisted.
    const tasks = new Map((await board.list().catch(() => [])).map((task) => [task.id, task]));
    const spend = new Map(this.#session.spend().map((agent) => [agent.name, agent.costUsd]));
    const failed = new Set(
      this.#session
        .members()
        .filter((member) => member.status === 'failed')
        .map((member) => member.name),
    );
    return [...this.#states.values()].map((state) => ({
      number: state.issue.number,
      title: state.issue.title,
      url: state.issue.url,
      name: state.name,
      branch: state.branch,
      base: state.base,
      taskId: state.taskId,
      taskStatus: tasks.get(state.taskId)?.status,
      started: state.startedAt !== undefined,
      shipped: state.shippedAt !== undefined,
      plan: state.plan,
      exploring: state.exploring.size > 0,
      // Given up by the playbook's retry caps, or the teammate failed.
      failed: state.failed !== undefined || failed.has(state.name),
      ...(state.pr ? { pullRequest: { number: state.pr.number, url: state.pr.url } } : {}),
      ...(state.checks ? { checks: { ...state.checks } } : {}),
      watchingChecks: state.watching ?? false,
      costUsd: spend.get(state.name) ?? 0,
    }));
  }

  /** A plan sent by an issue's teammate, or answered: whether it waits, was approved, or goes back to its author. */
  #notePlan(event: { from: string; to: string; message_type: string; id: string }): void {
    if (event.message_type === 'plan_approval_request') {
      const state = [...this.#states.values()].find((s) => s.name === event.from);
      if (state) state.plan = 'waiting';
      return;
    }
    if (event.message_type !== 'plan_approval_response') return;
    const state = [...this.#states.values()].find((s) => s.name === event.to);
    if (!state) return;
    // The answer's approve flag is in the message, not the event: read it from the teammate's inbox once.
    void this.#session
      .backlogParts()
      .bus.history(state.name)
      .then((messages) => {
        const answer = messages.find((m) => m.id === event.id);
        if (answer && state.plan === 'waiting') state.plan = answer.approve ? 'approved' : 'revising';
      })
      // An inbox that cannot be read leaves the plan as waiting until the next answer.
      .catch(() => undefined);
  }

  #tellReviewed(state: IssueState): Promise<unknown> {
    return this.#session
      .backlogParts()
      .bus.send({
        type: 'message',
        from: HUDDLE_SENDER,
        to: LEAD_NAME,
        content: `Issue #${state.issue.number} (task #${state.taskId}, ${state.branch}) is reviewed and approved: ship it with open_pull_request {"issue": ${state.issue.number}}.`,
      })
      .catch((error: Error) => this.#warn(`could not tell the lead that issue #${state.issue.number} is reviewed: ${error.message}`));
  }

  /** The one reviewer of the backlog's tasks (the playbook's review phase says on which model or CLI), started (again) unless it runs. */
  async #ensureReviewer(): Promise<void> {
    const reviewer = this.#playbook.reviewer;
    // After close() the team is stopping: its spawn would be refused, and that is not worth a warning.
    if (!reviewer || this.#closed || this.#session.isLive(REVIEWER)) return;
    const review = this.#playbook.phases.find((p) => p.phase === 'review');
    await this.#session
      .backlogParts()
      .spawn({
        name: REVIEWER,
        role: 'reviewer',
        ...(reviewer.model ? { model: reviewer.model } : {}),
        ...(reviewer.agent ? { agent: reviewer.agent } : {}),
        prompt:
          "Review the backlog's tasks as they come to review. Each is one issue, built on its own branch (huddle/issue-…): read the task, " +
          'look at `git diff BASE...BRANCH` and `git log BASE..BRANCH` in the workspace (the branch and its base are in the task), check the acceptance criteria, ' +
          `then review it in one pass per domain (${reviewer.domains.domains.join(', ')}), filing each finding with review_finding, ` +
          'and decide: review_approve, or review_request_changes with what must change (a blocking finding always means changes).' +
          (review?.instructions ? `\n\n${review.instructions}` : ''),
      })
      .catch((error: Error) => {
        if (!this.#closed) this.#warn(`could not start the reviewer: ${error.message}`);
      });
  }

  /** Each issue whose dependencies are reviewed gets its branch (on the base or the dependency's branch) and its teammate. */
  async #startReady(): Promise<void> {
    for (const state of this.#states.values()) {
      // The run is over (ended or stopped): what is not started yet waits for --resume.
      if (this.#closed) return;
      if (state.startedAt !== undefined || state.reviewedAt !== undefined) continue;
      const deps = this.#depsOf(state.issue);
      if (deps.some((dep) => dep.reviewedAt === undefined)) continue;
      state.startedAt = Date.now();
      // A resumed run brought the issue's teammate back already, in its worktree.
      if (this.#session.isLive(state.name)) continue;
      try {
        await this.#makeBranch(state, deps[0]);
        const { builder } = this.#playbook;
        await this.#session.backlogParts().spawn({
          name: state.name,
          role: builder.role,
          ...(builder.model ? { model: builder.model } : {}),
          ...(builder.agent ? { agent: builder.agent } : {}),
          worktree: true,
          planModeRequired: this.#options.planFirst,
          prompt: this.#teammatePrompt(state),
        });
      } catch (error) {
        // Stopped while it was starting: nothing went wrong, it starts on --resume.
        if (this.#closed) {
          state.startedAt = undefined;
          return;
        }
        this.#warn(`issue #${state.issue.number} could not start: ${(error as Error).message}`);
      }
    }
  }

  /** The issue's branch, made once: from the base, or from its dependency's branch as that one is now. */
  async #makeBranch(state: IssueState, dep: IssueState | undefined): Promise<void> {
    const pin = pinRepository(this.#root);
    const exists = await runGit(this.#root, ['rev-parse', '--verify', '-q', `refs/heads/${state.branch}`], { pin });
    if (exists.code === 0) return;
    // The dependency's branch as its teammate left it (copied in from its checkout).
    if (dep) await worktreeStatus(this.#root, dep.name);
    const from = dep ? dep.branch : this.#options.base;
    const made = await runGit(this.#root, ['branch', state.branch, `refs/heads/${from}`], { pin });
    if (made.code !== 0) throw new Error(`git branch ${state.branch} ${from} failed: ${made.stderr.trim().split('\n')[0]}`);
  }

  /** open_pull_request: push the reviewed branch (and the one it is stacked on), then the pull request. */
  async openPullRequest(number: number, _by: string): Promise<string> {
    const state = this.#states.get(number);
    if (!state) throw new Error(`issue #${number} is not in this backlog (it has ${[...this.#states.keys()].map((n) => `#${n}`).join(', ')})`);
    // A retry cap of the playbook gave the issue up: nothing of it ships.
    if (state.failed) throw new Error(`issue #${number} was given up (${state.failed}); it is not shipped`);
    const task = await this.#session.backlogParts().board.get(state.taskId);
    if (task.status !== 'completed')
      throw new Error(`issue #${number} is not reviewed yet: its task #${task.id} is ${task.status}; open its pull request once it is approved`);
    await this.#starting;
    await worktreeStatus(this.#root, state.name);
    const { remote, github } = this.#options;
    const said: string[] = [];
    if (remote) {
      for (const dep of this.#depsOf(state.issue)) {
        if (!dep.pushed) dep.pushed = { remote: remote.name, commit: await pushBranch(this.#root, remote.url, dep.branch, this.#options.token) };
      }
      state.pushed = { remote: remote.name, commit: await pushBranch(this.#root, remote.url, state.branch, this.#options.token) };
      said.push(`pushed ${state.branch} to ${remote.name}`);
    }
    state.shippedAt ??= Date.now();
    if (!github) {
      said.push(`no GitHub repository for pull requests: merge it with huddle merge ${number}`);
      return said.join('; ');
    }
    if (!remote) throw new Error('there is no remote to push the branch to (git remote add origin URL), so no pull request can be opened');
    const record = await this.#recordOf(state, task);
    state.pr = await openPullRequest(github.client, {
      ...github.repo,
      head: state.branch,
      base: state.base,
      title: state.issue.title,
      body: this.#pullRequestBody(state, task, record),
    });
    said.push(`opened ${state.pr.url} (into ${state.base})`);
    this.#watchChecks(state, github);
    return said.join('; ');
  }

  /**
   * The pull request's check runs, read every checksPollMs until none is running: a failure goes to
   * the issue's teammate (to fix on its branch) and the lead (to ship again), a pass to the lead.
   * The run does not end while they run. Right after a push GitHub may list none yet: where the base
   * branch has check runs (the repository runs CI), they are waited for, up to CHECKS_APPEAR_MS; a
   * branch with none after that, or of a repository without any, has nothing to wait for.
   */
  #watchChecks(state: IssueState, github: NonNullable<BacklogRunOptions['github']>): void {
    const every = this.#options.checksPollMs ?? 0;
    if (!this.#playbook.checks || every <= 0 || state.watching || state.failed) return;
    state.watching = true;
    const release = this.#session.backlogParts().hold();
    const { bus } = this.#session.backlogParts();
    const say = (to: string, content: string) =>
      bus
        .send({ type: 'message', from: HUDDLE_SENDER, to, content })
        .catch((error: Error) => this.#warn(`could not tell ${to} about the checks: ${error.message}`));
    const appearBy = Date.now() + CHECKS_APPEAR_MS;
    let runsCi: boolean | undefined;
    const poll = async (): Promise<void> => {
      let checks;
      try {
        checks = await checksOf(github.client, github.repo, state.branch);
      } catch (error) {
        this.#warn(`could not read the checks of ${state.pr?.url}: ${(error as Error).message.split('\n')[0]}`);
        checks = { total: 0, failed: [], pending: 0 };
      }
      if (checks.total === 0 && Date.now() < appearBy) {
        // A base that cannot be read is taken as a repository without CI: nothing is waited for.
        runsCi ??= await checksOf(github.client, github.repo, state.base).then(
          (base) => base.total > 0,
          () => false,
        );
      }
      if (checks.pending > 0 || (checks.total === 0 && runsCi === true && Date.now() < appearBy)) {
        state.checks = { state: 'pending', failed: [] };
        setTimeout(() => void poll(), every).unref();
        return;
      }
      state.watching = false;
      if (checks.failed.length > 0) {
        state.checks = { state: 'failed', failed: checks.failed };
        const names = checks.failed.join(', ');
        state.checkFailures += 1;
        const cap = this.#playbook.checks?.retries ?? 0;
        if (this.#playbook.checks?.gate === false) {
          await say(LEAD_NAME, `The checks of issue #${state.issue.number}'s pull request failed (${names}); the playbook does not wait on them.`);
        } else if (state.checkFailures > cap) {
          await this.#giveUp(
            state,
            `its pull request's checks failed ${plural(state.checkFailures, 'time')} (the playbook allows ${plural(cap, 'retry', 'retries')}): ${names}`,
          );
        } else {
          await say(
            state.name,
            `The checks of ${state.pr?.url} failed: ${names}. Fix it on your branch ${state.branch} and commit, then tell the lead (send_message) that issue #${state.issue.number} is fixed.`,
          );
          await say(
            LEAD_NAME,
            `The checks of issue #${state.issue.number}'s pull request failed (${names}); ${state.name} is told. When it says it is fixed, open_pull_request {"issue": ${state.issue.number}} again.`,
          );
        }
      } else if (checks.total > 0) {
        state.checks = { state: 'passed', failed: [] };
        await say(LEAD_NAME, `The checks of issue #${state.issue.number}'s pull request ${state.pr?.url} passed.`);
      }
      release();
    };
    void poll();
  }

  /** One entry per issue, for the run record. */
  async records(): Promise<BacklogIssueRecord[]> {
    const { board } = this.#session.backlogParts();
    const out: BacklogIssueRecord[] = [];
    for (const state of this.#states.values()) {
      // A task file that cannot be read leaves its issue's entry without the task's fields, not the record without the issue.
      const task = await board.get(state.taskId).catch(() => undefined);
      out.push(await this.#recordOf(state, task));
    }
    return out;
  }

  close(): void {
    this.#closed = true;
    for (const stop of this.#stops.splice(0)) stop();
  }

  async #recordOf(state: IssueState, task: Task | undefined): Promise<BacklogIssueRecord> {
    // A branch not made yet (an issue that never started) changed nothing: the entry says 0 files.
    const changes = await branchChanges(this.#root, `refs/heads/${state.base}`, `refs/heads/${state.branch}`).catch(() => undefined);
    const spend = this.#session.spend().find((agent) => agent.name === state.name);
    const plan = await this.#planOf(state);
    const findings = task ? taskFindings(task) : [];
    const comment = typeof task?.review_comment === 'string' ? task.review_comment : undefined;
    const feedback = task?.review_feedback;
    return {
      issue: state.issue.number,
      title: state.issue.title,
      ...(state.issue.url ? { url: state.issue.url } : {}),
      task_id: state.taskId,
      branch: state.branch,
      base: state.base,
      worktree: path.relative(this.#root, worktreePath(this.#root, state.name)),
      state: state.failed
        ? 'failed'
        : state.shippedAt !== undefined
          ? 'shipped'
          : task?.status === 'completed'
            ? 'reviewed'
            : state.startedAt !== undefined
              ? 'open'
              : 'not started',
      ...(state.failed ? { failed_because: state.failed } : {}),
      phase: this.#phaseOf(state, task),
      ...(this.#options.planFirst ? { approver: this.#session.backlogParts().planApprover(this.builderRole) } : {}),
      ...(state.pushed ? { pushed: state.pushed } : {}),
      ...(state.pr ? { pull_request: { number: state.pr.number, url: state.pr.url, state: state.pr.state, draft: state.pr.draft } } : {}),
      ...(plan ? { plan } : {}),
      review: {
        ...(task?.reviewer ? { reviewer: task.reviewer } : {}),
        rounds: task?.review_rounds ?? 0,
        findings,
        security: findings.filter((f) => f.domain === 'security'),
        ...(feedback ? { feedback } : {}),
        ...(comment ? { comment } : {}),
      },
      verify: [...state.verify],
      ...(state.checks ? { checks: state.checks } : {}),
      files: changes
        ? { changed: changes.files.length, added: changes.added, removed: changes.removed, list: changes.files }
        : { changed: 0, added: 0, removed: 0, list: [] },
      commits: changes?.commits ?? [],
      cost_usd: (spend?.costUsd ?? 0) + (state.carried?.cost_usd ?? 0),
      model_calls: (spend?.modelCalls ?? 0) + (state.carried?.model_calls ?? 0),
      wall_ms: (state.startedAt === undefined ? 0 : (state.shippedAt ?? state.reviewedAt ?? Date.now()) - state.startedAt) + (state.carried?.wall_ms ?? 0),
    };
  }

  /** Where the issue is in its playbook, as seen from its task, branch and pull request. */
  #phaseOf(state: IssueState, task: Task | undefined): string {
    if (state.failed) return 'failed';
    if (state.startedAt === undefined && state.reviewedAt === undefined) return 'waiting';
    if (state.pr) return state.checks?.state === 'pending' || state.watching ? 'watch-checks' : state.checks?.state === 'failed' ? 'implement' : 'done';
    if (state.shippedAt !== undefined) return 'done';
    if (task?.status === 'completed') return this.#playbook.ship ? 'ship' : 'done';
    if (task?.status === 'review') return 'review';
    return this.#session.backlogParts().planPending(state.name) ? 'plan' : 'implement';
  }

  /**
   * The plan the issue's teammate follows: the person's edit of it (in the teammate's inbox), else the
   * last one it sent (to the lead, whose inbox keeps it, or to the person's queue).
   */
  async #planOf(state: IssueState): Promise<string | undefined> {
    const { bus } = this.#session.backlogParts();
    // An inbox that cannot be read holds no plan to go by: the record says none.
    const answers = await bus.history(state.name).catch(() => []);
    const edited = answers.filter((m) => m.type === 'plan_approval_response' && m.approve && typeof m.plan === 'string').at(-1)?.plan;
    const asked = (await bus.history(LEAD_NAME).catch(() => [])).filter((m) => m.type === 'plan_approval_request' && m.from === state.name).at(-1)?.plan;
    const plan = edited ?? state.planAsked ?? asked;
    return typeof plan === 'string' && plan.trim() ? plan.trim() : undefined;
  }

  #pullRequestBody(state: IssueState, task: Task, record: BacklogIssueRecord): string {
    const issue = state.issue;
    const lines = [issue.url ? `Closes ${issue.url}` : `Issue #${issue.number} (${issue.source})`, ''];
    if (state.base !== this.#options.base) {
      const dep = this.#depsOf(issue)[0]!;
      lines.push(`Stacked on ${dep.branch} (issue #${dep.issue.number}): merge that one first.`, '');
    }
    lines.push('## Plan', '', record.plan ?? '(no plan was asked for)', '');
    lines.push('## Review', '');
    lines.push(
      `Approved by ${task.reviewer ?? 'the lead'} after ${record.review.rounds} round${record.review.rounds === 1 ? '' : 's'} of changes.` +
        (record.review.comment ? ` ${record.review.comment}` : ''),
    );
    if (record.review.security.length) {
      lines.push('', '### Security findings', '');
      for (const finding of record.review.security) lines.push(`- ${findingLine(finding)} (round ${finding.round}, fixed before approval)`);
    }
    const others = record.review.findings.filter((f) => f.domain !== 'security');
    if (others.length) {
      lines.push('', '### Other findings', '');
      for (const finding of others) lines.push(`- ${findingLine(finding)} (round ${finding.round})`);
    }
    const last = record.verify.at(-1);
    lines.push('', '## Figures', '');
    lines.push(
      `${plural(record.files.changed, 'file')} · +${record.files.added} −${record.files.removed} · ${plural(record.commits.length, 'commit')} · ` +
        `${last ? (last.ok ? 'verify passing' : 'verify failing') : 'no verify run'} · $${record.cost_usd.toFixed(2)} · ${record.model_calls} model calls`,
    );
    lines.push('', '_Opened by huddle for its teammate; the teammate never held a credential._');
    return this.#session.scrub(lines.join('\n'));
  }

  #description(issue: Issue, name: string, deps: IssueState[]): string {
    const base = deps[0]?.branch ?? this.#options.base;
    return [
      `Backlog issue #${issue.number}${issue.url ? ` (${issue.url})` : ''}: ${issue.title}`,
      '',
      issue.body || '(no description)',
      '',
      `Built by ${name} in its own worktree on branch ${issueBranch(issue)}, made from ${base}. Commit the work there; the reviewer compares ${base}...${issueBranch(issue)}.`,
    ].join('\n');
  }

  /** The builder's steps: the playbook's builder phases in order, then the issue (docs/playbooks.md#phases). */
  #teammatePrompt(state: IssueState): string {
    const book = this.#playbook;
    const steps: string[] = [];
    for (const phase of book.phases) {
      const words = phase.instructions ? ` ${phase.instructions}` : '';
      if (phase.phase === 'understand') steps.push(`Understand the issue below and its acceptance criteria.${words}`);
      else if (phase.phase === 'explore')
        steps.push(
          `Explore the code with ${book.explorers} read-only helpers in parallel: one explore call with ${book.explorers} tasks, each a question about the code this issue touches; read their summaries.${words}`,
        );
      else if (phase.phase === 'plan' && this.#options.planFirst)
        steps.push(
          `Send your plan (plan_approval {"plan": "..."}: steps, files, how you will check it) and wait for the answer; follow the plan as approved.${words}`,
        );
      else if (phase.phase === 'implement')
        steps.push(
          `Make the change and commit it (git add -A && git commit -m "...").` +
            (this.#verifyCommand ? ` Completing the task runs its verify command (${this.#verifyCommand}); fix what it reports.` : '') +
            words,
        );
      else if (phase.phase === 'self-review')
        steps.push(`Review your own diff (git diff ${state.base}...HEAD) against each acceptance criterion and fix what falls short.${words}`);
    }
    steps.push(
      `Then task_update {"task_id": ${state.taskId}, "status": "completed"}.` +
        (book.reviewer ? ' A reviewer checks your branch; if it asks for changes, fix, commit and complete the task again.' : ''),
    );
    return [
      `You build backlog issue #${state.issue.number}, "${state.issue.title}", task #${state.taskId} (assigned to you), following the playbook ${book.name}. ` +
        `You are in your own git worktree on branch ${state.branch}, made from ${state.base}.`,
      '',
      ...steps.map((step, i) => `${i + 1}. ${step}`),
      ...(book.instructions ? ['', book.instructions] : []),
      '',
      state.issue.body,
    ].join('\n');
  }

  #leadPrompt(): string {
    const lines = [
      `This run works through a backlog of ${this.#states.size} issue${this.#states.size === 1 ? '' : 's'}, on base ${this.#options.base}.`,
      `huddle made one task per issue, assigned to a teammate of its own in its own worktree and branch${this.#playbook.reviewer ? ', and a reviewer that reviews each task' : ''}; each follows the playbook ${this.#playbook.name}.`,
      this.#options.planFirst && this.#session.backlogParts().planApprover(this.builderRole) === 'lead'
        ? 'Each teammate first sends you its plan: approve it (plan_approval) when it meets the issue and its acceptance criteria, or send it back with what to change.'
        : this.#options.planFirst
          ? `The teammates' plans go to the person (${this.#session.backlogParts().planApprover(this.builderRole)}), not to you.`
          : '',
      this.#playbook.ship
        ? 'When huddle tells you an issue is reviewed and approved, ship it: open_pull_request {"issue": N}. An issue that depends on another starts once that one is approved, on its branch.'
        : 'An issue is done when its task is approved; its branch stays for huddle merge. An issue that depends on another starts once that one is approved, on its branch.',
      'When every issue is shipped, end with one line per issue.',
      '',
      'Issues:',
    ];
    for (const state of this.#states.values()) {
      const on = state.base === this.#options.base ? '' : `, stacked on ${state.base}`;
      lines.push(`- #${state.issue.number} ${state.issue.title} (task #${state.taskId}, ${state.name}, ${state.branch}${on})`);
    }
    return lines.filter((line, i) => line !== '' || i > 0).join('\n');
  }

  #warn(message: string): void {
    this.#session.hub.emit(HUDDLE_SENDER, 'warning', { message });
  }
}
