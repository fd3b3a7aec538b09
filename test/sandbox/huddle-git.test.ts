// huddle's own git (runtime/git/host-git.ts) runs outside the sandbox, so nothing an agent writes
// into the repository may make it run a program: a real `huddle -p` whose lead (scripted through
// the fake API) plants git metadata with bash or write_file, then the run record's git (and later
// the person's huddle worktree commands) run. The program would copy its environment (the API key
// is a marker) into a victim directory outside the workspace. Each planted file is also reported.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../helpers/fake-api.js';
import { runCli } from '../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../helpers/git-identity.js';
import { describeSandboxed, makeArena, type Arena } from './arena.js';

const KEY = 'sk-ant-api03-GITPLANT-marker-0123456789abcdef';

let fake: FakeApi;
let arena: Arena;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('git-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: arena.ws, env: { ...process.env, ...TEST_GIT_IDENTITY } });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(arena.ws, 'README.md'), 'one\n');
  writeFileSync(path.join(arena.ws, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'sh scripts/t.sh' } }));
  git('add', '.');
  git('commit', '-q', '-m', 'start');
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
});

/** A program that, wherever it runs, leaves its environment in the victim directory. */
function payload(arena: Arena, filter = false): string {
  return `#!/bin/sh\nenv > ${arena.victim}/leak-$$.txt 2>/dev/null\n${filter ? 'cat\n' : ''}`;
}

function leaked(arena: Arena): string[] {
  return readdirSync(arena.victim).filter((name) => name.startsWith('leak-'));
}

function expectNoLeak(arena: Arena): void {
  const files = leaked(arena);
  const withKey = files.filter((name) => readFileSync(path.join(arena.victim, name), 'utf8').includes(KEY));
  expect(withKey, 'the API key reached the victim directory').toEqual([]);
  expect(files, 'a planted program ran outside the sandbox').toEqual([]);
}

async function run(arena: Arena, steps: ReturnType<typeof reply>[], extra: string[] = []) {
  fake.enqueue(...steps, replyText('Done.'));
  return runCli(['-p', 'work', ...extra], { cwd: arena.ws, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, ...TEST_GIT_IDENTITY } });
}

function runRecord(ws: string): Record<string, unknown> {
  const logs = path.join(ws, '.team', 'logs');
  const file = readdirSync(logs).find((name) => /^run-.+\.json$/.test(name))!;
  return JSON.parse(readFileSync(path.join(logs, file), 'utf8'));
}

/** bash that writes the payload to `file` in the workspace and makes it executable. */
function plantScript(file: string, filter = false): string {
  return `mkdir -p ${path.dirname(file)} && printf '%s' '${payload(arena, filter)}' > ${file} && chmod +x ${file}`;
}

/** A common dir in the workspace whose config sets core.fsmonitor, with the real objects and refs. */
function commondirAttack(): string {
  return [
    plantScript('evil/fsm.sh'),
    'ln -s "$PWD/.git/objects" evil/objects && ln -s "$PWD/.git/refs" evil/refs',
    `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n' "$PWD/evil/fsm.sh" > evil/config`,
    'echo "$PWD/evil" > .git/commondir',
    'echo two >> README.md',
  ].join(' && ');
}

describeSandboxed("huddle's own git runs nothing an agent planted", () => {
  it('a planted commondir whose config sets core.fsmonitor: the key never leaves, the file is reported and moved aside', async () => {
    const result = await run(arena, [reply(toolUse('bash', { command: commondirAttack() }))]);
    expect(result.code, result.stderr).toBe(0);
    // The agent's command ran (not refused): the file was there for huddle's git to follow.
    expect(JSON.stringify(fake.requests[1]!.body.messages.at(-1))).toContain('[exit code 0]');
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/huddle: warning: planted git metadata: \.git\/commondir .*moved to \.team\/quarantine\//);
    expect(existsSync(path.join(arena.ws, '.git', 'commondir'))).toBe(false);
    const record = runRecord(arena.ws) as { planted_git?: Array<{ path: string }>; files: { list: Array<{ path: string }> } };
    expect(record.planted_git).toEqual([expect.objectContaining({ path: '.git/commondir' })]);
    // The record still reads the real repository.
    expect(record.files.list).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'README.md', added: 1 })]));
    // The person's own git afterwards: the file is gone, nothing runs.
    execFileSync('git', ['status', '--porcelain'], { cwd: arena.ws, env: { ...process.env, ...TEST_GIT_IDENTITY } });
    expectNoLeak(arena);
  });

  it("the same in ask mode with no approval: write_file a script and package.json, then the allow-listed npm test", async () => {
    const result = await run(
      arena,
      [
        reply(toolUse('write_file', { path: 'scripts/t.sh', content: `${commondirAttack()}\n` })),
        reply(toolUse('bash', { command: 'npm test' })),
      ],
      ['--permission-mode', 'ask'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify(fake.requests[2]!.body.messages.at(-1))).toContain('[exit code 0]');
    expect(result.stderr).not.toMatch(/approval|waiting for/i);
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/commondir/);
  });
});
