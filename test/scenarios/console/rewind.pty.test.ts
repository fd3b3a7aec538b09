// /rewind in the console at 80×24, as a person uses it: an agent's `git checkout -- .` throws away
// the person's edit; /rewind lists the checkpoints as a page, /rewind ID says what it would do and
// asks for a yes, /rewind ID yes puts the edit back (and says how to undo the rewind); closing the
// console after the edit is thrown away again (and .git deleted: rebuilt, with a notice) says so, with the
// command. The built CLI
// in a real PTY against the fake Messages API.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { rowsOf } from '../../helpers/console-screen.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

let fake: FakeApi;
let base: string;

beforeEach(async () => {
  fake = await startFakeApi();
  base = mkdtempSync(path.join(os.tmpdir(), 'huddle-rewind-'));
});

afterEach(async () => {
  await fake.close();
  rmSync(base, { recursive: true, force: true });
});

const start = useConsoles();

it("/rewind at 80×24: the list, the question, the rewind; the person's edit is back", async () => {
  const ws = path.join(base, 'ws');
  mkdirSync(ws);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, ...TEST_GIT_IDENTITY } });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(ws, 'a.txt'), 'committed\n');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'first');
  writeFileSync(path.join(ws, 'a.txt'), 'the person is editing this\n');

  fake.script(
    'lead',
    reply(toolUse('bash', { command: 'git checkout -- .' })),
    replyText('cleaned up'),
    reply(toolUse('bash', { command: 'git checkout -- . && echo cm0gLXJmIC5naXQK | base64 -d | sh' })),
    replyText('cleaned up again'),
  );
  const tty = await start({
    fake,
    workspace: ws,
    cols: 80,
    rows: 24,
    args: ['--permission-mode', 'auto'],
    env: { XDG_STATE_HOME: path.join(base, 'state'), ...TEST_GIT_IDENTITY },
  });
  await tty.waitForText('ask the lead');
  await tty.type('tidy up');
  tty.press('enter');
  await tty.waitForText('cleaned up');
  expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('committed\n');

  await tty.type('/rewind');
  tty.press('enter');
  let screen = await tty.waitForText('Checkpoints (1)');
  const row = rowsOf(screen).find((line) => /[0-9a-f]{12} .*before bash: git checkout -- \./.test(line));
  expect(row, screen).toBeDefined();
  const id = /([0-9a-f]{12})/.exec(row!)![1]!;
  expect(row).toContain('lead');
  tty.press('escape');
  await tty.waitForScreen((s) => !s.includes('Checkpoints (1)'));

  await tty.type(`/rewind ${id}`);
  tty.press('enter');
  screen = await tty.waitForText('To go ahead');
  expect(screen).toContain(`/rewind ${id} yes`);
  expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('committed\n'); // asking changes nothing

  await tty.type(`/rewind ${id} yes`);
  tty.press('enter');
  screen = await tty.waitForText(`rewound to ${id}`);
  expect(screen).toMatch(/to undo: \/rewind [0-9a-f]{12}/);
  expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('the person is editing this\n');

  // Thrown away once more, .git deleted with it: the notice says .git was rebuilt; closing the console
  // says what of the person's is gone, with the command that brings it back.
  const head = git('rev-parse', 'HEAD').toString();
  await tty.type('tidy up again');
  tty.press('enter');
  await tty.waitForText(/huddle rebuilt it from/);
  await tty.waitForText('cleaned up again');
  expect(git('rev-parse', 'HEAD').toString()).toBe(head);
  await tty.type('/quit');
  tty.press('enter');
  expect((await tty.exited).exitCode).toBe(0);
  // The last words may still be on their way through the PTY when the process has exited.
  const oneLine = (s: string) => s.replace(/\n/g, ''); // the line is wrapped at 80 columns
  screen = await tty.waitForScreen((s) => oneLine(s).includes(`huddle rewind ${id}`));
  const said = oneLine(screen);
  expect(said).toMatch(/reverted or deleted 1 file you had changed before it \(a\.txt\)/);
  expect(said).toContain(`huddle rewind ${id}`);
}, 60_000);
