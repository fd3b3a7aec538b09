// The whole backlog flow, headless (docs/playbooks.md, docs/backlog.md): the built CLI against the fake
// Messages API, the fake GitHub (held to GitHub's OpenAPI description) and a real bare repository as
// `origin`. Six issues, three from the local backlog and three from the fake GitHub, two of them
// depending on another, follow the built-in issue-to-pr playbook: each plan waits for the person
// (plans.approver auto-after, from --plan-approval), who approves four with `huddle approve` from
// another process and edits one (`--edit FILE`) while the run waits; the sixth is approved by the
// timer. Each is built with its verify command green and reviewed by a second agent, which files a
// security finding on one: the approval is refused until the builder fixes it. The run is killed while
// the sixth plan still waits and resumed with --resume: that plan, answered by nobody, is asked again
// (its builder read-only until then) and the timer approves it; in the end there are six branches on
// the remote and six pull requests (stacked where dependent), each created once, with their checks
// read, and the record lists all six.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { allUserTexts, inboxMessages, lastToolResults, lastUserTexts, pastToolUses, toolNames } from '../../helpers/team-harness.js';
import { startFakeGitHub, type FakeGitHub } from '../../helpers/fake-github.js';
import { git, repoWithRemote } from '../../helpers/backlog-repo.js';
import { makeWorkspace, runCli, type CliResult, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import type { RunRecord } from '../../../src/runtime/record/run-record.js';

const TOKEN = 'ghp_huddlemarker0123456789abcdefghijkl';
// Six issues through plan, build, review and ship twice over (killed and resumed), one plan waiting a
// minute for its timer, on a machine that may be busy: the bound only catches a hang.
const RUN_TIMEOUT_MS = 420_000;

let api: FakeApi;
let github: FakeGitHub;
let ws: Workspace;
let root: string;
let remote: string;

beforeEach(async () => {
  api = await startFakeApi();
  github = await startFakeGitHub({ token: TOKEN });
  ws = makeWorkspace('huddle-backlog-e2e-');
  ({ root, remote } = await repoWithRemote(ws.dir));
});
afterEach(async () => {
  await api.close();
  await github.close();
  ws.cleanup();
});

const ENV = {
  GH_TOKEN: TOKEN,
  HUDDLE_CHECKS_POLL_MS: '200',
  // The timer's plan waits a minute: its teammate must not leave for idleness meanwhile.
  HUDDLE_IDLE_TIMEOUT_MS: '600000',
  ...TEST_GIT_IDENTITY,
};

function huddle(args: string[], onSpawn?: (child: ChildProcess) => void) {
  return runCli(args, { cwd: root, timeoutMs: RUN_TIMEOUT_MS, ...(onSpawn ? { onSpawn } : {}), env: { ANTHROPIC_BASE_URL: api.url, ...ENV } });
}

/** The person, from another shell: `huddle approvals` / `huddle approve` against the live run. */
const person = (...args: string[]) => runCli(args, { cwd: root, timeoutMs: 60_000, env: ENV });

/** What each issue's builder writes (by issue number); the person's edit makes the third write notes.md. */
const FILES: Record<number, string> = { 1: 'hello.txt', 2: 'bye.txt', 3: 'notes.txt', 4: 'token.txt', 5: 'usage.txt', 6: 'license.txt' };
const EDITED_PLAN = 'Write notes.md (Markdown, not notes.txt), commit it, complete the task.\n';
/** The issue the reviewer finds a security problem in. */
const SECURITY_ISSUE = 4;

/**
 * The lead ships each issue huddle says is reviewed, once per time it is told (it is never asked about a plan:
 * they go to the person). Told again after a resume (a call the kill cut short opened nothing), it ships again.
 */
function leadStep(request: RecordedRequest): Scripted {
  const inbox = inboxMessages(allUserTexts(request));
  const calls = new Map<number, number>();
  for (const use of pastToolUses(request).filter((u) => u.name === 'open_pull_request'))
    calls.set(Number(use.input.issue), (calls.get(Number(use.input.issue)) ?? 0) + 1);
  const told = new Map<number, number>();
  for (const m of inbox) {
    const n = /ship it with open_pull_request \{"issue": (\d+)\}/.exec(m.content)?.[1];
    if (n !== undefined) told.set(Number(n), (told.get(Number(n)) ?? 0) + 1);
  }
  const ready = [...told].filter(([issue, times]) => times > (calls.get(issue) ?? 0)).map(([issue]) => issue);
  if (ready.length) return reply(...ready.map((issue) => toolUse('open_pull_request', { issue })));
  return replyText(calls.size >= 6 ? 'All 6 issues shipped.' : 'Waiting for the team.');
}

/** An issue's builder: its plan, then (once approved, as edited) its file, a commit, the task completed; a fix per request for changes. */
function builderStep(request: RecordedRequest): Scripted {
  const texts = allUserTexts(request);
  const joined = texts.join('\n');
  const number = Number(/backlog issue #(\d+)/.exec(joined)![1]);
  const taskId = Number(/task #(\d+) \(assigned to you\)/.exec(joined)![1]);
  const past = pastToolUses(request);
  const inbox = inboxMessages(texts);
  // A plan not answered before the kill is asked again after the resume (the builder is read-only until then).
  const askAgain =
    toolNames(request).includes('plan_approval') &&
    lastUserTexts(request).join('\n').includes('you were resumed') &&
    !inbox.some((m) => m.type === 'plan_approval_response');
  if (!past.some((use) => use.name === 'plan_approval') || askAgain) {
    return reply(toolUse('plan_approval', { plan: `Write ${FILES[number]}, commit it, complete the task.` }));
  }
  const approval = inbox.find((m) => m.type === 'plan_approval_response' && m.approve);
  if (!approval) return replyText('Waiting for the plan to be approved.');
  const file = approval.plan?.includes('notes.md') ? 'notes.md' : FILES[number]!;
  const writes = past.filter((use) => use.name === 'write_file').length;
  const changes = inbox.filter((m) => m.from === 'reviewer').length;
  const built = `issue ${number}\n`;
  const fixed = `issue ${number}, the token read from the environment\n`;
  if (writes === 0) {
    return reply(
      toolUse('task_update', { task_id: taskId, status: 'in_progress' }),
      toolUse('write_file', { path: file, content: built }),
      toolUse('bash', { command: `git add -A && git commit -q -m "Build ${number}: ${file}"` }),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  // Resumed after the kill with its task still open: the kill may have cut the round anywhere (before the write,
  // between the write and the commit, before the completion), so the round is done again, each step only if it
  // is still needed. A round after the reviewer asked for changes is the fix, whatever the kill left on disk.
  const last = lastUserTexts(request).join('\n');
  if (last.includes('you were resumed') && new RegExp(`#${taskId}\\D`).test(last)) {
    const fixing = changes > 0;
    const message = fixing ? `Fix ${number}: no token in clear` : `Build ${number}: ${file}`;
    return reply(
      toolUse('write_file', { path: file, content: fixing ? fixed : built }),
      toolUse('bash', { command: `git add -A && (git diff --cached --quiet || git commit -q -m "${message}")` }),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  if (writes < 1 + changes) {
    return reply(
      toolUse('write_file', { path: file, content: fixed }),
      toolUse('bash', { command: `git commit -qam "Fix ${number}: no token in clear"` }),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Waiting.');
}

/**
 * The second agent: one decision per review request. On the security issue's first review it files a
 * blocking security finding and a polish one and tries to approve anyway (refused), then asks for
 * changes; every other review approves. Each review starts from a fresh context: the turn says which
 * review it is.
 */
function reviewerStep(request: RecordedRequest): Scripted {
  // The review under way: the last review request and the tool calls made since (a resumed reviewer's
  // first review keeps the conversation before it).
  type Turn = { role: string; content: string | Array<{ type: string; text?: string; name?: string; input?: any }> };
  const turns = (request.body as { messages: Turn[] }).messages;
  const textOf = (turn: Turn) => (typeof turn.content === 'string' ? turn.content : turn.content.map((block) => block.text ?? '').join('\n'));
  const at = turns.findLastIndex((turn) => turn.role === 'user' && textOf(turn).includes('<review-requested>'));
  const turn = at < 0 ? null : /<review-requested>Task #(\d+): Issue #(\d+)[\s\S]*?(First review\.|Review \d+:)/.exec(textOf(turns[at]!));
  const since = turns
    .slice(at + 1)
    .filter((t) => t.role === 'assistant' && typeof t.content !== 'string')
    .flatMap((t) => (t.content as Array<{ type: string; name?: string; input?: any }>).filter((block) => block.type === 'tool_use'));
  const decided = since.some((use) => use.name === 'review_request_changes' || (use.name === 'review_approve' && use.input.comment !== 'despite the finding'));
  if (turn && !decided) {
    const task = Number(turn[1]);
    const issue = Number(turn[2]);
    if (issue === SECURITY_ISSUE && turn[3] === 'First review.') {
      if (!since.some((use) => use.name === 'review_finding'))
        return reply(
          toolUse('review_finding', {
            task_id: task,
            domain: 'security',
            severity: 'high',
            file: FILES[issue]!,
            line: 1,
            text: 'The token is written in clear.',
          }),
          toolUse('review_finding', { task_id: task, domain: 'polish', severity: 'low', file: FILES[issue]!, text: 'Say where the token comes from.' }),
          toolUse('review_approve', { task_id: task, comment: 'despite the finding' }),
        );
      return reply(toolUse('review_request_changes', { task_id: task, feedback: 'Read the token from the environment; never write it.' }));
    }
    return reply(toolUse('review_approve', { task_id: task, comment: 'Meets the acceptance criteria.' }));
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Ready to review.');
}

function script(): void {
  api.respond((request) => {
    if (request.agent === 'lead') return leadStep(request);
    if (request.agent === 'reviewer') return reviewerStep(request);
    if (request.agent?.startsWith('issue-')) return builderStep(request);
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

function writeIssue(name: string, text: string): void {
  mkdirSync(path.join(root, '.team', 'backlog'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'backlog', name), text);
}

/** The newest request of an agent whose name starts with `prefix`. */
function lastOf(prefix: string): RecordedRequest {
  return api.requests.filter((r) => r.agent?.startsWith(prefix)).at(-1)!;
}

function planAnswers(prefix: string) {
  return inboxMessages(allUserTexts(lastOf(prefix))).filter((m) => m.type === 'plan_approval_response');
}

interface Waiting {
  id: string;
  agent: string;
  kind: string;
}

describeSandboxed('a backlog of six issues, headless', () => {
  it(
    'becomes six reviewed pull requests: plans approved by the person (one edited) and the timer, a security finding fixed, killed and resumed',
    async () => {
      writeIssue('1-greeting.md', '---\ntitle: Add a greeting\nlabels: [feature]\n---\nWrite hello.txt.\n\n## Acceptance\n- hello.txt exists\n');
      writeIssue('2-farewell.md', '---\ntitle: Add a farewell\ndepends-on: 1\n---\nWrite bye.txt after the greeting.\n');
      writeIssue('3-notes.md', '---\ntitle: Add notes\n---\nWrite the notes.\n');
      github.issues.push(
        { number: 4, title: 'Read the token', body: 'Write token.txt', labels: ['ready'] },
        { number: 5, title: 'Document the token', body: 'Depends on #4\nWrite usage.txt', labels: ['ready'] },
        { number: 6, title: 'Add a license', body: 'Write license.txt', labels: ['ready'] },
        { number: 7, title: 'Not for now', labels: ['later'] },
      );
      const branches = {
        1: 'huddle/issue-1-add-a-greeting',
        2: 'huddle/issue-2-add-a-farewell',
        3: 'huddle/issue-3-add-notes',
        4: 'huddle/issue-4-read-the-token',
        5: 'huddle/issue-5-document-the-token',
        6: 'huddle/issue-6-add-a-license',
      } as const;
      for (const branch of Object.values(branches)) github.checks.set(branch, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
      const args = [
        'run',
        '--backlog',
        'local',
        '--backlog',
        'github:acme/app?label=ready',
        '--github-api-url',
        github.url,
        '--plan-approval',
        'auto-after:2',
        '--verify',
        'git diff --quiet HEAD',
      ];
      script();
      // The run the person answers; once it has ended nobody is left to ask, and its stderr says why.
      let running: { ended?: CliResult } = {};
      const watch = (run: Promise<CliResult>) => {
        const state: { ended?: CliResult } = {};
        void run.then((result) => (state.ended = result));
        running = state;
        return run;
      };
      let child: ChildProcess | undefined;
      const first = watch(huddle(args, (started) => (child = started)));

      // The person, from another process: approves every plan but the sixth issue's as it comes, editing the third's.
      const edit = path.join(ws.dir, 'edited-plan.md');
      writeFileSync(edit, EDITED_PLAN);
      const answered = new Set<string>();
      const deadline = Date.now() + RUN_TIMEOUT_MS;
      let waiting: Waiting[] = [];
      const answer = async (enough: () => boolean) => {
        while (!enough()) {
          const ended = running.ended;
          if (ended || Date.now() > deadline)
            throw new Error(
              `the person answered only ${[...answered].join(', ')}` +
                (ended ? `; the run ended first (exit ${ended.code}): ${ended.stderr.slice(-3000)}` : ''),
            );
          const listed = await person('approvals', '--json');
          if (listed.code !== 0) continue;
          waiting = (JSON.parse(listed.stdout) as Waiting[]).filter((w) => w.kind === 'plan');
          for (const plan of waiting) {
            if (answered.has(plan.agent) || plan.agent.startsWith('issue-6-')) continue;
            const said = plan.agent.startsWith('issue-3-') ? await person('approve', plan.id, '--edit', edit) : await person('approve', plan.id);
            expect(said.code, said.stderr).toBe(0);
            answered.add(plan.agent);
          }
        }
      };
      const has = (n: number) => [...answered].some((agent) => agent.startsWith(`issue-${n}-`));
      // The first three plans answered while the sixth waits (its timer has a minute): the run is stopped there.
      await answer(() => has(1) && has(3) && has(4) && github.pulls.length > 0 && waiting.some((w) => w.agent.startsWith('issue-6-')));
      const waitingAtKill = new Set(waiting.filter((w) => !answered.has(w.agent)).map((w) => w.agent));
      child!.kill('SIGTERM');
      const stopped = await first;
      expect(stopped.code, JSON.stringify(stopped)).toBe(130);
      expect(github.pulls.length).toBeLessThan(6);

      // Resumed: the plans that waited are asked again; the person answers the rest; the timer approves the sixth.
      script();
      const resuming = watch(huddle([...args, '--resume']));
      await answer(() => answered.size === 5);
      const resumed = await resuming;
      expect(resumed.code, resumed.stderr).toBe(0);

      // Six branches on the remote, each once; the dependent ones stacked on their dependency's.
      expect(github.violations).toEqual([]);
      const onRemote = (await git(remote, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/')).split('\n').filter(Boolean).sort();
      expect(onRemote).toEqual([...Object.values(branches), 'main'].sort());
      await git(remote, 'merge-base', '--is-ancestor', branches[1], branches[2]);
      await git(remote, 'merge-base', '--is-ancestor', branches[4], branches[5]);
      expect(await git(remote, 'log', '--format=%s', `main..${branches[3]}`)).toBe('Build 3: notes.md');
      // On a mismatch, what the builder was asked and did says where the kill cut it.
      const builderCalls = (n: number) =>
        api.requests
          .filter((r) => r.agent?.startsWith(`issue-${n}-`))
          .map((r) => lastUserTexts(r).join(' ').slice(0, 160))
          .join('\n');
      expect(await git(remote, 'log', '--format=%s', `main..${branches[4]}`), builderCalls(4)).toBe('Fix 4: no token in clear\nBuild 4: token.txt');
      expect(await git(remote, 'log', '--format=%s', `${branches[4]}..${branches[5]}`)).toBe('Build 5: usage.txt');
      expect(await git(remote, 'log', '--format=%s', `main..${branches[6]}`)).toBe('Build 6: license.txt');

      // Six pull requests, each created once (as a draft, then marked ready), stacked where dependent.
      expect(github.requests.filter((r) => r.operation === 'pulls/create')).toHaveLength(6);
      expect(github.requests.filter((r) => r.operation === 'pulls/create').every((r) => (r.body as { draft: boolean }).draft)).toBe(true);
      expect(github.pulls.map((pr) => [pr.head, pr.base, pr.draft]).sort()).toEqual(
        [
          [branches[1], 'main', false],
          [branches[2], branches[1], false],
          [branches[3], 'main', false],
          [branches[4], 'main', false],
          [branches[5], branches[4], false],
          [branches[6], 'main', false],
        ].sort(),
      );
      const body = (n: keyof typeof branches) => github.pulls.find((pr) => pr.head === branches[n])!.body;
      expect(body(4)).toContain('Closes https://github.invalid/acme/app/issues/4');
      expect(body(1).split('\n')[0]).toBe(`Issue #${1} (.team/backlog/1-greeting.md)`);
      expect(body(3)).toContain(`## Plan\n\n${EDITED_PLAN.trim()}`);
      expect(body(4)).toContain(
        '### Security findings\n\n- security high (blocking) token.txt:1: The token is written in clear. (round 1, fixed before approval)',
      );
      expect(body(4)).toContain('### Other findings\n\n- polish low token.txt: Say where the token comes from. (round 1)');

      // Each plan asked for once (twice when it waited at the kill: the sixth's did), and answered once: by the person
      // (the third with the person's edit) or, the sixth, by the timer.
      expect([...waitingAtKill].some((agent) => agent.startsWith('issue-6-'))).toBe(true);
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const agent = lastOf(`issue-${n}-`).agent!;
        const asks = pastToolUses(lastOf(`issue-${n}-`)).filter((use) => use.name === 'plan_approval').length;
        // A plan sent in the moment between the person's last look and the kill is asked again too.
        expect(n === 6 || waitingAtKill.has(agent) ? [2] : [1, 2], `issue ${n} asked ${asks} times`).toContain(asks);
        expect(planAnswers(`issue-${n}-`), `issue ${n}`).toEqual([
          expect.objectContaining({
            approve: true,
            feedback: n === 6 ? 'auto-approved after 2 min' : 'approved by the person',
            ...(n === 3 ? { plan: EDITED_PLAN } : {}),
          }),
        ]);
      }
      expect(allUserTexts(lastOf('issue-3-')).join('\n')).toContain("Your plan was approved with the person's edits: follow this plan, not your own.");
      // Each builder was given the built-in playbook's steps; the reviewer the review's domains.
      const steps = allUserTexts(api.requests.find((r) => r.agent?.startsWith('issue-1-'))!).join('\n');
      expect(steps).toContain('following the playbook issue-to-pr');
      expect(steps).toMatch(
        /1\. Understand the issue below[\s\S]*2\. Explore the code with 3 read-only helpers in parallel[\s\S]*3\. Send your plan[\s\S]*4\. Make the change[\s\S]*5\. Review your own diff/,
      );
      expect(allUserTexts(lastOf('reviewer')).join('\n')).toContain(
        'Review it in one pass per domain (security, feasibility, granularity, dependencies, polish) and file each finding with review_finding',
      );
      // The lead was never asked about a plan.
      expect(
        api.requests
          .filter((r) => r.agent === 'lead')
          .flatMap((r) => inboxMessages(allUserTexts(r)))
          .filter((m) => m.type === 'plan_approval_request'),
      ).toEqual([]);

      // The security finding blocked the approval until the builder fixed it.
      const refusal = api.requests
        .filter((r) => r.agent === 'reviewer')
        .flatMap((r) => lastToolResults(r))
        .find((result) => result.is_error && result.content.includes('cannot be approved with a blocking finding'));
      expect(refusal?.content).toContain('security high (blocking) token.txt:1: The token is written in clear.');
      expect(allUserTexts(lastOf('issue-4-')).join('\n')).toContain('- security high (blocking) token.txt:1: The token is written in clear.');

      // The record lists all six: shipped, their pull requests, verify green, checks read, reviewed by the second agent.
      const record = runRecord();
      expect(record.backlog?.map((entry) => [entry.issue, entry.state, entry.base, entry.pull_request?.url !== undefined])).toEqual([
        [1, 'shipped', 'main', true],
        [2, 'shipped', branches[1], true],
        [3, 'shipped', 'main', true],
        [4, 'shipped', 'main', true],
        [5, 'shipped', branches[4], true],
        [6, 'shipped', 'main', true],
      ]);
      for (const entry of record.backlog!) {
        expect(entry.verify.at(-1)?.ok, `issue ${entry.issue}`).toBe(true);
        expect(entry.checks, `issue ${entry.issue}`).toEqual({ state: 'passed', failed: [] });
        expect(entry.review.reviewer, `issue ${entry.issue}`).toBe('reviewer');
        expect(entry.approver).toBe('auto-after 2 min');
        expect(entry.phase).toBe('done');
        // What the stopped run spent on it is carried into the resumed run's record.
        expect(entry.model_calls, `issue ${entry.issue}`).toBeGreaterThan(0);
      }
      const four = record.backlog!.find((entry) => entry.issue === SECURITY_ISSUE)!;
      expect(four.review.rounds).toBe(1);
      expect(four.review.security).toEqual([
        {
          domain: 'security',
          severity: 'high',
          file: 'token.txt',
          line: 1,
          text: 'The token is written in clear.',
          blocking: true,
          round: 1,
          reviewer: 'reviewer',
        },
      ]);
      expect(four.review.findings).toHaveLength(2);
      expect(record.backlog!.find((entry) => entry.issue === 3)!.plan).toBe(EDITED_PLAN.trim());
      for (const n of [1, 2, 3, 4, 5, 6]) expect(resumed.stderr).toMatch(new RegExp(`huddle: #${n} PR ready: [^\\n]* · tests passing · `));
    },
    2 * RUN_TIMEOUT_MS,
  );
});
