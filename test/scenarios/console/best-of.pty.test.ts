// /best-of in the console (docs/console.md#best-of), in a real PTY at 80×24 and 160×45, on the fake
// Messages API with real git, worktrees and the sandbox: three candidates (one fails the verify
// command), the reviewer's verdict, the compare view (one column per candidate when wide, one
// candidate per page with ←/→ when narrow), then p and y merge the pick and remove every candidate,
// the person's uncommitted work untouched.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { rowsOf } from '../../helpers/console-screen.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

const TEST_TIMEOUT_MS = 240_000;

let fake: FakeApi;
let dir: string;

async function git(...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: dir, env: TEST_GIT_IDENTITY })).stdout;
}

beforeEach(async () => {
  fake = await startFakeApi();
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-best-of-pty-')));
  await git('init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# app\n');
  await git('add', 'README.md');
  await git('commit', '-q', '-m', 'initial');
});
afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

/** best1-2 answers 41 (its verify fails); the others 42, best1-3 with a second file. */
function candidateStep(agent: string, request: RecordedRequest): Scripted {
  const history = JSON.stringify(request.body?.messages ?? []);
  if (history.includes('tool_result')) return replyText('Done.');
  const task = Number(/Task #(\d+) is yours/.exec(history)![1]);
  return reply(
    toolUse('write_file', { path: 'answer.txt', content: agent === 'best1-2' ? '41\n' : '42\n' }),
    ...(agent === 'best1-3' ? [toolUse('write_file', { path: 'notes.md', content: 'why 42\n' })] : []),
    toolUse('bash', { command: `git add -A && git commit -q -m "${agent}: the answer"` }),
    toolUse('task_update', { task_id: task, status: 'completed' }),
  );
}

function script(): void {
  fake.respond((request) => {
    const agent = request.agent ?? '';
    if (/^best1-\d$/.test(agent)) return candidateStep(agent, request);
    if (agent !== 'best1-judge') return undefined;
    if (JSON.stringify(request.body?.messages ?? []).includes('tool_result')) return replyText('Verdict given.');
    return reply(
      toolUse('best_of_verdict', {
        pick: 'best1-3',
        reason: 'correct, and it explains itself',
        candidates: [
          { name: 'best1-1', score: 7, notes: 'correct, bare' },
          { name: 'best1-2', score: 1, notes: 'wrong answer' },
          { name: 'best1-3', score: 9, notes: 'correct, with notes' },
        ],
      }),
    );
  });
}

describeSandboxed('/best-of in the console', () => {
  it.each([
    [80, 24],
    [160, 45],
  ])(
    'at %i×%i shows the comparison and merges the pick',
    async (cols, rows) => {
      script();
      writeFileSync(path.join(dir, 'README.md'), '# app\n\nwork in progress\n');
      const tty = await start({ fake, workspace: dir, cols, rows, args: ['--permission-mode', 'auto'], env: { ...TEST_GIT_IDENTITY } });
      await tty.waitForText('ask the lead');
      await tty.type('/best-of 3 --verify "grep -qx 42 answer.txt" Write the answer to answer.txt');
      tty.press('enter');

      // The comparison, once the reviewer's verdict is in.
      let screen = await tty.waitForText('waiting for your pick (the reviewer would merge best1-3)');
      if (cols >= 160) {
        // One column per candidate, side by side: the three names on one row, each summary row under its name.
        const names = rowsOf(screen).find((row) => row.includes('│') && row.includes('best1-1') && row.includes('best1-2') && row.includes('best1-3'));
        expect(names, screen).toBeDefined();
        expect(names).toContain("← reviewer's pick");
        const summary = rowsOf(screen).find((row) => row.includes('verify ✗'))!;
        expect(summary.match(/verify ✓/g)).toHaveLength(2);
        expect(summary).toMatch(/1 file \+1 −0 · verify ✓ · \$[\d.]+ · 7\/10 *│1 file \+1 −0 · verify ✗ · \$[\d.]+ · 1\/10 *│2 files \+2 −0 · verify ✓/);
        await tty.waitForText('+42');
        expect(screen).toContain('←/→ candidate · d its diff · p pick it · x discard all');
      } else {
        // A summary row per candidate, the reviewer's pick selected; its page below.
        expect(screen).toMatch(/ {2}best1-1 {2}1 file \+1 −0 · verify ✓ · \$[\d.]+ · 7\/10/);
        expect(screen).toMatch(/ {2}best1-2 {2}1 file \+1 −0 · verify ✗ · \$[\d.]+ · 1\/10/);
        expect(screen).toMatch(/▶ best1-3 {2}2 files \+2 −0 · verify ✓ · \$[\d.]+ · 9\/10 ←/);
        expect(screen).toContain('── 3/3');
        tty.press('\x1b[D');
        screen = await tty.waitForText('── 2/3');
        expect(screen).toMatch(/▶ best1-2/);
        expect(screen).toContain('wrong answer');
        // d: its whole diff; Esc: back to the comparison.
        tty.press('d');
        screen = await tty.waitForText('+41');
        expect(screen).toContain('Esc: back to the comparison');
        tty.press('escape');
        await tty.waitForText('── 2/3');
        tty.press('\x1b[C');
        await tty.waitForText('── 3/3');
      }

      // p asks first; y merges the selected candidate (the reviewer's pick) and removes them all.
      tty.press('p');
      await tty.waitForText('Merge best1-3 into main');
      tty.press('y');
      screen = await tty.waitForText(/merged huddle\/best1-3 into main/);
      expect(readFileSync(path.join(dir, 'answer.txt'), 'utf8')).toBe('42\n');
      expect(await git('log', '-1', '--format=%s')).toMatch(/^Merge huddle\/best1-3/);
      expect(await git('branch', '--list', 'huddle/*')).toBe('');
      for (const k of [1, 2, 3]) expect(existsSync(path.join(dir, '.team', 'worktrees', `best1-${k}`))).toBe(false);
      expect(readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('# app\n\nwork in progress\n');
    },
    TEST_TIMEOUT_MS,
  );
});
