// huddle's own GitHub client (docs/backlog.md#github-issues): issues in, pull requests out, through
// Octokit, in huddle's process only. An agent asks for a pull request with a tool; it never holds
// the token (docs/trust.md#secrets-and-files).
import { Octokit } from '@octokit/rest';
import type { Backlog, Issue } from '../backlog/issue.js';
import type { GitHubRepo, GitHubSource } from './github-repo.js';

export interface GitHubOptions {
  token: string | undefined;
  /** The REST API's base URL: https://api.github.com, or a GitHub Enterprise server's `/api/v3`. */
  baseUrl?: string | undefined;
}

export function githubClient(options: GitHubOptions): Octokit {
  return new Octokit({
    ...(options.token ? { auth: options.token } : {}),
    ...(options.baseUrl ? { baseUrl: options.baseUrl.replace(/\/+$/, '') } : {}),
    userAgent: 'huddle',
    // Octokit's default logger writes warnings to the console: huddle says what went wrong itself.
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
  });
}

/** `Depends on #3`, `depends-on: #3, #4`: the dependencies an issue's body names. */
export function dependenciesInBody(body: string): number[] {
  const found = new Set<number>();
  for (const line of body.split('\n')) {
    const match = /^\s*(?:[-*]\s*)?depends[ -]on:?\s*(.+)$/i.exec(line);
    if (!match) continue;
    for (const ref of match[1]!.matchAll(/#(\d+)/g)) found.add(Number(ref[1]));
  }
  return [...found];
}

/** The open issues of a repository that match the source's filters (pull requests left out). */
export async function loadGitHubBacklog(client: Octokit, source: GitHubSource): Promise<Backlog> {
  type Raw = { number: number; title: string; body?: string | null; html_url: string; labels: Array<string | { name?: string }>; pull_request?: unknown };
  let raw: Raw[];
  if (source.query) {
    const q = `repo:${source.owner}/${source.repo} is:issue is:open ${source.query}`;
    raw = (await client.paginate(client.rest.search.issuesAndPullRequests, { q, per_page: 100 })) as Raw[];
  } else {
    raw = (await client.paginate(client.rest.issues.listForRepo, {
      owner: source.owner,
      repo: source.repo,
      state: 'open',
      per_page: 100,
      ...(source.labels ? { labels: source.labels } : {}),
      ...(source.milestone ? { milestone: source.milestone } : {}),
    })) as Raw[];
  }
  const issues: Issue[] = raw
    .filter((item) => !item.pull_request)
    .map((item) => ({
      number: item.number,
      title: item.title,
      labels: item.labels.map((label) => (typeof label === 'string' ? label : (label.name ?? ''))).filter(Boolean),
      dependsOn: dependenciesInBody(item.body ?? ''),
      body: (item.body ?? '').trim(),
      source: item.html_url,
      url: item.html_url,
    }));
  return { issues, skipped: [] };
}

export interface PullRequestInput extends GitHubRepo {
  head: string;
  base: string;
  title: string;
  body: string;
}

export interface PullRequest {
  number: number;
  url: string;
  state: string;
  draft: boolean;
}

/**
 * Opens the pull request as a draft, then marks it ready for review (GraphQL: REST has no way to),
 * or finds the one already open for the branch (a second call doubles nothing).
 */
export async function openPullRequest(client: Octokit, input: PullRequestInput): Promise<PullRequest> {
  const { owner, repo } = input;
  const open = (await client.rest.pulls.list({ owner, repo, head: `${owner}:${input.head}`, state: 'open', per_page: 1 })).data[0];
  let pr: { number: number; node_id: string; draft?: boolean | undefined };
  if (open) {
    pr = open;
    await client.rest.pulls.update({ owner, repo, pull_number: pr.number, title: input.title, body: input.body, base: input.base });
  } else {
    pr = (await client.rest.pulls.create({ owner, repo, head: input.head, base: input.base, title: input.title, body: input.body, draft: true })).data;
  }
  if (pr.draft) {
    await client.graphql(`mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`, {
      id: pr.node_id,
    });
  }
  const now = (await client.rest.pulls.get({ owner, repo, pull_number: pr.number })).data;
  return { number: now.number, url: now.html_url, state: now.state, draft: now.draft ?? false };
}

/** The open pull request whose head is `head`, if there is one. */
export async function findPullRequest(client: Octokit, repo: GitHubRepo, head: string): Promise<PullRequest | undefined> {
  const pr = (await client.rest.pulls.list({ ...repo, head: `${repo.owner}:${head}`, state: 'open', per_page: 1 })).data[0];
  return pr ? { number: pr.number, url: pr.html_url, state: pr.state, draft: pr.draft ?? false } : undefined;
}

/** The check runs on a ref: how many, how many failed, how many are still running. */
export async function checksOf(client: Octokit, repo: GitHubRepo, ref: string): Promise<{ total: number; failed: string[]; pending: number }> {
  const runs = (await client.rest.checks.listForRef({ ...repo, ref, per_page: 100 })).data.check_runs;
  return {
    total: runs.length,
    failed: runs.filter((run) => run.conclusion === 'failure' || run.conclusion === 'timed_out').map((run) => run.name),
    pending: runs.filter((run) => run.status !== 'completed').length,
  };
}
