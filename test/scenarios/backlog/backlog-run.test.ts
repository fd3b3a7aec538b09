// `huddle run --backlog` end to end (docs/backlog.md): the built CLI against the fake Messages API,
// the fake GitHub (held to GitHub's OpenAPI description) and a real bare repository as `origin`.
// A local backlog of three issues (one depending on another) becomes three reviewed branches
// pushed to the remote and three pull requests (the dependent one stacked on its dependency's
// branch), listed in the run record and in one line each at the end; a teammate's bash in the
// sandbox finds the GitHub token nowhere. A GitHub-sourced backlog does the same, and huddle merge
// brings a branch in without GitHub, refusing a conflict in one line.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { execa } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { allUserTexts, inboxMessages, lastToolResults, pastToolUses } from '../../helpers/team-harness.js';
import { startFakeGitHub, type FakeGitHub } from '../../helpers/fake-github.js';
import { approvingReviewer, git, repoWithRemote } from '../../helpers/backlog-repo.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import type { RunRecord } from '../../../src/runtime/record/run-record.js';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { Workspace as HuddleWorkspace } from '../../../src/runtime/workspace/workspace.js';

const TOKEN = 'ghp_huddlemarker0123456789abcdefghijkl';
const RUN_TIMEOUT_MS = 150_000;

let api: FakeApi;
let github: FakeGitHub;
let ws: Workspace;
let root: string;
let remote: string;

beforeEach(async () => {
  api = await startFakeApi();
  github = await startFakeGitHub({ token: TOKEN });
  ws = makeWorkspace('huddle-backlog-run-');
  ({ root, remote } = await repoWithRemote(ws.dir));
});
afterEach(async () => {
  await api.close();
  await github.close();
  ws.cleanup();
});

function huddle(args: string[], env: Record<string, string> = {}, onSpawn?: (child: ChildProcess) => void) {
  return runCli(args, {
    cwd: root,
    timeoutMs: RUN_TIMEOUT_MS,
    ...(onSpawn ? { onSpawn } : {}),
    env: { ANTHROPIC_BASE_URL: api.url, GH_TOKEN: TOKEN, HUDDLE_IDLE_TIMEOUT_MS: '60000', ...TEST_GIT_IDENTITY, ...env },
  });
}

/** What each issue's teammate writes (by issue number). */
const FILES: Record<number, string> = { 1: 'hello.txt', 2: 'bye.txt', 3: 'notes.txt', 4: 'hello.txt', 5: 'bye.txt' };

// The token marker is put together inside the sandbox, so that no command line or file holds it
// whole except where it leaked to; then the environment, every process's environment and command
// line, the home directory's files and config, and the workspace are searched for it.
const SNOOP =
  "printf 'ghp_%s' huddlemarker > /tmp/.m; " +
  'hits=$( { env | grep -lF -f /tmp/.m; grep -lsF -f /tmp/.m /proc/[0-9]*/environ /proc/[0-9]*/cmdline "$HOME"/* "$HOME"/.* 2>/dev/null; ' +
  'grep -rlsF -f /tmp/.m ../../.. "$HOME/.config" 2>/dev/null; } | grep -v "^/tmp/.m$"); ' +
  'if [ -n "$hits" ]; then echo "FOUND: $hits"; else echo CLEAN; fi';

/** The lead approves every plan (unless huddle does) and ships every issue huddle says is reviewed; then says it is done. */
function leadStep(request: RecordedRequest, total: number, approvePlans: boolean): Scripted {
  const inbox = inboxMessages(allUserTexts(request));
  const past = pastToolUses(request);
  const decided = new Set(past.filter((use) => use.name === 'plan_approval').map((use) => use.input.request_id));
  const shipped = new Set(past.filter((use) => use.name === 'open_pull_request').map((use) => use.input.issue));
  const plans = approvePlans ? inbox.filter((m) => m.type === 'plan_approval_request' && !decided.has(m.request_id)) : [];
  const ready = inbox
    .map((m) => /ship it with open_pull_request \{"issue": (\d+)\}/.exec(m.content)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .filter((n) => !shipped.has(n));
  // A teammate that fixed failing checks: ship that issue again (once per fix).
  const fixes = inbox.map((m) => /issue (\d+) is fixed/.exec(m.content)?.[1]).filter((n): n is string => n !== undefined);
  const reshipped = past.filter((use) => use.name === 'open_pull_request').length - shipped.size;
  const again = fixes.slice(reshipped).map(Number);
  const calls = [
    ...plans.map((m) => toolUse('plan_approval', { request_id: m.request_id, approve: true })),
    ...[...new Set(ready)].map((issue) => toolUse('open_pull_request', { issue })),
    ...again.map((issue) => toolUse('open_pull_request', { issue })),
  ];
  if (calls.length) return reply(...calls);
  return replyText(shipped.size >= total ? `All ${total} issues shipped.` : 'Waiting for the team.');
}

/** An issue's teammate: a plan (when asked for one), then its file, a commit and the task completed. */
function builderStep(request: RecordedRequest, snoop: boolean): Scripted {
  const texts = allUserTexts(request).join('\n');
  const number = Number(/backlog issue #(\d+)/.exec(texts)![1]);
  const taskId = Number(/task #(\d+) \(assigned to you\)/.exec(texts)![1]);
  const past = pastToolUses(request);
  const planFirst = texts.includes('Send your plan (plan_approval');
  if (planFirst && !past.some((use) => use.name === 'plan_approval')) {
    return reply(toolUse('plan_approval', { plan: `Write ${FILES[number]}, commit it, complete the task.` }));
  }
  const approved = !planFirst || inboxMessages(allUserTexts(request)).some((m) => m.type === 'plan_approval_response' && m.approve);
  if (approved && !past.some((use) => use.name === 'write_file')) {
    return reply(
      toolUse('task_update', { task_id: taskId, status: 'in_progress' }),
      toolUse('write_file', { path: FILES[number]!, content: `issue ${number}\n` }),
      toolUse('bash', { command: `git add -A && git commit -q -m "Build ${number}: ${FILES[number]}" && git log --oneline -1` }),
      ...(snoop ? [toolUse('bash', { command: SNOOP })] : []),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  const failed = inboxMessages(allUserTexts(request)).filter((m) => /^The checks of .* failed/.test(m.content)).length;
  const writes = past.filter((use) => use.name === 'write_file').length;
  if (failed > 0 && writes < failed + 1) {
    return reply(
      toolUse('write_file', { path: FILES[number]!, content: `issue ${number}, fixed\n` }),
      toolUse('bash', { command: `git commit -qam "Fix the checks of ${number}"` }),
      toolUse('send_message', { to: 'lead', content: `issue ${number} is fixed` }),
    );
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Waiting.');
}

const reviewerStep = approvingReviewer('Meets the acceptance criteria.');

function script(total: number, options: { snoopIn?: string; leadApprovesPlans?: boolean; hang?: string } = {}): void {
  api.respond((request) => {
    if (request.agent === options.hang) return { kind: 'hang' };
    if (request.agent === 'lead') return leadStep(request, total, options.leadApprovesPlans ?? true);
    if (request.agent === 'reviewer') return reviewerStep(request);
    if (request.agent?.startsWith('issue-')) return builderStep(request, request.agent === options.snoopIn);
    return undefined;
  });
}

function runRecord(): RunRecord {
  const logs = path.join(root, '.team', 'logs');
  const file = readdirSync(logs)
    .filter((name) => /^run-.*\.json$/.test(name))
    .sort()
    .at(-1)!;
  return JSON.parse(readFileSync(path.join(logs, file), 'utf8')) as RunRecord;
}

async function remoteBranches(): Promise<string[]> {
  return (await git(remote, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/')).split('\n').filter(Boolean).sort();
}

function writeIssue(name: string, text: string): void {
  mkdirSync(path.join(root, '.team', 'backlog'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'backlog', name), text);
}

describeSandboxed('huddle run --backlog', () => {
  it(
    'turns a local backlog into reviewed branches on the remote and pull requests, stacked where an issue depends on another',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\nlabels: [feature]\n---\nWrite hello.txt.\n\n## Acceptance\n- hello.txt exists\n');
      writeIssue('2-farewell.md', '---\ntitle: Add a farewell\ndepends-on: 1\n---\nWrite bye.txt after the greeting.\n');
      writeIssue('3-notes.md', '---\ntitle: Add notes\n---\nWrite notes.txt.\n');
      writeIssue('4-broken.md', 'no front matter here\n');
      script(3, { snoopIn: 'issue-3-add-notes' });
      const result = await huddle(['run', '--backlog', 'local', '--github-api-url', github.url, '--pr-repo', 'acme/app', '--verify', 'git diff --quiet HEAD']);
      expect(result.stderr).toContain('huddle: skipped .team/backlog/4-broken.md: no front matter');
      expect(result.code, result.stderr).toBe(0);

      const b1 = 'huddle/issue-1-add-a-greeting';
      const b2 = 'huddle/issue-2-add-a-farewell';
      const b3 = 'huddle/issue-3-add-notes';
      expect(await remoteBranches()).toEqual([b1, b2, b3, 'main']);
      // Stacked: the farewell's branch was made from the greeting's, and carries its commit.
      await git(remote, 'merge-base', '--is-ancestor', b1, b2);
      expect(await git(remote, 'log', '--format=%s', `main..${b2}`)).toBe('Build 2: bye.txt\nBuild 1: hello.txt');
      expect(await git(remote, 'log', '--format=%s', `main..${b3}`)).toBe('Build 3: notes.txt');

      expect(github.violations).toEqual([]);
      expect(github.pulls.map((pr) => [pr.head, pr.base, pr.draft, pr.title]).sort()).toEqual([
        [b1, 'main', false, 'Add a greeting'],
        [b2, b1, false, 'Add a farewell'],
        [b3, 'main', false, 'Add notes'],
      ]);
      expect(github.requests.filter((r) => r.operation === 'pulls/create').every((r) => (r.body as { draft: boolean }).draft)).toBe(true);
      const body2 = github.pulls.find((pr) => pr.head === b2)!.body;
      expect(body2.split('\n')[0]).toMatch(/^Issue #\d \(\.team\/backlog\/2-farewell\.md\)$/);
      expect(body2).toContain(`Stacked on ${b1} (`);
      expect(body2).toContain('Write bye.txt, commit it, complete the task.');
      expect(body2).toContain('Approved by reviewer after 0 rounds of changes. Meets the acceptance criteria.');
      expect(body2).toMatch(/1 file · \+1 −0 · 1 commit · verify passing/);

      const record = runRecord();
      expect(
        record.backlog?.map((entry) => [entry.issue, entry.state, entry.base, entry.files.changed, entry.commits.length, entry.pull_request?.url]),
      ).toEqual([
        [1, 'shipped', 'main', 1, 1, expect.stringMatching(/\/pull\/\d+$/)],
        [2, 'shipped', b1, 1, 1, expect.stringMatching(/\/pull\/\d+$/)],
        [3, 'shipped', 'main', 1, 1, expect.stringMatching(/\/pull\/\d+$/)],
      ]);
      for (const entry of record.backlog!) {
        expect(entry.verify.at(-1)?.ok).toBe(true);
        expect(entry.model_calls).toBeGreaterThan(0);
        expect(entry.worktree).toBe(path.join('.team', 'worktrees', entry.branch.slice('huddle/'.length)));
        expect(entry.review).toMatchObject({ reviewer: 'reviewer', comment: 'Meets the acceptance criteria.' });
        expect(entry.plan).toMatch(/^Write /);
      }
      expect(result.stderr).toMatch(
        /huddle: #1 PR ready: 1 file · \+1 −0 · tests passing · \$\d+\.\d\d · \d+ turns · \d+ (seconds?|minutes?) · https:\/\/github\.invalid\/acme\/app\/pull\/\d+\n/,
      );
      expect(result.stderr).toMatch(/huddle: #2 PR ready: 1 file/);

      // The teammate's bash in the sandbox found the token nowhere; huddle's own records hold none either.
      const snooped = api.requests.filter((r) => r.agent === 'issue-3-add-notes').flatMap((r) => lastToolResults(r).map((t) => t.content));
      expect(snooped.some((text) => text.includes('CLEAN'))).toBe(true);
      expect(snooped.join('\n')).not.toContain('FOUND');
      const teamFiles = await git(ws.dir, 'grep', '--no-index', '-rlF', TOKEN, '--', path.join(root, '.team')).catch(() => '');
      expect(teamFiles).toBe('');
    },
    RUN_TIMEOUT_MS + 20_000,
  );

  it(
    'works a GitHub-sourced backlog: issues by label, dependencies from their bodies, pull requests that close them',
    async () => {
      github.issues.push(
        { number: 4, title: 'Add a greeting', body: 'Write hello.txt', labels: ['ready'] },
        { number: 5, title: 'Add a farewell', body: 'Depends on #4\nWrite bye.txt', labels: ['ready'] },
        { number: 6, title: 'Not for now', labels: ['later'] },
      );
      // The lead leaves the plans alone: huddle approves them after 0.6 s (--plan-approval auto-after:0.01).
      script(2, { leadApprovesPlans: false });
      const result = await huddle([
        'run',
        '--backlog',
        'github:acme/app?label=ready',
        '--github-api-url',
        github.url,
        '--plan-approval',
        'auto-after:0.01',
        '--output-format',
        'json',
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(github.violations).toEqual([]);
      expect(github.pulls.map((pr) => [pr.head, pr.base])).toEqual([
        ['huddle/issue-4-add-a-greeting', 'main'],
        ['huddle/issue-5-add-a-farewell', 'huddle/issue-4-add-a-greeting'],
      ]);
      expect(github.pulls[0]!.body).toContain('Closes https://github.invalid/acme/app/issues/4');
      expect(github.pulls[0]!.body).toContain('## Plan\n\nWrite hello.txt, commit it, complete the task.');
      expect(
        api.requests
          .filter((r) => r.agent === 'lead')
          .flatMap((r) => pastToolUses(r))
          .some((use) => use.name === 'plan_approval'),
      ).toBe(false);
      expect(await remoteBranches()).toEqual(['huddle/issue-4-add-a-greeting', 'huddle/issue-5-add-a-farewell', 'main']);
      const out = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { backlog: Array<{ issue: number; pull_request: { url: string } }> };
      expect(out.backlog.map((entry) => [entry.issue, entry.pull_request.url])).toEqual([
        [4, github.pulls[0]!.html_url],
        [5, github.pulls[1]!.html_url],
      ]);
      expect(existsSync(path.join(root, '.team', 'worktrees', 'issue-6-not-for-now'))).toBe(false);
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});

describeSandboxed('a backlog run stopped midway', () => {
  it(
    'goes on with --resume: the unfinished issue is built, nothing is done twice',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
      writeIssue('2-farewell.md', '---\ntitle: Add a farewell\ndepends-on: 1\n---\nWrite bye.txt.\n');
      writeIssue('3-notes.md', '---\ntitle: Add notes\n---\nWrite notes.txt.\n');
      const args = ['run', '--github-api-url', github.url, '--pr-repo', 'acme/app', '--plan-approval', 'off'];
      // The farewell's teammate hangs in its first model call; once the other two are shipped, huddle is stopped.
      script(3, { hang: 'issue-2-add-a-farewell' });
      let child: ChildProcess | undefined;
      const first = huddle(args, {}, (started) => (child = started));
      for (let i = 0; i < 2400 && !(github.pulls.length >= 2 && api.requests.some((r) => r.agent === 'issue-2-add-a-farewell')); i++) {
        await new Promise((done) => setTimeout(done, 50));
      }
      child!.kill('SIGTERM');
      const stopped = await first;
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(github.pulls.map((pr) => pr.head).sort()).toEqual(['huddle/issue-1-add-a-greeting', 'huddle/issue-3-add-notes']);

      script(3);
      const resumed = await huddle([...args, '--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(github.violations).toEqual([]);
      expect(github.pulls.map((pr) => [pr.head, pr.base]).sort()).toEqual([
        ['huddle/issue-1-add-a-greeting', 'main'],
        ['huddle/issue-2-add-a-farewell', 'huddle/issue-1-add-a-greeting'],
        ['huddle/issue-3-add-notes', 'main'],
      ]);
      expect(github.requests.filter((r) => r.operation === 'pulls/create')).toHaveLength(3);
      for (const branch of ['huddle/issue-1-add-a-greeting', 'huddle/issue-3-add-notes']) {
        expect(await git(remote, 'log', '--format=%s', `main..${branch}`)).toMatch(/^Build \d: \w+\.txt$/);
      }
      const record = runRecord();
      expect(record.backlog?.map((entry) => [entry.issue, entry.state])).toEqual([
        [1, 'shipped'],
        [2, 'shipped'],
        [3, 'shipped'],
      ]);
    },
    2 * RUN_TIMEOUT_MS,
  );
});

describeSandboxed('a pull request whose checks fail', () => {
  it(
    'goes back to its teammate, is fixed on the branch, shipped again, and passes',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
      const branch = 'huddle/issue-1-add-a-greeting';
      github.checks.set(branch, [{ name: 'test', status: 'completed', conclusion: 'failure' }]);
      script(1);
      const running = huddle(['run', '--github-api-url', github.url, '--pr-repo', 'acme/app', '--plan-approval', 'off'], { HUDDLE_CHECKS_POLL_MS: '200' });
      // Once the fix is committed (huddle copies the branch into the workspace after each command), CI passes.
      for (let i = 0; i < 2400; i++) {
        const log = await execa('git', ['log', '--format=%s', branch], { cwd: root, reject: false });
        if (log.stdout.includes('Fix the checks')) break;
        await new Promise((done) => setTimeout(done, 50));
      }
      github.checks.set(branch, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      expect(github.violations).toEqual([]);
      const told = api.requests.filter((r) => r.agent === 'issue-1-add-a-greeting').flatMap((r) => inboxMessages(allUserTexts(r)));
      expect(told.some((m) => m.content.startsWith(`The checks of ${github.pulls[0]!.html_url} failed: test.`))).toBe(true);
      expect(github.pulls).toHaveLength(1);
      expect(github.requests.filter((r) => r.operation === 'pulls/update')).toHaveLength(1);
      expect(await git(remote, 'log', '--format=%s', `main..${branch}`)).toBe('Fix the checks of 1\nBuild 1: hello.txt');
      const [entry] = runRecord().backlog!;
      expect(entry).toMatchObject({ checks: { state: 'passed', failed: [] }, state: 'shipped' });
      expect(result.stderr).toMatch(/huddle: #1 PR ready: 1 file · \+1 −0 · tests passing/);
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});

describeSandboxed('a pull request whose checks are not listed yet', () => {
  it(
    'in a repository that runs CI, waits for them to be listed, and records them once they pass',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
      const branch = 'huddle/issue-1-add-a-greeting';
      // The repository runs CI (its base branch has check runs); the pull request's are not listed at first.
      github.checks.set('main', [{ name: 'test', status: 'completed', conclusion: 'success' }]);
      script(1);
      const running = huddle(['run', '--github-api-url', github.url, '--pr-repo', 'acme/app', '--plan-approval', 'off'], { HUDDLE_CHECKS_POLL_MS: '100' });
      // huddle has read the branch's checks once and found none; then GitHub lists them, passed.
      const readBranch = () => github.requests.some((r) => r.operation === 'checks/list-for-ref' && decodeURIComponent(r.path).includes(`/commits/${branch}/`));
      for (let i = 0; i < 2400 && !readBranch(); i++) await new Promise((done) => setTimeout(done, 50));
      expect(readBranch()).toBe(true);
      github.checks.set(branch, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      expect(github.violations).toEqual([]);
      const [entry] = runRecord().backlog!;
      expect(entry).toMatchObject({ checks: { state: 'passed', failed: [] }, state: 'shipped' });
      const toLead = api.requests.filter((r) => r.agent === 'lead').flatMap((r) => inboxMessages(allUserTexts(r)));
      expect(toLead.some((m) => m.content.endsWith(`pull request ${github.pulls[0]!.html_url} passed.`))).toBe(true);
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});

describeSandboxed('a playbook of its own', () => {
  it(
    'is followed: no plan, no review, no pull request; a verify command past its retry cap gives the issue up, and the record says why',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
      mkdirSync(path.join(root, '.team', 'playbooks'), { recursive: true });
      writeFileSync(
        path.join(root, '.team', 'playbooks', 'strict.md'),
        '---\nphases:\n  - phase: implement\n    verify: test -f never-there.txt\n    retries: 0\n---\nKeep it small.\n',
      );
      script(1);
      const result = await huddle(['run', '--playbook', 'strict', '--github-api-url', github.url, '--pr-repo', 'acme/app']);
      // The run ends (nothing waits on a given-up issue) and fails: its task is not done.
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/huddle: #1 failed: 1 file · \+1 −0 · tests failing · /);
      const builder = api.requests.filter((r) => r.agent === 'issue-1-add-a-greeting');
      const first = allUserTexts(builder[0]!).join('\n');
      expect(first).toContain('following the playbook strict');
      expect(first).toContain(
        '1. Make the change and commit it (git add -A && git commit -m "..."). Completing the task runs its verify command (test -f never-there.txt)',
      );
      expect(first).toContain('Keep it small.');
      expect(first).not.toContain('plan_approval');
      expect(api.requests.some((r) => r.agent === 'reviewer')).toBe(false);
      const told = inboxMessages(allUserTexts(builder.at(-1)!));
      expect(told.some((m) => m.content.startsWith(`Stop working on issue #${1}: its verify command failed 1 time (the playbook allows 0 retries)`))).toBe(
        true,
      );
      expect(github.pulls).toEqual([]);
      const [entry] = runRecord().backlog!;
      expect(entry).toMatchObject({ state: 'failed', phase: 'failed', failed_because: 'its verify command failed 1 time (the playbook allows 0 retries)' });
      expect(entry!.verify).toEqual([expect.objectContaining({ ok: false })]);
      expect(entry!.approver).toBeUndefined();
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});

describeSandboxed('a playbook whose review runs on another model', () => {
  it(
    'starts the reviewer on that model and the builder on the run’s, and ships what it approves',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
      mkdirSync(path.join(root, '.team', 'playbooks'), { recursive: true });
      writeFileSync(
        path.join(root, '.team', 'playbooks', 'second-opinion.md'),
        '---\nphases:\n  - phase: implement\n    gate: none\n  - phase: review\n    model: claude-haiku-4-5\n    domains: [security, polish]\n  - phase: ship\n---\n',
      );
      script(1);
      const result = await huddle(['run', '--playbook', 'second-opinion', '--github-api-url', github.url, '--pr-repo', 'acme/app']);
      expect(result.code, result.stderr).toBe(0);
      const models = (agent: string) => new Set(api.requests.filter((r) => r.agent === agent).map((r) => (r.body as { model: string }).model));
      expect([...models('reviewer')]).toEqual(['claude-haiku-4-5']);
      expect(models('issue-1-add-a-greeting').has('claude-haiku-4-5')).toBe(false);
      const review = allUserTexts(api.requests.find((r) => r.agent === 'reviewer' && allUserTexts(r).join('\n').includes('<review-requested>'))!).join('\n');
      expect(review).toContain('Review it in one pass per domain (security, polish)');
      expect(github.pulls.map((pr) => pr.head)).toEqual(['huddle/issue-1-add-a-greeting']);
      expect(runRecord().backlog![0]).toMatchObject({ state: 'shipped', verify: [] });
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});

it('refuses a bad source, flag or empty backlog in one line, before any agent runs', async () => {
  const bad = await huddle(['run', '--backlog', 'jira:PROJ']);
  expect(bad).toMatchObject({
    code: 2,
    stderr: "huddle: --backlog takes local or github:OWNER/REPO[?label=NAME], not 'jira:PROJ'\nRun 'huddle --help' for usage.\n",
  });
  const flag = await huddle(['run', '--plan-approval', 'sometimes']);
  expect(flag.stderr.split('\n')[0]).toBe("huddle: --plan-approval takes lead, person, off or auto-after[:MINUTES], not 'sometimes'");
  const book = await huddle(['run', '--playbook', 'nightly']);
  expect(book).toMatchObject({ code: 2, stderr: "huddle: no playbook 'nightly': the playbooks are issue-to-pr (files in .team/playbooks/NAME.md)\n" });
  mkdirSync(path.join(root, '.team', 'playbooks'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'playbooks', 'loose.md'), '---\nphases:\n  - phase: plan\n  - phase: implement\n---\n');
  const loose = await huddle(['run', '--playbook', 'loose']);
  expect(loose).toMatchObject({ code: 2, stderr: 'huddle: .team/playbooks/loose.md: phases: a plan phase needs an approval phase after it\n' });
  const base = await huddle(['run', '--base', 'nowhere']);
  expect(base).toMatchObject({ code: 2, stderr: `huddle: --base nowhere: there is no such branch in ${root}\n` });
  writeIssue('1-bad.md', '---\ntitle: [\n---\n');
  const empty = await huddle(['run']);
  expect(empty.code).toBe(2);
  expect(empty.stderr).toMatch(
    /^huddle: skipped \.team\/backlog\/1-bad\.md: front matter is not YAML: [^\n]*\nhuddle: the backlog \(local\) has no issue to work on\n$/,
  );
  expect(api.requests).toEqual([]);
});

it('huddle merge brings an issue branch into the current branch, and refuses a conflict in one line', async () => {
  await git(root, 'branch', 'huddle/issue-7-add-a-file');
  await git(root, 'branch', 'huddle/issue-8-edit-readme');
  const commitOn = async (branch: string, file: string, text: string) => {
    await git(root, 'checkout', '-q', branch);
    writeFileSync(path.join(root, file), text);
    await git(root, 'add', file);
    await git(root, 'commit', '-q', '-m', `${branch}: ${file}`);
    await git(root, 'checkout', '-q', 'main');
  };
  await commitOn('huddle/issue-7-add-a-file', 'added.txt', 'new\n');
  await commitOn('huddle/issue-8-edit-readme', 'README.md', '# theirs\n');
  await commitOn('main', 'README.md', '# ours\n');
  // A backlog run's task for the issue that is not approved yet holds the merge back.
  const board = new FileBoard(new HuddleWorkspace(root).tasksDir);
  const task = await board.create({ subject: `Issue #${7}: Add a file` }, 'lead');
  await board.claim(task.id, 'issue-7-add-a-file');
  const early = await huddle(['merge', '7']);
  expect(early).toMatchObject({
    code: 1,
    stderr: `huddle: issue #${7} is not reviewed yet: its task #${task.id} is in_progress; merge huddle/issue-7-add-a-file once it is approved (or with git merge, by hand)\n`,
  });
  await board.update(task.id, { status: 'completed' }, 'issue-7-add-a-file');
  board.close();
  const merged = await huddle(['merge', '7']);
  expect(merged.code, merged.stderr).toBe(0);
  expect(merged.stdout).toBe('merged huddle/issue-7-add-a-file into main (1 commit)\n');
  expect(readFileSync(path.join(root, 'added.txt'), 'utf8')).toBe('new\n');
  const head = await git(root, 'rev-parse', 'HEAD');
  const conflict = await huddle(['merge', 'huddle/issue-8-edit-readme']);
  expect(conflict.code).toBe(1);
  expect(conflict.stderr).toBe('huddle: merging huddle/issue-8-edit-readme conflicts in README.md; nothing was merged, both branches as they were\n');
  expect(await git(root, 'rev-parse', 'HEAD')).toBe(head);
  expect(await git(root, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  const unknown = await huddle(['merge', '99']);
  expect(unknown).toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/^huddle: no branch huddle\/issue-99-… in .*: was issue #\d+ part of a backlog run here\?\n$/),
  });
});
