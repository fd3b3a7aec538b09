// The backlog view's rows (docs/console.md#the-backlog-view): the approver column is who approves the plans
// of the playbook's builder role (a workspace playbook whose issues are built by role `builder`, and a role
// file giving that role's plans to the person, show `person`, though the team's plans go to the lead); an
// issue whose builder's explorers are at work is `exploring`. The console in a real terminal on the fake
// Messages API, a local backlog in a git repository with a remote.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { repoWithRemote } from '../../helpers/backlog-repo.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

const PLAYBOOK = readFileSync(path.join(import.meta.dirname, '../../../src/runtime/backlog/issue-to-pr.md'), 'utf8').replace(
  '  - phase: implement\n    role: coder',
  '  - phase: implement\n    role: builder',
);

const startConsole = useConsoles();
let api: FakeApi;
let dir: string;
let root: string;

beforeEach(async () => {
  api = await startFakeApi();
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-backlog-rows-')));
  dirs.push(dir);
  ({ root } = await repoWithRemote(dir));
  mkdirSync(path.join(root, '.team', 'backlog'), { recursive: true });
  mkdirSync(path.join(root, '.team', 'playbooks'), { recursive: true });
  mkdirSync(path.join(root, '.team', 'roles'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'backlog', '1-greeting.md'), '---\ntitle: Add a greeting\n---\nWrite hello.txt.\n');
  writeFileSync(path.join(root, '.team', 'playbooks', 'issue-to-pr.md'), PLAYBOOK);
  writeFileSync(path.join(root, '.team', 'roles', 'builder.md'), '---\nplan_approver: person\n---\nYou build what an issue asks.\n');
});
afterEach(async () => {
  await api.close();
});
// After every console is closed (useConsoles closes them after each test).
const dirs: string[] = [];
afterAll(() => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

describeSandboxed("the backlog view's rows", () => {
  it("is the playbook builder role's plan approver", { timeout: 90_000 }, async () => {
    // Nobody works here: the view's first rows are what this test reads.
    api.respond(() => replyText('Waiting.'));
    const tty = await startConsole({
      fake: api,
      workspace: root,
      cols: 80,
      rows: 24,
      args: ['--backlog', 'local', '--permission-mode', 'auto'],
      env: { ...TEST_GIT_IDENTITY, HUDDLE_PLAN_APPROVAL: 'lead' },
    });
    const screen = await tty.waitForScreen((s) => s.includes('Backlog (local: 1 issue') && /^#1 .*\b(person|lead)\b/m.test(s), {
      what: 'the backlog row with its approver',
    });
    const row = screen.split('\n').find((line) => line.startsWith('#1 '))!;
    expect(row).toMatch(/\bperson\b/);
    expect(row).not.toMatch(/\blead\b/);
  });

  it("say exploring while the builder's explorers are at work", { timeout: 90_000 }, async () => {
    const builder = 'issue-1-add-a-greeting';
    api.respond((request) => {
      if (request.agent === builder) return reply(toolUse('explore', { tasks: [{ prompt: 'Where is the greeting printed?' }] }));
      // Its explorer is still reading when the row is looked at.
      if (request.agent?.startsWith(`${builder}/explore-`)) return { kind: 'hang' };
      return replyText('Waiting.');
    });
    const tty = await startConsole({
      fake: api,
      workspace: root,
      cols: 80,
      rows: 24,
      args: ['--backlog', 'local', '--permission-mode', 'auto'],
      env: { ...TEST_GIT_IDENTITY, HUDDLE_PLAN_APPROVAL: 'lead' },
    });
    const screen = await tty.waitForScreen((s) => /^#1 .*\bexploring\b/m.test(s), { what: 'the issue exploring' });
    expect(screen).toContain('Backlog (local: 1 issue');
  });
});
