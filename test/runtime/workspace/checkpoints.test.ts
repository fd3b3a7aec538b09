// Checkpoints on their own (runtime/workspace/checkpoints.ts, rewind.ts), real git, no agents: a
// workspace that is no repository (files only), and a SHA-256 repository (huddle writes the
// checkpoint's tree and commit objects itself, in the shadow's hash). The attacks through a real run
// are in test/scenarios/sandbox/checkpoints.test.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CHECKPOINT_REF, Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import { repairGitIfBroken, rewind } from '../../../src/runtime/workspace/rewind.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

let base: string;
let saved: string | undefined;
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-checkpoints-')));
  saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = path.join(base, 'state');
});
afterEach(() => {
  if (saved === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = saved;
  rmSync(base, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...TEST_GIT_IDENTITY } });

it('a workspace that is no repository: its files are checkpointed and rewound, and nothing is taken when nothing changed', async () => {
  const ws = path.join(base, 'plain');
  mkdirSync(path.join(ws, 'sub'), { recursive: true });
  writeFileSync(path.join(ws, 'notes.txt'), 'mine\n');
  writeFileSync(path.join(ws, 'sub', 'data.bin'), Buffer.from([0, 1, 2, 255]));
  const store = new Checkpoints(ws);
  const first = await store.take({ agent: 'lead', tool: 'bash', summary: 'rm -rf sub' });
  expect((await store.take({ agent: 'lead', tool: 'bash', summary: 'ls' })).id).toBe(first.id);
  rmSync(path.join(ws, 'sub'), { recursive: true });
  writeFileSync(path.join(ws, 'notes.txt'), '');
  writeFileSync(path.join(ws, 'new.txt'), "the agent's\n");
  const second = await store.take({ agent: 'lead', tool: 'write_file', summary: 'new.txt' });
  expect(second.id).not.toBe(first.id);
  const listed = await store.list();
  expect(listed.map((c) => c.id)).toEqual([second.id, first.id]);
  expect(listed[0]!.changed.sort()).toEqual(['A new.txt', 'D sub/data.bin', 'M notes.txt']);

  const outcome = await rewind(store, first.id.slice(0, 8));
  expect(readFileSync(path.join(ws, 'notes.txt'), 'utf8')).toBe('mine\n');
  expect([...readFileSync(path.join(ws, 'sub', 'data.bin'))]).toEqual([0, 1, 2, 255]);
  expect(existsSync(path.join(ws, 'new.txt'))).toBe(false);
  expect(outcome.git).toEqual([]);
  expect(outcome.removed).toEqual(['new.txt']);
  await rewind(store, outcome.before);
  expect(readFileSync(path.join(ws, 'new.txt'), 'utf8')).toBe("the agent's\n");
});

it('a SHA-256 repository: the shadow uses its hash, and a deleted .git is rebuilt whole', async () => {
  const ws = path.join(base, 'sha256');
  mkdirSync(ws);
  git(ws, 'init', '-q', '-b', 'main', '--object-format=sha256');
  writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  git(ws, 'add', 'a.txt');
  git(ws, 'commit', '-q', '-m', 'one');
  const head = git(ws, 'rev-parse', 'HEAD');
  const store = new Checkpoints(ws);
  const checkpoint = await store.take({ agent: 'lead', tool: 'bash', summary: 'x' });
  expect(checkpoint.id).toMatch(/^[0-9a-f]{64}$/);
  expect(git(base, '--git-dir', store.shadow, 'fsck', '--no-dangling')).toBe('');
  rmSync(path.join(ws, '.git'), { recursive: true });
  expect(await repairGitIfBroken(store)).toMatch(/^the repository \(.git\) is gone; huddle rebuilt it from checkpoint [0-9a-f]{8}/);
  expect(git(ws, 'rev-parse', 'HEAD')).toBe(head);
  expect(git(ws, 'status', '--porcelain')).toBe('');
  expect(await repairGitIfBroken(store)).toBeUndefined();
});

it("a new shadow is made without git's templates (no sample hooks, no description), and still takes, lists and ignores as before", async () => {
  const ws = path.join(base, 'fresh');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'a\n');
  const store = new Checkpoints(ws);
  const first = await store.take({ agent: 'lead', tool: 'bash', summary: 'ls' });
  expect(existsSync(path.join(store.shadow, 'hooks'))).toBe(false);
  expect(existsSync(path.join(store.shadow, 'description'))).toBe(false);
  // huddle's own exclude is there all the same: .team/ is not taken.
  expect(readFileSync(path.join(store.shadow, 'info', 'exclude'), 'utf8')).toContain('/.team/');
  mkdirSync(path.join(ws, '.team'));
  writeFileSync(path.join(ws, '.team', 'state.json'), '{}\n');
  writeFileSync(path.join(ws, 'b.txt'), 'b\n');
  const second = await store.take({ agent: 'lead', tool: 'write_file', summary: 'b.txt' });
  expect(git(base, '--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', second.filesTree).split('\n').filter(Boolean)).toEqual(['a.txt', 'b.txt']);
  expect((await store.list(10)).map((checkpoint) => checkpoint.id)).toEqual([second.id, first.id]);
  expect(git(base, '--git-dir', store.shadow, 'fsck', '--no-dangling')).toBe('');
});

it('takes no checkpoint of the home directory (too large, and it holds the credentials): one line saying why', async () => {
  const store = new Checkpoints(realpathSync(os.homedir()));
  await expect(store.take({ agent: 'lead', tool: 'bash', summary: 'x' })).rejects.toThrow(
    /^huddle keeps no checkpoints of \/ or your home directory .*: run huddle in a project directory$/,
  );
  expect(await repairGitIfBroken(store)).toBeUndefined();
  expect(existsSync(store.dir)).toBe(false);
});

it('calls that ask while a checkpoint is being taken share the next one, which holds what changed before they asked', async () => {
  const ws = path.join(base, 'side-by-side');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  const store = new Checkpoints(ws);
  await store.take({ agent: 'lead', tool: 'bash', summary: 'ls' });
  writeFileSync(path.join(ws, 'a.txt'), 'two\n');
  const [alice, bob] = await Promise.all([
    store.take({ agent: 'alice', tool: 'write_file', summary: 'x.txt' }),
    store.take({ agent: 'bob', tool: 'bash', summary: 'make' }),
  ]);
  expect(bob.id).toBe(alice.id);
  expect(alice).toMatchObject({ agent: 'alice, bob', tool: 'write_file, bash', summary: 'alice: x.txt; bob: make' });
  const shown = (id: string, file: string) => git(base, '--git-dir', store.shadow, 'show', `${id}:files/${file}`);
  expect(shown(alice.id, 'a.txt')).toBe('two\n');

  // One under way: the callers after it get a later one, taken after they asked.
  const carol = store.take({ agent: 'carol', tool: 'bash', summary: 'one' });
  await new Promise((resolve) => setImmediate(resolve));
  writeFileSync(path.join(ws, 'b.txt'), 'made while carol’s checkpoint ran\n');
  const [dave, erin] = await Promise.all([
    store.take({ agent: 'dave', tool: 'bash', summary: 'two' }),
    store.take({ agent: 'erin', tool: 'bash', summary: 'three' }),
  ]);
  await carol;
  expect(erin.id).toBe(dave.id);
  expect(shown(dave.id, 'b.txt')).toBe('made while carol’s checkpoint ran\n');
});

it('a workspace with no file yet is checkpointed as the empty tree without git add; files that come later, and a directory turned file, are held', async () => {
  const bin = path.join(base, 'bin');
  mkdirSync(bin);
  const gitLog = path.join(base, 'git.log');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath}`;
  const adds = () =>
    existsSync(gitLog)
      ? readFileSync(gitLog, 'utf8')
          .split('\n')
          .filter((line) => / add /.test(` ${line} `)).length
      : 0;
  const held = (store: Checkpoints, id: string, file: string) =>
    execFileSync('git', ['--git-dir', store.shadow, 'show', `${id}:files/${file}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const ws = path.join(base, 'fresh');
    mkdirSync(path.join(ws, 'empty', 'nested'), { recursive: true });
    mkdirSync(path.join(ws, 'x'));
    const store = new Checkpoints(ws);
    const first = await store.take({ agent: 'lead', tool: 'write_file', summary: 'out/a.txt' });
    expect(adds()).toBe(0);
    expect(first.filesTree).toBe(git(ws, 'hash-object', '-t', 'tree', '/dev/null').trim());
    expect(git(ws, '--git-dir', store.shadow, 'cat-file', '-t', first.filesTree).trim()).toBe('tree');

    mkdirSync(path.join(ws, 'out'));
    writeFileSync(path.join(ws, 'out', 'a.txt'), 'round 1\n');
    const second = await store.take({ agent: 'lead', tool: 'bash', summary: 'cat out/a.txt' });
    expect(second.id).not.toBe(first.id);
    expect(held(store, second.id, 'out/a.txt')).toBe('round 1\n');

    // A name the last walk knew as a directory is a file now: read by git, not taken for a directory.
    rmSync(path.join(ws, 'out'), { recursive: true });
    rmSync(path.join(ws, 'x'), { recursive: true });
    const third = await store.take({ agent: 'lead', tool: 'bash', summary: 'rm -r out x' });
    expect(third.filesTree).toBe(first.filesTree);
    writeFileSync(path.join(ws, 'x'), 'a file now\n');
    const fourth = await store.take({ agent: 'lead', tool: 'write_file', summary: 'x' });
    expect(held(store, fourth.id, 'x')).toBe('a file now\n');
    await store.endHelpers();
  } finally {
    process.env.PATH = savedPath;
  }
});

it("the checkpoints' ref is rewritten in place, the same file for every checkpoint; a ref that is missing or of another length is written anew, and git reads the latest each time", async () => {
  const ws = path.join(base, 'ref');
  mkdirSync(ws);
  const store = new Checkpoints(ws);
  const refFile = path.join(store.shadow, CHECKPOINT_REF);
  const ids: string[] = [];
  const take = async (n: number) => {
    writeFileSync(path.join(ws, `f${n}.txt`), `${n}\n`);
    const checkpoint = await store.take({ agent: 'lead', tool: 'write_file', summary: `f${n}.txt` });
    ids.push(checkpoint.id);
    expect(readFileSync(refFile, 'utf8')).toBe(`${checkpoint.id}\n`);
    expect(git(base, '--git-dir', store.shadow, 'rev-parse', CHECKPOINT_REF).trim()).toBe(checkpoint.id);
  };
  await take(1);
  const inode = statSync(refFile).ino;
  await take(2);
  await take(3);
  expect(statSync(refFile).ino).toBe(inode);
  expect((await store.list()).map((checkpoint) => checkpoint.id)).toEqual([ids[2], ids[1], ids[0]]);
  // Removed (a prune, by hand): made again.
  rmSync(refFile);
  await take(4);
  // Of another length (a person wrote a symbolic ref's text there, say): replaced whole, not patched.
  writeFileSync(refFile, `${ids[3]}\n\n`);
  await take(5);
  expect((await store.list()).map((checkpoint) => checkpoint.id).slice(0, 2)).toEqual([ids[4], ids[3]]);
  expect(readdirSync(path.dirname(refFile))).toEqual(['checkpoints']);
});
