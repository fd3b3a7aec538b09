// The console working through a backlog (docs/backlog.md#in-the-console, docs/console.md#the-backlog-view),
// in a real terminal on the fake Messages API, the fake GitHub (held to GitHub's OpenAPI description) and a
// bare repository as origin: both issues' plans wait for the person; one is edited in $EDITOR (a script that
// rewrites the file) and approved from the needs-you queue, and its teammate is told to follow the edit;
// /backlog then shows each issue's phase, approver, pull request and checks at 80×24 and, resized, at 160×45.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { allUserTexts, inboxMessages, lastToolResults, lastUserTexts, pastToolUses } from '../../helpers/team-harness.js';
import { startFakeGitHub, type FakeGitHub } from '../../helpers/fake-github.js';
import { approvingReviewer, repoWithRemote } from '../../helpers/backlog-repo.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import type { Message } from '../../../src/runtime/store/bus.js';

const TOKEN = 'ghp_huddleconsole0123456789abcdefghijk';
const CTRL_Y = '\x19';
const EDITED = 'Write HELLO.txt in capitals.';
const FILES: Record<number, string> = { 1: 'hello.txt', 2: 'bye.txt' };

const startConsole = useConsoles();
let api: FakeApi;
let github: FakeGitHub;
let dir: string;
let root: string;

beforeEach(async () => {
  api = await startFakeApi();
  github = await startFakeGitHub({ token: TOKEN });
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-backlog-console-')));
  dirs.push(dir);
  ({ root } = await repoWithRemote(dir));
  mkdirSync(path.join(root, '.team', 'backlog'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'backlog', '1-greeting.md'), '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
  writeFileSync(path.join(root, '.team', 'backlog', '2-farewell.md'), '---\ntitle: Add a farewell\n---\nWrite bye.txt.\n');
  // Every branch's checks have passed when huddle reads them.
  for (const branch of ['huddle/issue-1-add-a-greeting', 'huddle/issue-2-add-a-farewell'])
    github.checks.set(branch, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
});
afterEach(async () => {
  await api.close();
  await github.close();
});
// After every console is closed (useConsoles closes them after each test).
const dirs: string[] = [];
afterAll(() => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

function planAnswer(request: RecordedRequest): Message | undefined {
  return inboxMessages(allUserTexts(request)).findLast((m) => m.type === 'plan_approval_response');
}

/** The lead ships every issue huddle says is reviewed; it never decides a plan (the person does). */
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
  return replyText(shipped.size >= 2 ? 'Both issues shipped.' : 'Waiting for the team.');
}

function builderStep(request: RecordedRequest): Scripted {
  const texts = allUserTexts(request).join('\n');
  const number = Number(/backlog issue #(\d+)/.exec(texts)![1]);
  const taskId = Number(/task #(\d+) \(assigned to you\)/.exec(texts)![1]);
  const past = pastToolUses(request);
  if (!past.some((use) => use.name === 'plan_approval')) return reply(toolUse('plan_approval', { plan: `Write ${FILES[number]}.` }));
  if (!planAnswer(request)?.approve) return replyText('Waiting for the answer.');
  if (!past.some((use) => use.name === 'write_file')) {
    return reply(
      toolUse('task_update', { task_id: taskId, status: 'in_progress' }),
      toolUse('write_file', { path: FILES[number]!, content: `issue ${number}\n` }),
      toolUse('bash', { command: `git add -A && git commit -q -m "Build ${number}"` }),
      toolUse('task_update', { task_id: taskId, status: 'completed' }),
    );
  }
  if (lastToolResults(request).length > 0) return reply(toolUse('idle', {}));
  return replyText('Done.');
}

const reviewerStep = approvingReviewer('Meets the acceptance criteria.');

/** Both issues' rows as the view shows them: phase, approver, pull request link and checks. */
function backlogShown(screen: string): boolean {
  return (
    screen.includes('Backlog (local: 2 issues: 2 done)') &&
    screen.includes('#1') &&
    screen.includes('#2') &&
    (screen.match(/ done /g) ?? []).length >= 2 &&
    (screen.match(/person/g) ?? []).length >= 2 &&
    (screen.match(/passed/g) ?? []).length >= 2 &&
    (screen.match(/https:\/\/github\.invalid\/acme\/app\/pull\/\d+/g) ?? []).length >= 2
  );
}

describeSandboxed('the console working through a backlog', () => {
  it('shows each issue live; a plan edited in $EDITOR and approved from the needs-you queue reaches its teammate', async () => {
    const editor = path.join(dir, 'edit-plan.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf '${EDITED}\\n' > "$1"\n`);
    chmodSync(editor, 0o755);
    api.respond((request) => {
      if (request.agent === 'lead') return leadStep(request);
      if (request.agent === 'reviewer') return reviewerStep(request);
      if (request.agent?.startsWith('issue-')) return builderStep(request);
      return undefined;
    });
    const tty = await startConsole({
      fake: api,
      workspace: root,
      cols: 80,
      rows: 24,
      args: ['--backlog', 'local', '--github-api-url', github.url, '--pr-repo', 'acme/app', '--permission-mode', 'auto'],
      env: {
        ...TEST_GIT_IDENTITY,
        GH_TOKEN: TOKEN,
        HUDDLE_PLAN_APPROVAL: 'person',
        HUDDLE_CHECKS_POLL_MS: '50',
        HUDDLE_IDLE_TIMEOUT_MS: '120000',
        EDITOR: editor,
      },
    });
    // The view is open from the start: both plans wait for the person.
    await tty.waitForScreen((s) => s.includes('Backlog (local: 2 issues: 2 awaiting approval)') && (s.match(/person/g) ?? []).length >= 2, {
      what: 'both issues awaiting the person',
    });
    tty.write(CTRL_Y);
    await tty.waitForText('Needs you (2 waiting)');
    tty.write('e');
    await tty.waitForScreen((s) => s.includes('now holds your edit') && s.includes('Needs you (2 waiting)') && s.includes(EDITED), { what: 'the edited plan' });
    tty.write('y');
    await tty.waitForText('Needs you (1 waiting)');
    tty.write('y');
    await tty.waitForText('Needs you (0 waiting)');

    // The teammate whose plan was edited is told to follow the person's text.
    const told = await waitForRequest(api, (r) => r.agent?.startsWith('issue-') === true && planAnswer(r)?.plan !== undefined);
    expect(planAnswer(told)).toMatchObject({ approve: true, plan: `${EDITED}\n` });
    expect(lastUserTexts(told).join('\n')).toContain("Your plan was approved with the person's edits");

    await tty.type('/backlog');
    tty.press('enter');
    const narrow = await tty.waitForScreen(backlogShown, { what: 'both issues done with their pull requests and checks at 80×24' });
    expect(narrow).toContain('huddle/issue-1-add-a-greeting');
    expect(github.pulls.map((pull) => pull.head).sort()).toEqual(['huddle/issue-1-add-a-greeting', 'huddle/issue-2-add-a-farewell']);
    expect(github.violations).toEqual([]);

    tty.resize(160, 45);
    const wide = await tty.waitForScreen((s) => backlogShown(s) && /#1 .*done .*person .*passed .*https:\/\/github\.invalid/.test(s), {
      what: 'one line per issue at 160×45',
    });
    expect(wide).toMatch(/#2 .*done .*person .*passed .*https:\/\/github\.invalid.*huddle\/issue-2-add-a-farewell/);

    // Enter opens the selected issue's teammate.
    tty.press('enter');
    await tty.waitForScreen((s) => !s.includes('Backlog (local') && s.includes('message issue-1-add-a-greeting'), { what: "the first issue's pane" });
  }, 240_000);
});

async function waitForRequest(fake: FakeApi, match: (request: RecordedRequest) => boolean): Promise<RecordedRequest> {
  for (let seen = fake.requests.length; ; seen = fake.requests.length) {
    const found = fake.requests.find(match);
    if (found) return found;
    await fake.waitForRequests(seen + 1, 60_000);
  }
}
