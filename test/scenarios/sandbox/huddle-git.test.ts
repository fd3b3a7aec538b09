// huddle's own git (runtime/git/host-git.ts) runs outside the sandbox, so nothing an agent writes
// into the repository may make it run a program: a real `huddle -p` whose lead (scripted through
// the fake API) plants git metadata with bash or write_file, then the run record's git (and later
// the person's huddle worktree commands) run. The program would copy its environment (the API key
// is a marker) into a victim directory outside the workspace. Each planted file is also reported.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { runCli } from '../../helpers/run-cli.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';
import { gitBaseline, gitChanges } from '../../../src/runtime/record/git-changes.js';
import { ensureWorktree, listWorktreeNames, mergeWorktree, worktreeDiff, worktreeStatus } from '../../../src/runtime/workspace/worktree.js';

/** The request after a bash call carries its result, and the command ran (a refusal or a failure is an error result). */
function expectCommandRan(request: { body: { messages: Array<{ content: unknown }> } }): void {
  const content = request.body.messages.at(-1)!.content as Array<{ type: string; is_error?: boolean; content?: unknown }>;
  expect(content).toHaveLength(1);
  expect(content[0]).toMatchObject({ type: 'tool_result' });
  expect(content[0]!.is_error, JSON.stringify(content[0]!.content)).not.toBe(true);
}

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
    expectCommandRan(fake.requests[1]!);
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

  it('the same in ask mode with no approval: write_file a script and package.json, then the allow-listed npm test', async () => {
    const result = await run(
      arena,
      [reply(toolUse('write_file', { path: 'scripts/t.sh', content: `${commondirAttack()}\n` })), reply(toolUse('bash', { command: 'npm test' }))],
      ['--permission-mode', 'ask'],
    );
    expect(result.code, result.stderr).toBe(0);
    expectCommandRan(fake.requests[2]!);
    expect(result.stderr).not.toMatch(/approval|waiting for/i);
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/commondir/);
  });
});

/** The person's repository config gets `lines` (a setting the agent cannot write, it is read-only to it). */
function personConfig(...args: string[]): void {
  execFileSync('git', ['config', ...args], { cwd: arena.ws });
}

function quarantined(ws: string): string[] {
  const dir = path.join(ws, '.team', 'quarantine');
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      if (name.isDirectory()) walk(path.join(d, name.name), path.join(rel, name.name));
      else out.push(path.join(rel, name.name).split(path.sep).slice(1).join('/'));
    }
  };
  walk(dir, '');
  return out;
}

describeSandboxed('more spellings of planted git metadata', () => {
  it('config.worktree (the person uses extensions.worktreeConfig) sets core.fsmonitor', async () => {
    personConfig('extensions.worktreeConfig', 'true');
    const result = await run(arena, [
      reply(
        toolUse('bash', {
          command: `${plantScript('tools/fsm.sh')} && printf '[core]\\n\\tfsmonitor = %s\\n' "$PWD/tools/fsm.sh" > .git/config.worktree && echo two >> README.md`,
        }),
      ),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/config\.worktree .*moved to/);
    expect(quarantined(arena.ws)).toEqual(['.git/config.worktree']);
  });

  it('a filter named in .gitattributes, defined in config.worktree', async () => {
    personConfig('extensions.worktreeConfig', 'true');
    const result = await run(arena, [
      reply(
        toolUse('bash', {
          command: `${plantScript('tools/clean.sh', true)} && printf '[filter "x"]\\n\\tclean = %s\\n' "$PWD/tools/clean.sh" > .git/config.worktree && echo '*.md filter=x' > .gitattributes && echo two >> README.md`,
        }),
      ),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/config\.worktree/);
  });

  it("a filter defined in a workspace file the person's config includes", async () => {
    personConfig('include.path', '../team.gitconfig');
    const result = await run(arena, [
      reply(
        toolUse('bash', {
          command: `${plantScript('tools/clean.sh', true)} && printf '[filter "x"]\\n\\tclean = %s\\n\\tprocess = %s\\n' "$PWD/tools/clean.sh" "$PWD/tools/clean.sh" > team.gitconfig && echo '* filter=x' > .gitattributes && echo two >> README.md`,
        }),
      ),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expectNoLeak(arena);
    // The record still counts the change (the filter was not needed to read it).
    const record = runRecord(arena.ws) as { files: { list: Array<{ path: string }> } };
    expect(record.files.list).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'README.md' })]));
  });

  it('objects/info/alternates pointing at a directory outside the workspace is reported and moved aside', async () => {
    const result = await run(arena, [
      reply(toolUse('bash', { command: `mkdir -p .git/objects/info && echo ${arena.victim}/nested > .git/objects/info/alternates` })),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/objects\/info\/alternates .*moved to/);
    expect(existsSync(path.join(arena.ws, '.git', 'objects', 'info', 'alternates'))).toBe(false);
    expect(quarantined(arena.ws)).toEqual(['.git/objects/info/alternates']);
  });

  it('a .git gitfile in a workspace below its repository: huddle keeps to the real repository', async () => {
    const app = path.join(arena.ws, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'main.txt'), 'x\n');
    execFileSync('git', ['add', '.'], { cwd: arena.ws });
    execFileSync('git', ['commit', '-q', '-m', 'app'], { cwd: arena.ws, env: { ...process.env, ...TEST_GIT_IDENTITY } });
    fake.enqueue(
      reply(
        toolUse('bash', {
          command: `${plantScript('fsm.sh')} && cp -r ../.git .evil && git --git-dir=.evil config core.fsmonitor "$PWD/fsm.sh" && git --git-dir=.evil config core.worktree "$PWD" && printf 'gitdir: .evil\\n' > .git && echo y >> main.txt`,
        }),
      ),
      replyText('Done.'),
    );
    const result = await runCli(['-p', 'work'], { cwd: app, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, ...TEST_GIT_IDENTITY } });
    expect(result.code, result.stderr).toBe(0);
    expectCommandRan(fake.requests[1]!);
    expectNoLeak(arena);
    expect(result.stderr).toMatch(/planted git metadata: \.git .*moved to/);
    const record = runRecord(app) as { files: { list: Array<{ path: string }> } };
    expect(record.files.list).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'app/main.txt', added: 1 })]));
  });

  it('.git itself swapped (from a script, past the deny-list) for a gitfile to a copy whose config sets core.fsmonitor', async () => {
    const swap = `${plantScript('fsm.sh')} && cp -r .git .evil && git --git-dir=.evil config core.fsmonitor "$PWD/fsm.sh" && mv .git .git-real && printf 'gitdir: .evil\\n' > .git; echo two >> README.md; ls -la .git`;
    const result = await run(arena, [
      reply(toolUse('write_file', { path: 'swap.sh', content: `${swap}\n` })),
      reply(toolUse('bash', { command: 'sh swap.sh' })),
    ]);
    expect(result.code, result.stderr).toBe(0);
    // The sandbox's read-only mounts inside .git keep it where it is (mv: Device or resource busy).
    expect(lstatSync(path.join(arena.ws, '.git')).isDirectory()).toBe(true);
    expectNoLeak(arena);
  });
});

describeSandboxed('planted where git looks without being asked', () => {
  it('a hook where the person had none (no hooks directory): reported, moved aside, and never run by huddle', async () => {
    rmSync(path.join(arena.ws, '.git', 'hooks'), { recursive: true, force: true });
    const result = await run(arena, [
      reply(toolUse('bash', { command: `${plantScript('.git/hooks/reference-transaction')} && cp .git/hooks/reference-transaction .git/hooks/post-merge` })),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expectCommandRan(fake.requests[1]!);
    expect(result.stderr).toMatch(/planted git metadata: \.git\/hooks\/reference-transaction .*moved to/);
    expect(quarantined(arena.ws).sort()).toEqual(['.git/hooks/post-merge', '.git/hooks/reference-transaction']);
    expectNoLeak(arena);
  });

  it('a submodule the agent adds, whose own config sets core.fsmonitor and a filter', async () => {
    const sub = [
      'mkdir sub && cd sub && git init -q',
      plantScript('../tools/fsm.sh', true).replace('mkdir -p ../tools', 'mkdir -p ../tools'),
      'git config core.fsmonitor "$PWD/../tools/fsm.sh" && git config filter.x.clean "$PWD/../tools/fsm.sh" && echo "* filter=x" > .gitattributes',
      'echo s > s.txt && git add -A && git -c core.fsmonitor=false commit -q -m s && echo more >> s.txt',
      'cd .. && git -c core.fsmonitor=false add sub && echo two >> README.md',
    ].join(' && ');
    const result = await run(arena, [reply(toolUse('bash', { command: sub }))]);
    expect(result.code, result.stderr).toBe(0);
    expectCommandRan(fake.requests[1]!);
    expectNoLeak(arena);
  });
});

describeSandboxed('a planted file left behind does not run when the person later uses huddle', () => {
  it("the run record's git and the worktree operations (create, status, diff, merge) keep to the real repository", async () => {
    const ws = arena.ws;
    const sh = (command: string) => execFileSync('sh', ['-c', command], { cwd: ws });
    sh(`${plantScript('evil/fsm.sh').replaceAll(arena.ws + '/', '')}`);
    sh('ln -s "$PWD/.git/objects" evil/objects && ln -s "$PWD/.git/refs" evil/refs');
    sh(
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n[filter "x"]\\n\\tclean = %s\\n' "$PWD/evil/fsm.sh" "$PWD/evil/fsm.sh" > evil/config`,
    );
    sh('echo "* filter=x" > .gitattributes && echo "$PWD/evil" > .git/commondir && echo two >> README.md');
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = KEY;
    Object.assign(process.env, TEST_GIT_IDENTITY);
    let changes: Awaited<ReturnType<typeof gitChanges>>;
    try {
      const base = await gitBaseline(ws);
      expect(base).toMatch(/^[0-9a-f]{40}$/);
      changes = await gitChanges(ws, base!);
      // A hook where the person had none, left behind too: ensureWorktree's `git branch` updates a ref.
      rmSync(path.join(ws, '.git', 'hooks'), { recursive: true, force: true });
      sh(plantScript('.git/hooks/reference-transaction').replaceAll(arena.ws + '/', ''));
      await ensureWorktree(ws, 'alice').catch(() => undefined);
      await worktreeStatus(ws, 'alice').catch(() => undefined);
      await worktreeDiff(ws, 'alice').catch(() => undefined);
      await listWorktreeNames(ws).catch(() => undefined);
      await mergeWorktree(ws, 'alice').catch(() => undefined);
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    expectNoLeak(arena);
    expect(changes?.files).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'README.md', added: 1 })]));
    expect(await listWorktreeNames(ws)).toEqual(['alice']);
    expectNoLeak(arena);
  });

  it('a commondir left from before the session is moved aside as it opens, and the repository still reads as itself', async () => {
    mkdirSync(path.join(arena.ws, 'empty'));
    writeFileSync(path.join(arena.ws, '.git', 'commondir'), `${arena.ws}/empty\n`);
    writeFileSync(path.join(arena.ws, 'README.md'), 'one\ntwo\n');
    // (The arena lies inside huddle's own repository: git skips a .git it cannot use and finds that one.)
    const result = await run(arena, []);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /huddle: warning: planted git metadata: \.git\/commondir \(points git at .*empty; git writes it only in a linked worktree\) — moved to \.team\/quarantine\//,
    );
    expect(quarantined(arena.ws)).toEqual(['.git/commondir']);
    const record = runRecord(arena.ws) as { files: { list: Array<{ path: string }> } | null };
    expect(record.files?.list).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'README.md', added: 1 })]));
  });
});
