// Where a backlog comes from and where its work goes (docs/backlog.md): the source parsed, the base
// and the remote checked, GitHub's client made. Shared by huddle run --backlog, huddle watch and the
// console's --backlog, so the three read and ship a backlog the same way.
import type { Octokit } from '@octokit/rest';
import { orderIssues, type Backlog, type Issue } from '../runtime/backlog/issue.js';
import { loadLocalBacklog } from '../runtime/backlog/local-backlog.js';
import { githubClient, loadGitHubBacklog } from '../runtime/forge/github.js';
import { parseGitHubSource, parseRepoName, repoOfRemote, type GitHubRepo } from '../runtime/forge/github-repo.js';
import { githubToken } from '../runtime/forge/github-token.js';
import { remoteUrl } from '../runtime/forge/push.js';
import { pinRepository, runGit } from '../runtime/git/host-git.js';
import { BacklogRun, type BacklogRunOptions } from './backlog-run.js';
import { BacklogProgress } from './backlog-progress.js';
import type { TeamSession } from './team-session.js';

/** Where a backlog comes from and goes to, checked once: for huddle run, huddle watch and the console's --backlog. */
export interface BacklogSetup {
  root: string;
  source: string;
  base: string;
  /** The issues as the source has them now (read again on every tick of huddle watch), or one line saying why not. */
  load(): Promise<Backlog | { error: string }>;
  remote: { name: string; url: string } | undefined;
  github: { client: Octokit; repo: GitHubRepo } | undefined;
  /** The run's options for these issues. */
  runOptions(issues: Issue[], more: { verify?: string | undefined; planFirst: boolean }): BacklogRunOptions;
}

export interface BacklogFlags {
  root: string;
  source: string;
  base?: string | undefined;
  githubApiUrl?: string | undefined;
  prRepo?: string | undefined;
  remote?: string | undefined;
}

/** The source parsed, the base and remote checked, GitHub's client made (its token read on first use); or one line saying what is wrong. */
export async function prepareBacklog(flags: BacklogFlags): Promise<BacklogSetup | { error: string; code: number; usage?: boolean }> {
  const { root, source } = flags;
  if (!pinRepository(root))
    return { error: `${root} is not a git repository with a commit: a backlog run makes a branch per issue (git init && git commit first)`, code: 2 };
  const base = flags.base ?? (await currentBranch(root));
  if (!base) return { error: 'the workspace is not on a branch (detached HEAD): name the base with --base BRANCH', code: 2 };
  if ((await runGit(root, ['rev-parse', '--verify', '-q', `refs/heads/${base}`], { pin: pinRepository(root) })).code !== 0) {
    return { error: `--base ${base}: there is no such branch in ${root}`, code: 2 };
  }
  const apiUrl = flags.githubApiUrl;
  const host = apiUrl ? new URL(apiUrl).hostname : 'github.com';
  let token: string | undefined;
  let octokit: Octokit | undefined;
  const client = () => (octokit ??= githubClient({ token: (token ??= githubToken(process.env, apiUrl ? host : undefined)), baseUrl: apiUrl }));
  let load: BacklogSetup['load'];
  let prRepo: GitHubRepo | undefined;
  if (source === 'local') {
    load = async () => loadLocalBacklog(root);
  } else if (source.startsWith('github:')) {
    const github = parseGitHubSource(source);
    if (typeof github === 'string') return { error: github, code: 2, usage: true };
    prRepo = { owner: github.owner, repo: github.repo };
    load = async () => {
      try {
        return await loadGitHubBacklog(client(), github);
      } catch (error) {
        return { error: `cannot read the issues of ${github.owner}/${github.repo}: ${(error as Error).message.split('\n')[0]}` };
      }
    };
  } else {
    return { error: `--backlog takes local or github:OWNER/REPO[?label=NAME], not '${source}'`, code: 2, usage: true };
  }
  const remoteName = flags.remote ?? 'origin';
  const url = await remoteUrl(root, remoteName);
  if (flags.prRepo) {
    prRepo = parseRepoName(flags.prRepo);
    if (!prRepo) return { error: `--pr-repo takes OWNER/REPO, not '${flags.prRepo}'`, code: 2, usage: true };
  }
  prRepo ??= url ? repoOfRemote(url, host) : undefined;
  const remote = url ? { name: remoteName, url } : undefined;
  const repo = prRepo;
  return {
    root,
    source,
    base,
    load,
    remote,
    get github() {
      return repo && url ? { client: client(), repo } : undefined;
    },
    runOptions: (issues, more) => {
      const github = repo && url ? { client: client(), repo } : undefined;
      return {
        issues,
        base,
        remote,
        github,
        token,
        verify: more.verify,
        planFirst: more.planFirst,
        // HUDDLE_CHECKS_POLL_MS=0 leaves a pull request's checks unwatched.
        checksPollMs: Number(process.env.HUDDLE_CHECKS_POLL_MS ?? 30_000) || 0,
      };
    },
  };
}

async function currentBranch(root: string): Promise<string | undefined> {
  const result = await runGit(root, ['symbolic-ref', '-q', '--short', 'HEAD'], { pin: pinRepository(root) });
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** A backlog worked through by an open session (the console's --backlog): its run, its rows, the lead's prompt. */
export interface OpenedBacklog {
  run: BacklogRun;
  progress: BacklogProgress;
  prompt: string;
  /** One line per issue or file left out, and why. */
  skipped: string[];
  /** A line to show the person (no remote: branches stay here). */
  notes: string[];
}

export async function openBacklogRun(session: TeamSession, flags: BacklogFlags & { verify?: string | undefined }): Promise<OpenedBacklog | { error: string }> {
  const setup = await prepareBacklog(flags);
  if ('error' in setup) return { error: setup.error };
  const loaded = await setup.load();
  if ('error' in loaded) return loaded;
  const ordered = orderIssues(loaded);
  const skipped = ordered.skipped.map((s) => `skipped ${s.source}: ${s.reason}`);
  if (ordered.issues.length === 0) return { error: `the backlog (${flags.source}) has no issue to work on${skipped.length ? `: ${skipped.join('; ')}` : ''}` };
  // The console is where the person answers plans: the team's plans.approver says who does (docs/backlog.md#in-the-console).
  const planFirst = true;
  const run = new BacklogRun(session, setup.runOptions(ordered.issues, { verify: flags.verify, planFirst }));
  const prompt = await run.start();
  const notes = setup.remote ? [] : [`the workspace has no remote '${flags.remote ?? 'origin'}': branches stay here, merged with huddle merge ISSUE`];
  return { run, progress: new BacklogProgress(session, run, planFirst), prompt, skipped, notes };
}
