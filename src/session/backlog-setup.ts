// Where a backlog comes from and where its work goes (docs/backlog.md): the source parsed, the base
// and the remote checked, GitHub's client made. Shared by huddle run --backlog, huddle watch and the
// console's --backlog, so the three read and ship a backlog the same way.
import type { Octokit } from '@octokit/rest';
import { orderIssues, type Backlog, type Issue } from '../runtime/backlog/issue.js';
import { DEFAULT_PLAYBOOK, loadPlaybook, PlaybookError, type Playbook } from '../runtime/backlog/playbook.js';
import type { RunChoice } from '../runtime/settings/flags.js';
import { playbookFileTrusted } from '../runtime/settings/playbook-trust.js';
import { workspaceKey } from '../runtime/settings/load.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
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
  /** The sources as named (`local`, `github:…`), joined for lines that name them. */
  source: string;
  base: string;
  /** The issues as the source has them now (read again on every tick of huddle watch), or one line saying why not. */
  load(): Promise<Backlog | { error: string }>;
  remote: { name: string; url: string } | undefined;
  github: { client: Octokit; repo: GitHubRepo } | undefined;
  /** The run's options for these issues. */
  runOptions(issues: Issue[], more: { verify?: string | undefined; planFirst: boolean; playbook: Playbook }): BacklogRunOptions;
}

export interface BacklogFlags {
  root: string;
  /** `--backlog` may be given more than once: one backlog of every source's issues (docs/backlog.md#sources). */
  sources: string[];
  base?: string | undefined;
  githubApiUrl?: string | undefined;
  prRepo?: string | undefined;
  remote?: string | undefined;
}

/** The source parsed, the base and remote checked, GitHub's client made (its token read on first use); or one line saying what is wrong. */
export async function prepareBacklog(flags: BacklogFlags): Promise<BacklogSetup | { error: string; code: number; usage?: boolean }> {
  const { root, sources } = flags;
  if (!pinRepository(root))
    return { error: `${root} is not a git repository with a commit: a backlog run makes a branch per issue (git init && git commit first)`, code: 2 };
  const base = flags.base ?? (await currentBranch(root));
  if (!base) return { error: 'the workspace is not on a branch (detached HEAD): name the base with --base BRANCH', code: 2 };
  if ((await runGit(root, ['rev-parse', '--verify', '-q', `refs/heads/${base}`], { pin: pinRepository(root) })).code !== 0) {
    return { error: `--base ${base}: there is no such branch in ${root}`, code: 2 };
  }
  const apiUrl = flags.githubApiUrl;
  if (apiUrl && !URL.canParse(apiUrl)) return { error: `--github-api-url takes a URL (https://HOST/api/v3), not '${apiUrl}'`, code: 2, usage: true };
  const host = apiUrl ? new URL(apiUrl).hostname : 'github.com';
  let token: string | undefined;
  let octokit: Octokit | undefined;
  const client = () => (octokit ??= githubClient({ token: (token ??= githubToken(process.env, apiUrl ? host : undefined)), baseUrl: apiUrl }));
  let prRepo: GitHubRepo | undefined;
  const readers: Array<() => Promise<Backlog | { error: string }>> = [];
  for (const source of sources) {
    if (source === 'local') {
      readers.push(async () => loadLocalBacklog(root));
    } else if (source.startsWith('github:')) {
      const github = parseGitHubSource(source);
      if (typeof github === 'string') return { error: github, code: 2, usage: true };
      prRepo ??= { owner: github.owner, repo: github.repo };
      readers.push(async () => {
        try {
          return await loadGitHubBacklog(client(), github);
        } catch (error) {
          return { error: `cannot read the issues of ${github.owner}/${github.repo}: ${(error as Error).message.split('\n')[0]}` };
        }
      });
    } else {
      return { error: `--backlog takes local or github:OWNER/REPO[?label=NAME], not '${source}'`, code: 2, usage: true };
    }
  }
  const load: BacklogSetup['load'] = async () => {
    const backlog: Backlog = { issues: [], skipped: [] };
    for (const read of readers) {
      const got = await read();
      if ('error' in got) return got;
      backlog.skipped.push(...got.skipped);
      for (const issue of got.issues) {
        const taken = backlog.issues.find((other) => other.number === issue.number);
        // Two sources with the same number: the first keeps it (a branch and a task are named by it).
        if (taken) backlog.skipped.push({ source: issue.source, reason: `issue #${issue.number} is taken by ${taken.source}: renumber it (number: N)` });
        else backlog.issues.push(issue);
      }
    }
    return backlog;
  };
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
    source: sources.join(', '),
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
        playbook: more.playbook,
        // HUDDLE_CHECKS_POLL_MS=0 leaves a pull request's checks unwatched.
        checksPollMs: Number(process.env.HUDDLE_CHECKS_POLL_MS ?? 30_000) || 0,
      };
    },
  };
}

/** The playbook a run follows and who approves plans: the playbook's choice, then --plan-approval's, over the settings (docs/playbooks.md#plan-approval). */
export interface PlanChoices {
  playbook: Playbook;
  runChoices: RunChoice[];
  /** Teammates send a plan before they build: the playbook has a plan phase and --plan-approval is not off. */
  planFirst: boolean;
}

/** --playbook and --plan-approval read, or one line saying what is wrong (usage: the flag's spelling). */
export function planChoices(root: string, playbookName: string | undefined, planApproval: string | undefined): PlanChoices | { error: string; usage: boolean } {
  const planFlag = planApproval === undefined ? undefined : /^(lead|person|off|auto-after)(?::(\d+(?:\.\d+)?))?$/.exec(planApproval);
  if (planApproval !== undefined && (!planFlag || (planFlag[2] !== undefined && planFlag[1] !== 'auto-after') || !(Number(planFlag[2] ?? 1) > 0))) {
    return { error: `--plan-approval takes lead, person, off or auto-after[:MINUTES], not '${planApproval}'`, usage: true };
  }
  let playbook: Playbook;
  try {
    playbook = loadPlaybook(root, playbookName ?? DEFAULT_PLAYBOOK);
  } catch (error) {
    if (error instanceof PlaybookError) return { error: error.message, usage: false };
    throw error;
  }
  untrustedLeftOut(root, playbook);
  const runChoices: RunChoice[] = [];
  if (playbook.approval?.approver || playbook.approval?.autoApproveMinutes || playbook.reviewer?.rounds !== undefined)
    runChoices.push({
      label: `playbook ${playbook.name}`,
      approver: playbook.approval?.approver,
      autoApproveMinutes: playbook.approval?.autoApproveMinutes,
      reviewMaxRounds: playbook.reviewer?.rounds,
    });
  if (planFlag && planFlag[1] !== 'off')
    runChoices.push({
      label: '--plan-approval',
      approver: planFlag[1] as RunChoice['approver'],
      ...(planFlag[2] !== undefined ? { autoApproveMinutes: Number(planFlag[2]) } : {}),
    });
  return { playbook, runChoices, planFirst: playbook.approval !== undefined && planFlag?.[1] !== 'off' };
}

/**
 * A workspace playbook's widening fields (plans approved on huddle's clock, a phase run by an external
 * CLI) wait for the person's trust, as a role file's do (docs/trust.md#settings-that-widen-trust): the
 * console opens with untrusted settings left out, and so are these.
 */
function untrustedLeftOut(root: string, playbook: Playbook): void {
  if (playbook.source.startsWith('built-in')) return;
  let text: string;
  try {
    text = readFileSync(path.join(root, playbook.source), 'utf8');
  } catch {
    return;
  }
  if (playbookFileTrusted(workspaceKey(root), `${playbook.name}.md`, text)) return;
  if (playbook.approval?.approver === 'auto-after') playbook.approval = { ...playbook.approval, approver: undefined, autoApproveMinutes: undefined };
  for (const runner of [playbook.builder, playbook.reviewer]) if (runner && runner.agent !== undefined && runner.agent !== 'huddle') runner.agent = undefined;
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
  if (ordered.issues.length === 0) return { error: `the backlog (${setup.source}) has no issue to work on${skipped.length ? `: ${skipped.join('; ')}` : ''}` };
  // The console is where the person answers plans: the team's plans.approver says who does (docs/backlog.md#in-the-console).
  const choices = planChoices(flags.root, undefined, undefined);
  if ('error' in choices) return { error: choices.error };
  const planFirst = choices.planFirst;
  const run = new BacklogRun(session, setup.runOptions(ordered.issues, { verify: flags.verify, planFirst, playbook: choices.playbook }));
  const prompt = await run.start();
  const notes = setup.remote ? [] : [`the workspace has no remote '${flags.remote ?? 'origin'}': branches stay here, merged with huddle merge ISSUE`];
  return { run, progress: new BacklogProgress(session, run, planFirst), prompt, skipped, notes };
}
