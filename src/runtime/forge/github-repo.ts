// Where a backlog's GitHub repository is (docs/backlog.md#github-issues): `github:owner/repo?label=x`
// as a source, or a remote URL on github.com (or the GHE host of --github-api-url).

export interface GitHubRepo {
  owner: string;
  repo: string;
}

export interface GitHubSource extends GitHubRepo {
  labels?: string | undefined;
  milestone?: string | undefined;
  /** A search query (GitHub's issue search syntax), instead of the filters. */
  query?: string | undefined;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/** `github:owner/repo?label=bug&milestone=3` or `github:owner/repo?q=is:open+label:x`; a string saying what is wrong otherwise. */
export function parseGitHubSource(text: string): GitHubSource | string {
  const rest = text.slice('github:'.length);
  const [where = '', search = ''] = rest.split('?', 2);
  const [owner, repo, ...more] = where.split('/');
  if (!owner || !repo || more.length || !NAME.test(owner) || !NAME.test(repo)) return `'${text}' is not github:OWNER/REPO[?label=NAME]`;
  const params = new URLSearchParams(search);
  for (const key of params.keys()) {
    if (!['label', 'labels', 'milestone', 'q'].includes(key)) return `'${key}' is not a filter of a GitHub backlog (label, milestone, q)`;
  }
  return {
    owner,
    repo,
    labels: params.get('label') ?? params.get('labels') ?? undefined,
    milestone: params.get('milestone') ?? undefined,
    query: params.get('q') ?? undefined,
  };
}

/** owner/repo of a remote URL on `host` (https, ssh or scp-like), else undefined. */
export function repoOfRemote(url: string, host = 'github.com'): GitHubRepo | undefined {
  const escaped = host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(
    `^(?:https?://(?:[^@/]+@)?${escaped}(?::\\d+)?/|ssh://(?:[^@/]+@)?${escaped}(?::\\d+)?/|[^@/]+@${escaped}:)([^/]+)/([^/]+?)(?:\\.git)?/?$`,
  ).exec(url);
  return match ? { owner: match[1]!, repo: match[2]! } : undefined;
}

export function parseRepoName(text: string): GitHubRepo | undefined {
  const [owner, repo, ...more] = text.split('/');
  return owner && repo && !more.length && NAME.test(owner) && NAME.test(repo) ? { owner, repo } : undefined;
}
