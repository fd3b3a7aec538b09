// `huddle watch --backlog` (docs/backlog.md#watching-a-backlog): the built CLI on the fake Messages API, the
// fake GitHub (held to GitHub's OpenAPI description) and a bare repository as origin. An issue whose pull
// request is open is skipped; a labelled issue is picked; one labelled after the start waits while
// --max-concurrent issues are in flight and is picked on a tick after; with --pause-when-prs pull
// requests open nothing more is picked; Ctrl+C (SIGINT) stops it, the team left resumable.
import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { allUserTexts, inboxMessages, lastToolResults, pastToolUses } from '../../helpers/team-harness.js';
import { startFakeGitHub, type FakeGitHub } from '../../helpers/fake-github.js';
import { approvingReviewer, repoWithRemote } from '../../helpers/backlog-repo.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { Workspace as HuddleWorkspace } from '../../../src/runtime/workspace/workspace.js';

const TOKEN = 'ghp_huddlewatch0123456789abcdefghijklm';

let api: FakeApi;
let github: FakeGitHub;
let ws: Workspace;
let root: string;

beforeEach(async () => {
  api = await startFakeApi();
  github = await startFakeGitHub({
    token: TOKEN,
    issues: [
      { number: 1, title: 'Old work', labels: ['huddle'] },
      { number: 2, title: 'Add a greeting', body: 'Write hello.txt.', labels: ['huddle'] },
    ],
  });
  // The first issue has a pull request open already (someone else's work on it).
  github.pulls.push({
    number: 10,
    node_id: 'PR_10',
    title: 'Old work',
    body: '',
    head: 'huddle/issue-1-old-work',
    base: 'main',
    draft: false,
    state: 'open',
    html_url: 'https://github.invalid/acme/app/pull/10',
  });
  ws = makeWorkspace('huddle-backlog-watch-');
  ({ root } = await repoWithRemote(ws.dir));
});
afterEach(async () => {
  await api.close();
  await github.close();
  ws.cleanup();
});

function leadStep(request: RecordedRequest): Scripted {
  const shipped = new Set(
    pastToolUses(request)
      .filter((use) => use.name === 'open_pull_request')
      .map((use) => use.input.issue),
  );
  const ready = inboxMessages(allUserTexts(request))
    .map((m) => /ship it with open_pull_request \{"issue": (\d+)\}/.exec(m.content)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .filter((n) => !shipped.has(n));
  if (ready.length) return reply(...[...new Set(ready)].map((issue) => toolUse('open_pull_request', { issue })));
  return replyText('Waiting for the team.');
}

function builderStep(request: RecordedRequest): Scripted {
  const texts = allUserTexts(request).join('\n');
  const number = Number(/backlog issue #(\d+)/.exec(texts)![1]);
  const taskId = Number(/task #(\d+) \(assigned to you\)/.exec(texts)![1]);
  if (!pastToolUses(request).some((use) => use.name === 'write_file')) {
    return reply(
      toolUse('task_update', { task_id: taskId, status: 'in_progress' }),
      toolUse('write_file', { path: `file-${number}.txt`, content: `issue ${number}\n` }),
      toolUse('bash', { command: `git add -A && git commit -q -m "Build ${number}"` }),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Done.');
}

const reviewerStep = approvingReviewer('Fine.');

/** The watch's stderr as it comes, and a wait for a line in it (no sleeps: each chunk is looked at as it arrives). */
class Stderr {
  text = '';
  #waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  attach(child: ChildProcess): void {
    child.stderr!.on('data', (chunk: Buffer | string) => {
      this.text += String(chunk);
      this.#waiters = this.#waiters.filter((w) => (w.pattern.test(this.text) ? (w.resolve(), false) : true));
    });
  }
  /** The deadline only catches a hang, and says what stderr held then. */
  waitFor(pattern: RegExp, deadlineMs = 100_000): Promise<void> {
    if (pattern.test(this.text)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stderr never matched ${pattern}; it holds:\n${this.text}`)), deadlineMs);
      this.#waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

describeSandboxed('huddle watch --backlog', () => {
  it('picks new issues on its ticks within its guards, and stops on Ctrl+C', async () => {
    api.respond((request) => {
      if (request.agent === 'lead') return leadStep(request);
      if (request.agent === 'reviewer') return reviewerStep(request);
      if (request.agent?.startsWith('issue-')) return builderStep(request);
      return undefined;
    });
    const stderr = new Stderr();
    let child: ChildProcess | undefined;
    const done = runCli(
      [
        'watch',
        '--backlog',
        'github:acme/app?label=huddle',
        '--github-api-url',
        github.url,
        '--interval',
        '0.2',
        '--max-concurrent',
        '1',
        '--pause-when-prs',
        '3',
        '--plan-approval',
        'off',
      ],
      {
        cwd: root,
        timeoutMs: 200_000,
        env: { ANTHROPIC_BASE_URL: api.url, GH_TOKEN: TOKEN, HUDDLE_IDLE_TIMEOUT_MS: '120000', HUDDLE_CHECKS_POLL_MS: '0', ...TEST_GIT_IDENTITY },
        onSpawn: (started) => {
          child = started;
          stderr.attach(started);
        },
      },
    );
    await stderr.waitFor(/huddle watch: picked #2 Add a greeting/);
    await stderr.waitFor(/huddle watch: skipped #1 Old work: its pull request https:\/\/github\.invalid\/acme\/app\/pull\/10 is open/);
    // Labelled after the start: it waits while #2 is in flight (--max-concurrent 1), then is picked.
    github.issues.push({ number: 3, title: 'Add a farewell', body: 'Write bye.txt.', labels: ['huddle'] });
    await stderr.waitFor(/huddle watch: waiting: #3 Add a farewell \(1 in flight, --max-concurrent 1\)/);
    await stderr.waitFor(/huddle watch: picked #3 Add a farewell/);
    // #2 and #3 shipped: with #1's, three pull requests await review, so nothing is picked, #4 neither.
    await stderr.waitFor(/huddle watch: paused: 3 pull requests await review \(--pause-when-prs 3\); not picking #1\n/);
    github.issues.push({ number: 4, title: 'Add notes', labels: ['huddle'] });
    await stderr.waitFor(/huddle watch: paused: 3 pull requests await review \(--pause-when-prs 3\); not picking #1, #4\n/);
    expect(
      github.pulls
        .filter((pull) => pull.state === 'open')
        .map((pull) => pull.head)
        .sort(),
    ).toEqual(['huddle/issue-1-old-work', 'huddle/issue-2-add-a-greeting', 'huddle/issue-3-add-a-farewell']);
    child!.kill('SIGINT');
    const result = await done;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).not.toMatch(/picked #4|picked #1/);
    expect(result.stderr).toMatch(/#2 PR ready/);
    expect(github.violations).toEqual([]);
  }, 240_000);

  it('leaves an issue in flight at Ctrl+C for huddle run --backlog --resume, which ships it once', async () => {
    github.issues.splice(0, 1); // only the greeting
    github.pulls.splice(0);
    let hang = true;
    api.respond((request) => {
      if (request.agent === 'lead') return leadStep(request);
      if (request.agent === 'reviewer') return reviewerStep(request);
      if (request.agent?.startsWith('issue-')) return hang ? { kind: 'hang' } : builderStep(request);
      return undefined;
    });
    const env = { ANTHROPIC_BASE_URL: api.url, GH_TOKEN: TOKEN, HUDDLE_IDLE_TIMEOUT_MS: '120000', HUDDLE_CHECKS_POLL_MS: '0', ...TEST_GIT_IDENTITY };
    const source = ['--backlog', 'github:acme/app?label=huddle', '--github-api-url', github.url, '--plan-approval', 'off'];
    const stderr = new Stderr();
    let child: ChildProcess | undefined;
    const watching = runCli(['watch', ...source, '--interval', '0.2'], {
      cwd: root,
      timeoutMs: 200_000,
      env,
      onSpawn: (started) => {
        child = started;
        stderr.attach(started);
      },
    });
    await stderr.waitFor(/huddle watch: picked #2 Add a greeting/);
    // The teammate's first model call is under way (and never answered): the issue is in flight.
    await waitForRequest(api, (r) => r.agent === 'issue-2-add-a-greeting');
    child!.kill('SIGINT');
    expect((await watching).code).toBe(130);
    expect(github.pulls).toEqual([]);

    hang = false;
    const resumed = await runCli(['run', ...source, '--resume'], { cwd: root, timeoutMs: 200_000, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(github.pulls.map((pull) => pull.head)).toEqual(['huddle/issue-2-add-a-greeting']);
    // Found again by its subject, not made twice.
    const board = new FileBoard(new HuddleWorkspace(root).tasksDir);
    try {
      const tasks = await board.list();
      expect(tasks.map((task) => [task.owner, task.subject.endsWith(': Add a greeting')])).toEqual([['issue-2-add-a-greeting', true]]);
    } finally {
      board.close();
    }
  }, 300_000);

  it('refuses bad flags in one line', async () => {
    const result = await runCli(['watch', '--backlog', 'local', '--interval', 'soon'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "huddle: huddle watch: option '--interval <seconds>' argument 'soon' is invalid. --interval takes a number above 0, not 'soon'\nRun 'huddle --help' for usage.\n",
    );
  });
});

async function waitForRequest(fake: FakeApi, match: (request: RecordedRequest) => boolean): Promise<RecordedRequest> {
  for (let seen = fake.requests.length; ; seen = fake.requests.length) {
    const found = fake.requests.find(match);
    if (found) return found;
    await fake.waitForRequests(seen + 1, 60_000);
  }
}
