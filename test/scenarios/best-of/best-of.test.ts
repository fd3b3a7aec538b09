// `huddle best-of` and `huddle pick` end to end (docs/best-of.md): the built CLI against the fake Messages
// API, real git, worktrees and the sandbox. Three candidates write different answers (one fails the
// verify command, one leaves a file uncommitted); the reviewer's verdict comes through best_of_verdict;
// the comparison lists all three; `huddle pick auto` merges the reviewer's pick into the base, removes
// every candidate's worktree and branch, and leaves the person's uncommitted work as it was. `huddle pick K
// --pr` pushes the pick to the remote and opens its pull request on the fake GitHub instead.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { execa } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { describeSandboxed, makeArena } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest, type Scripted } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { startFakeGitHub } from '../../helpers/fake-github.js';

const RUN_TIMEOUT_MS = 180_000;
const VERIFY = 'grep -qx 42 answer.txt';

let api: FakeApi;
let ws: Workspace;

async function git(...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: ws.dir, env: TEST_GIT_IDENTITY })).stdout;
}

beforeEach(async () => {
  api = await startFakeApi();
  ws = makeWorkspace('huddle-best-of-');
  await git('init', '-q', '-b', 'main');
  writeFileSync(path.join(ws.dir, 'README.md'), '# app\n');
  await git('add', 'README.md');
  await git('commit', '-q', '-m', 'initial');
});
afterEach(async () => {
  await api.close();
  ws.cleanup();
});

function huddle(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { cwd: ws.dir, timeoutMs: RUN_TIMEOUT_MS, env: { ANTHROPIC_BASE_URL: api.url, ...TEST_GIT_IDENTITY, ...env } });
}

/** What each candidate writes: best1-2's answer fails the verify; best1-3 leaves its notes uncommitted. */
function candidateStep(agent: string, request: RecordedRequest): Scripted {
  const history = JSON.stringify(request.body?.messages ?? []);
  if (history.includes('tool_result')) return replyText('Done.');
  const task = Number(/Task #(\d+) is yours/.exec(history)![1]);
  const answer = agent === 'best1-2' ? '41' : '42';
  return reply(
    toolUse('write_file', { path: 'answer.txt', content: `${answer}\n` }),
    toolUse('bash', { command: `git add answer.txt && git commit -q -m "${agent}: the answer"` }),
    ...(agent === 'best1-3' ? [toolUse('write_file', { path: 'notes.md', content: 'why 42\n' })] : []),
    toolUse('task_update', { task_id: task, status: 'completed' }),
  );
}

function script(): void {
  api.respond((request) => {
    const agent = request.agent ?? '';
    if (/^best1-\d$/.test(agent)) return candidateStep(agent, request);
    if (agent !== 'best1-judge') return undefined;
    const history = JSON.stringify(request.body?.messages ?? []);
    if (history.includes('tool_result')) return replyText('Verdict given.');
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

it('answers bad input and a pick with nothing to pick from in one line each', async () => {
  const few = await huddle(['best-of', '1', 'Do it']);
  expect([few.code, few.stderr.split('\n')[0]]).toEqual([2, 'huddle: usage: huddle best-of N "TASK" (N from 2 to 8)']);
  const agents = await huddle(['best-of', '2', 'Do it', '--agents', 'robot']);
  expect(agents.code).toBe(2);
  expect(agents.stderr).toMatch(/^huddle: --agents takes huddle or claude-code, /);
  const none = await huddle(['pick', '1']);
  expect([none.code, none.stderr]).toEqual([1, `huddle: no best-of run in ${ws.dir} (huddle best-of N "task" starts one)\n`]);
  const noRemote = await huddle(['pick', '1', '--pr']);
  expect(noRemote.code).toBe(1);
  expect(noRemote.stderr).toMatch(/^huddle: the workspace has no remote 'origin' to push the pick to; /);
});

describeSandboxed('huddle best-of', () => {
  it(
    'compares three candidates, merges the pick into the base and removes them all, keeping the uncommitted work',
    async () => {
      script();
      // The person's work in progress: a tracked file edited, a new file.
      writeFileSync(path.join(ws.dir, 'README.md'), '# app\n\nwork in progress\n');
      writeFileSync(path.join(ws.dir, 'scratch.txt'), 'mine\n');

      // The verify command runs what a candidate wrote: huddle runs it in the sandbox, where a directory
      // outside the workspace is read-only, so `touch` there fails and the command goes on.
      const arena = makeArena('best-of-');
      const touched = path.join(arena.victim, 'touched-by-verify');
      const run = await huddle(['best-of', '3', 'Write the answer to answer.txt', '--verify', `${VERIFY} && ! touch ${touched}`, '--trust']);
      expect(existsSync(touched), 'a verify command wrote outside the sandbox').toBe(false);
      arena.cleanup();
      expect(run.stderr).not.toMatch(/best-of: failed/);
      expect(run.stderr).toMatch(/best1-2 stopped/);
      expect(run.code).toBe(0);
      for (const name of ['best1-1', 'best1-2', 'best1-3']) expect(run.stdout).toContain(name);
      expect(run.stdout.match(/verify ✓/g)).toHaveLength(2);
      expect(run.stdout.match(/verify ✗/g)).toHaveLength(1);
      expect(run.stdout).toMatch(/best1-3 .*← reviewer/);
      expect(run.stdout).toContain('2 files +2 −0');
      expect(run.stdout).toContain('huddle pick');

      // The comparison is kept for the pick, and in the run record.
      const kept = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8'));
      expect(kept.outcome.kind).toBe('waiting');
      expect(kept.verdict).toMatchObject({ by: 'best1-judge', pick: 'best1-3' });
      expect(kept.candidates.map((c: { verify: { ok: boolean } }) => c.verify.ok)).toEqual([true, false, true]);
      const logs = path.join(ws.dir, '.team', 'logs');
      const recordFile = readdirSync(logs).find((file) => /^run-.*\.json$/.test(file))!;
      const record = JSON.parse(readFileSync(path.join(logs, recordFile), 'utf8'));
      expect(record.best_of[0].candidates).toHaveLength(3);
      // Nothing merged yet: the candidates wait in their branches.
      expect(existsSync(path.join(ws.dir, 'answer.txt'))).toBe(false);
      expect(await git('branch', '--list', 'huddle/*')).toMatch(/best1-1[\s\S]*best1-2[\s\S]*best1-3/);

      const pick = await huddle(['pick', 'auto']);
      expect(pick.stderr).toBe('');
      expect(pick.code).toBe(0);
      expect(pick.stdout).toMatch(/merged huddle\/best1-3 into main/);

      // The pick is in the base: its committed answer and the notes huddle committed for it.
      expect(readFileSync(path.join(ws.dir, 'answer.txt'), 'utf8')).toBe('42\n');
      expect(readFileSync(path.join(ws.dir, 'notes.md'), 'utf8')).toBe('why 42\n');
      expect(await git('log', '-1', '--format=%s')).toMatch(/^Merge huddle\/best1-3/);
      expect(await git('show', 'HEAD:answer.txt')).toBe('42');
      // Every candidate is gone: no branch, no worktree.
      expect(await git('branch', '--list', 'huddle/*')).toBe('');
      const worktrees = path.join(ws.dir, '.team', 'worktrees');
      expect(existsSync(worktrees) ? readdirSync(worktrees).filter((entry) => entry.startsWith('best1-')) : []).toEqual([]);
      // The person's uncommitted work is as it was.
      expect(readFileSync(path.join(ws.dir, 'README.md'), 'utf8')).toBe('# app\n\nwork in progress\n');
      expect(readFileSync(path.join(ws.dir, 'scratch.txt'), 'utf8')).toBe('mine\n');
      expect(await git('status', '--porcelain', '--', 'README.md', 'scratch.txt')).toBe(' M README.md\n?? scratch.txt');

      // The run is over: a second pick says so in one line.
      const again = await huddle(['pick', '1']);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^huddle: best-of #1 is over: merged huddle\/best1-3 into main/);
      expect(JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8')).outcome.kind).toBe('merged');
    },
    RUN_TIMEOUT_MS * 2,
  );

  it(
    'opens the pick as a pull request with --pr: pushed by huddle, the other candidates removed, the base untouched',
    async () => {
      const TOKEN = 'ghp_huddlepicktoken0123456789abcdefghij';
      const github = await startFakeGitHub({ token: TOKEN });
      const remote = path.join(ws.dir, '..', `${path.basename(ws.dir)}-remote.git`);
      try {
        await execa('git', ['init', '-q', '--bare', '-b', 'main', remote], { env: TEST_GIT_IDENTITY });
        await git('remote', 'add', 'origin', remote);
        script();
        const run = await huddle(['best-of', '3', 'Write the answer to answer.txt', '--verify', VERIFY, '--trust']);
        expect(run.code).toBe(0);
        const head = await git('rev-parse', 'HEAD');

        const pick = await huddle(['pick', '1', '--pr', '--github-api-url', github.url, '--pr-repo', 'acme/app'], { GH_TOKEN: TOKEN });
        expect(pick.stderr).toBe('');
        expect(pick.code).toBe(0);
        expect(pick.stdout).toMatch(/pushed huddle\/best1-1 to origin; opened \S+ \(into main\)/);
        expect(github.violations).toEqual([]);
        expect(github.pulls.map((pr) => [pr.head, pr.base])).toEqual([['huddle/best1-1', 'main']]);
        expect(github.pulls[0]!.body).toContain('best1-1');
        expect((await execa('git', ['branch', '--list'], { cwd: remote })).stdout).toContain('huddle/best1-1');
        // The pick's branch stays for its pull request; the others are gone; nothing was merged here.
        expect(await git('branch', '--list', 'huddle/*')).toBe('  huddle/best1-1');
        expect(await git('rev-parse', 'HEAD')).toBe(head);
        expect(existsSync(path.join(ws.dir, '.team', 'worktrees', 'best1-2'))).toBe(false);
        expect(JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8')).outcome).toMatchObject({
          kind: 'pull_request',
          candidate: 'best1-1',
        });
      } finally {
        rmSync(remote, { recursive: true, force: true });
        await github.close();
      }
    },
    RUN_TIMEOUT_MS * 2,
  );

  it(
    'interrupted, keeps the candidates as they are for a pick; huddle pick none then removes them all',
    async () => {
      // Each candidate commits its answer, then its next model call hangs until the run is interrupted.
      api.respond((request) => {
        if (!/^best1-\d$/.test(request.agent ?? '')) return undefined;
        const history = JSON.stringify(request.body?.messages ?? []);
        if (history.includes('tool_result')) return { kind: 'hang' };
        return reply(
          toolUse('write_file', { path: 'answer.txt', content: '42\n' }),
          toolUse('bash', { command: `git add answer.txt && git commit -q -m "${request.agent}: the answer"` }),
        );
      });
      writeFileSync(path.join(ws.dir, 'README.md'), '# app\n\nwork in progress\n');
      let child: ChildProcess | undefined;
      const running = runCli(['best-of', '3', 'Write the answer to answer.txt', '--trust'], {
        cwd: ws.dir,
        timeoutMs: RUN_TIMEOUT_MS,
        env: { ANTHROPIC_BASE_URL: api.url, ...TEST_GIT_IDENTITY },
        onSpawn: (spawned) => (child = spawned),
      });
      // Three first calls, three second calls (each hanging): every candidate has committed.
      await api.waitForRequests(6, RUN_TIMEOUT_MS);
      child!.kill('SIGINT');
      const run = await running;
      expect(run.code).toBe(130);
      expect(run.stderr).toContain('interrupted; the candidates keep their worktrees as they are');
      const kept = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8'));
      expect(kept.outcome).toEqual({ kind: 'waiting' });
      expect(kept.candidates.map((c: { state: string; error?: string }) => [c.state, c.error])).toEqual(Array(3).fill(['stopped', 'interrupted']));
      expect(await git('branch', '--list', 'huddle/*')).toMatch(/best1-1[\s\S]*best1-2[\s\S]*best1-3/);

      const pick = await huddle(['pick', 'none']);
      expect(pick.stderr).toBe('');
      expect(pick.code).toBe(0);
      expect(pick.stdout).toMatch(
        /^no candidate merged; all 3 discarded\nbest1-1: removed \.team\/worktrees\/best1-1; deleted huddle\/best1-1 with 1 unmerged commit/,
      );
      expect(await git('branch', '--list', 'huddle/*')).toBe('');
      expect(readFileSync(path.join(ws.dir, 'README.md'), 'utf8')).toBe('# app\n\nwork in progress\n');
      expect(existsSync(path.join(ws.dir, 'answer.txt'))).toBe(false);
    },
    RUN_TIMEOUT_MS * 2,
  );

  it(
    'killed outright (SIGKILL), its record is read as interrupted: huddle pick merges a candidate; alive, the pick waits',
    async () => {
      api.respond((request) => {
        if (!/^best1-\d$/.test(request.agent ?? '')) return undefined;
        const history = JSON.stringify(request.body?.messages ?? []);
        if (history.includes('tool_result')) return { kind: 'hang' };
        return reply(
          toolUse('write_file', { path: 'answer.txt', content: '42\n' }),
          toolUse('bash', { command: `git add answer.txt && git commit -q -m "${request.agent}: the answer"` }),
        );
      });
      let child: ChildProcess | undefined;
      const running = runCli(['best-of', '3', 'Write the answer to answer.txt', '--trust'], {
        cwd: ws.dir,
        timeoutMs: RUN_TIMEOUT_MS,
        env: { ANTHROPIC_BASE_URL: api.url, ...TEST_GIT_IDENTITY },
        onSpawn: (spawned) => (child = spawned),
      });
      await api.waitForRequests(6, RUN_TIMEOUT_MS);
      // While its process runs, the run is under way: no pick yet.
      const early = await huddle(['pick', '1']);
      expect([early.code, early.stderr]).toEqual([1, 'huddle: best-of #1 is still running; pick once its comparison is shown\n']);

      child!.kill('SIGKILL');
      const run = await running;
      expect(run.signal).toBe('SIGKILL');
      expect(JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8')).outcome.kind).toBe('running');

      const pick = await huddle(['pick', '2']);
      expect(pick.stderr).toBe('');
      expect(pick.code).toBe(0);
      expect(pick.stdout).toMatch(/merged huddle\/best1-2 into main/);
      expect(readFileSync(path.join(ws.dir, 'answer.txt'), 'utf8')).toBe('42\n');
      const kept = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'best-of', '1.json'), 'utf8'));
      expect(kept.outcome).toMatchObject({ kind: 'merged', candidate: 'best1-2' });
      expect(kept.candidates.map((c: { state: string; error?: string }) => [c.state, c.error])).toEqual(
        Array(3).fill(['stopped', 'interrupted: its run was killed']),
      );
      expect(await git('branch', '--list', 'huddle/*')).toBe('');
    },
    RUN_TIMEOUT_MS * 2,
  );
});
