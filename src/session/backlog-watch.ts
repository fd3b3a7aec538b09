// huddle watch (docs/backlog.md#watching-a-backlog): on every tick, the backlog's source is read again
// and each issue not in the run yet is judged by the guards: skipped while a pull request for it is
// open or its branch is someone else's, held back while --max-concurrent issues are in flight, and
// nothing is picked while --pause-when-prs pull requests of huddle's await review. One line per decision.
import type { Octokit } from '@octokit/rest';
import { issueBranch, orderIssues, type Backlog, type Issue } from '../runtime/backlog/issue.js';
import type { GitHubRepo } from '../runtime/forge/github-repo.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import type { BacklogRun } from './backlog-run.js';

export interface WatchGuards {
  /** Issues picked and not yet shipped, at most. */
  maxConcurrent: number;
  /** No issue is picked while this many pull requests of huddle's (huddle/issue-… branches) are open; undefined: never paused. */
  pauseWhenPrs?: number | undefined;
}

export interface BacklogWatchOptions extends WatchGuards {
  root: string;
  run: BacklogRun;
  load(): Promise<Backlog | { error: string }>;
  github: { client: Octokit; repo: GitHubRepo } | undefined;
  /** Subjects of the board's tasks: an issue with a task already is this team's (a resumed watch), not someone else's. */
  taskSubjects(): Promise<string[]>;
  say(line: string): void;
}

interface OpenPull {
  head: string;
  url: string;
}

/** The branch prefix of an issue's branches, whatever its title became: `huddle/issue-<n>-`. */
function issuePrefix(number: number): string {
  return `huddle/issue-${number}-`;
}

export class BacklogWatch {
  readonly #options: BacklogWatchOptions;
  /** The last decision said per issue (and for the pause, under 0): a line is written only when it changes. */
  readonly #said = new Map<number, string>();

  constructor(options: BacklogWatchOptions) {
    this.#options = options;
  }

  #say(key: number, line: string): void {
    if (this.#said.get(key) === line) return;
    this.#said.set(key, line);
    this.#options.say(line);
  }

  /** One look at the backlog: what is new is picked, skipped or held back. Returns the issues picked. */
  async tick(): Promise<Issue[]> {
    const { run, github, maxConcurrent, pauseWhenPrs } = this.#options;
    const loaded = await this.#options.load();
    if ('error' in loaded) {
      this.#say(-1, `cannot read the backlog: ${loaded.error}; trying again on the next tick`);
      return [];
    }
    this.#said.delete(-1);
    const { issues } = orderIssues(loaded);
    let pulls: OpenPull[] = [];
    if (github) {
      try {
        pulls = (await github.client.paginate(github.client.rest.pulls.list, { ...github.repo, state: 'open', per_page: 100 })).map((pr) => ({
          head: pr.head.ref,
          url: pr.html_url,
        }));
      } catch (error) {
        this.#say(-2, `cannot read the open pull requests: ${(error as Error).message.split('\n')[0]}; nothing picked this tick`);
        return [];
      }
      this.#said.delete(-2);
    }
    const snapshot = await run.snapshot();
    const inRun = new Set(snapshot.map((row) => row.number));
    let inFlight = snapshot.filter((row) => !row.shipped && !row.failed).length;
    const awaiting = pulls.filter((pull) => pull.head.startsWith('huddle/issue-')).length;
    const fresh = issues.filter((issue) => !inRun.has(issue.number));
    if (pauseWhenPrs !== undefined && awaiting >= pauseWhenPrs) {
      if (fresh.length)
        this.#say(
          0,
          `paused: ${awaiting} pull request${awaiting === 1 ? '' : 's'} await review (--pause-when-prs ${pauseWhenPrs}); not picking ${fresh.map((i) => `#${i.number}`).join(', ')}`,
        );
      return [];
    }
    if (this.#said.has(0)) {
      this.#said.delete(0);
      this.#options.say(`resumed: ${awaiting} pull request${awaiting === 1 ? '' : 's'} await review`);
    }
    const subjects = new Set(
      (await this.#options.taskSubjects())
        .map((subject) => /^Issue #(\d+): /.exec(subject)?.[1])
        .filter(Boolean)
        .map(Number),
    );
    const picked: Issue[] = [];
    for (const issue of fresh) {
      const pull = pulls.find((p) => p.head.startsWith(issuePrefix(issue.number)) || p.head === `huddle/issue-${issue.number}`);
      if (pull) {
        this.#say(issue.number, `skipped #${issue.number} ${issue.title}: its pull request ${pull.url} is open`);
        continue;
      }
      const branch = subjects.has(issue.number) ? undefined : await this.#foreignBranch(issue);
      if (branch) {
        this.#say(issue.number, `skipped #${issue.number} ${issue.title}: its branch ${branch} exists (another run works on it)`);
        continue;
      }
      if (inFlight >= maxConcurrent) {
        this.#say(issue.number, `waiting: #${issue.number} ${issue.title} (${inFlight} in flight, --max-concurrent ${maxConcurrent})`);
        continue;
      }
      picked.push(issue);
      inFlight += 1;
    }
    if (picked.length === 0) return [];
    const added = await run.add(picked);
    for (const issue of added) this.#say(issue.number, `picked #${issue.number} ${issue.title} (${issueBranch(issue)}; ${inFlight} in flight)`);
    return added;
  }

  /** A branch of the issue's already in the repository, made by another run: huddle/issue-<n>-… */
  async #foreignBranch(issue: Issue): Promise<string | undefined> {
    const refs = await runGit(
      this.#options.root,
      ['for-each-ref', '--format=%(refname:short)', `refs/heads/${issuePrefix(issue.number)}*`, `refs/heads/huddle/issue-${issue.number}`],
      {
        pin: pinRepository(this.#options.root),
      },
    );
    return refs.code === 0 ? refs.stdout.split('\n').find(Boolean) : undefined;
  }
}
