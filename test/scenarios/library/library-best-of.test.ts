// The library's best-of-N (docs/best-of.md), in process, against the fake Messages API with real git, worktrees
// and the sandbox: bestOf() resolves with the comparison of two candidates (one failing the verify command) and
// the reviewer's verdict; pick('none') removes both candidates' worktrees and branches, merging nothing.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { makeWorkspace, TEST_API_KEY, type Workspace } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { openTeam } from '../../../src/library/index.js';

let fake: FakeApi;
let ws: Workspace;
let home: Workspace;
const saved = { ...process.env };
const KEYS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'HOME', 'HUDDLE_RETRY_BASE_MS', ...Object.keys(TEST_GIT_IDENTITY)];

async function git(...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: ws.dir, env: TEST_GIT_IDENTITY })).stdout;
}

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-library-best-of-');
  home = makeWorkspace('huddle-library-best-of-home-');
  mkdirSync(path.join(home.dir, '.config'), { recursive: true });
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: TEST_API_KEY,
    ANTHROPIC_BASE_URL: fake.url,
    HOME: home.dir,
    HUDDLE_RETRY_BASE_MS: '5',
    ...TEST_GIT_IDENTITY,
  });
  await git('init', '-q', '-b', 'main');
  writeFileSync(path.join(ws.dir, 'README.md'), '# app\n');
  await git('add', 'README.md');
  await git('commit', '-q', '-m', 'initial');
});
afterEach(async () => {
  for (const key of KEYS) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  await fake.close();
  ws.cleanup();
  home.cleanup();
});

describeSandboxed('the library: best-of-N', () => {
  it('compares two candidates, then discards both with pick("none")', async () => {
    fake.respond((request) => {
      const agent = request.agent ?? '';
      const history = JSON.stringify(request.body?.messages ?? []);
      if (history.includes('tool_result')) return /^best1-/.test(agent) ? replyText('Done.') : undefined;
      if (agent === 'best1-judge') {
        return reply(
          toolUse('best_of_verdict', {
            pick: 'best1-1',
            reason: 'the one that passes',
            candidates: [
              { name: 'best1-1', score: 8, notes: 'passes' },
              { name: 'best1-2', score: 2, notes: 'fails' },
            ],
          }),
        );
      }
      if (!/^best1-\d$/.test(agent)) return undefined;
      const task = Number(/Task #(\d+) is yours/.exec(history)![1]);
      return reply(
        toolUse('write_file', { path: 'answer.txt', content: agent === 'best1-1' ? '42\n' : '41\n' }),
        toolUse('bash', { command: `git add -A && git commit -q -m "${agent}"` }),
        toolUse('task_update', { task_id: task, status: 'completed' }),
      );
    });
    const team = await openTeam({ workspace: ws.dir, permissionMode: 'auto' });
    try {
      const progress: string[] = [];
      const record = await team.bestOf({
        task: 'Write the answer to answer.txt',
        n: 2,
        verify: 'grep -qx 42 answer.txt',
        onProgress: (line) => progress.push(line),
      });
      expect(record.candidates.map((c) => [c.name, c.state, c.verify?.ok, c.files.changed, c.verdict?.score])).toEqual([
        ['best1-1', 'completed', true, 1, 8],
        ['best1-2', 'stopped', false, 1, 2],
      ]);
      expect(record.verdict).toMatchObject({ by: 'best1-judge', pick: 'best1-1', reason: 'the one that passes' });
      expect(record.outcome).toEqual({ kind: 'waiting' });
      expect(progress.some((line) => line.startsWith('best1-2 stopped'))).toBe(true);

      const picked = await team.pick('none');
      expect(picked.outcome).toEqual({ kind: 'discarded', message: 'no candidate merged; all 2 discarded' });
      expect(await git('branch', '--list', 'huddle/*')).toBe('');
      expect(existsSync(path.join(ws.dir, '.team', 'worktrees', 'best1-1'))).toBe(false);
      expect(existsSync(path.join(ws.dir, 'answer.txt'))).toBe(false);
      // Picked once, the run refuses another pick in one line.
      await expect(team.pick('1')).rejects.toThrow(/^best-of #1 is over: no candidate merged/);
    } finally {
      await team.close();
    }
  }, 180_000);
});
