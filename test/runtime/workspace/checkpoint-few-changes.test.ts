// A checkpoint of a workspace where a few files changed in directories the last one looked into is
// taken without `git add -A` (runtime/workspace/checkpoint-few-changes.ts), and holds exactly the
// tree git itself records for the workspace then: changed, new, ignored, re-included, removed and
// executable files, and new directories read as git's walk would. A .gitignore or symlink in a new
// directory, or attributes that could change the bytes git stores, go to git as before. Real git;
// the git that huddle runs is logged through a wrapper first on PATH.
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useGitCountingWorkspace } from '../../helpers/git-counting-workspace.js';
import { Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import { fewChanges, gitGuardedName } from '../../../src/runtime/workspace/checkpoint-few-changes.js';
import { blobId, FINE_RACY_MS, racyMarginMs, type DirStat, type WorkspaceSnapshot } from '../../../src/runtime/workspace/checkpoint-snapshot.js';
import { restoreFiles } from '../../../src/runtime/workspace/checkpoint-restore.js';

const fixture = useGitCountingWorkspace('huddle-few-');
let base: string;
let ws: string;
beforeEach(() => {
  ({ base, ws } = fixture);
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  writeFileSync(path.join(ws, 'a.txt'), 'a\n');
  writeFileSync(path.join(ws, 'src', 'b.txt'), 'b\n');
  writeFileSync(path.join(ws, 'src', 'c.txt'), 'c\n');
  writeFileSync(path.join(ws, '.gitignore'), '*.log\n!keep.log\n');
});

const gitCalls = () => fixture.gitCalls();
const take = (store: Checkpoints) => store.take({ agent: 'lead', tool: 'bash', summary: 'x' });
/** The files tree git itself makes of the workspace now, with the shadow's excludes, in an index of its own. */
const treeByGit = (store: Checkpoints): string => {
  const env = { ...process.env, GIT_DIR: store.shadow, GIT_WORK_TREE: ws, GIT_INDEX_FILE: path.join(base, 'check-index') };
  rmSync(env.GIT_INDEX_FILE, { force: true });
  execFileSync('git', ['add', '-A'], { cwd: ws, env });
  return execFileSync('git', ['write-tree'], { cwd: ws, env, encoding: 'utf8' }).trim();
};
/** This process's children running `git check-ignore --stdin`, zombies included (their /proc entry stays until reaped). */
const checkIgnoreChildren = (): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) return false;
        return stat.includes('(git)') && (stat.includes(') Z') || readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('check-ignore'));
      } catch {
        return false;
      }
    })
    .map(Number);
const addsSince = (from: number) =>
  gitCalls()
    .slice(from)
    .filter((line) => / add /.test(` ${line} `));

describe('a checkpoint after a few changes in known directories', () => {
  it('runs no git add and holds what git add -A would record', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    const before = gitCalls().length;
    writeFileSync(path.join(ws, 'a.txt'), 'a changed\n');
    chmodSync(path.join(ws, 'a.txt'), 0o755);
    unlinkSync(path.join(ws, 'src', 'b.txt'));
    writeFileSync(path.join(ws, 'src', 'new.txt'), 'new\n');
    writeFileSync(path.join(ws, 'src', 'debug.log'), 'ignored\n');
    writeFileSync(path.join(ws, 'src', 'keep.log'), 'kept: a negated pattern\n');
    writeFileSync(path.join(ws, ':(glob)odd*.txt'), 'a name git could read as a pathspec\n');
    const second = await take(store);
    expect(addsSince(before)).toEqual([]);
    expect(second.filesTree).toBe(treeByGit(store));
    const listed = execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', second.filesTree], { encoding: 'utf8' });
    expect(listed.split('\n').filter(Boolean).sort()).toEqual(['.gitignore', ':(glob)odd*.txt', 'a.txt', 'src/c.txt', 'src/keep.log', 'src/new.txt']);

    // And again on top of it (its snapshot is the next one's base), then through git once more.
    const again = gitCalls().length;
    writeFileSync(path.join(ws, 'src', 'new.txt'), 'new, twice\n');
    const third = await take(store);
    expect(addsSince(again)).toEqual([]);
    expect(third.filesTree).toBe(treeByGit(store));
    mkdirSync(path.join(ws, 'src', 'sub'));
    writeFileSync(path.join(ws, 'src', 'sub', 'd.txt'), 'd\n');
    unlinkSync(path.join(ws, 'src', 'new.txt'));
    const fourth = await take(store);
    expect(fourth.filesTree).toBe(treeByGit(store));
  });

  it('files a team wrote in the last second are proven unchanged by their stat, not read again: a new file is one blob', async () => {
    // This machine's workspace keeps nanosecond timestamps (ext4, tmpfs, overlayfs…): the racy margin is a clock tick, not a second.
    expect(racyMarginMs(ws)).toBe(FINE_RACY_MS);
    mkdirSync(path.join(ws, 'out'));
    const files = Array.from({ length: 80 }, (_, i) => `out/task-${i}.ts`);
    for (const file of files) writeFileSync(path.join(ws, file), `export const x = '${file}';\n`);
    // The snapshot as a checkpoint taken 200 ms after those writes records it (stats, blob ids, listings).
    const stats = files.map((file) => lstatSync(path.join(ws, file), { bigint: true }));
    const newest = stats.reduce((max, stat) => (stat.ctimeNs > max ? stat.ctimeNs : max), 0n);
    const dirStat = (dir: string, listing: string[]): DirStat => {
      const stat = lstatSync(path.join(ws, dir), { bigint: true });
      return { path: dir, ino: stat.ino, mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs, listing: listing.sort() };
    };
    const snapshot: WorkspaceSnapshot = {
      takenMs: Number(newest / 1_000_000n) + 200,
      dirs: [dirStat('', readdirSync(ws)), dirStat('out', readdirSync(path.join(ws, 'out')))],
      entries: files.map((file, i) => ({
        path: file,
        raw: Buffer.from(file),
        mode: 0o100644,
        oid: blobId(readFileSync(path.join(ws, file)), 'sha1'),
        ctimeSec: Number(stats[i]!.ctimeNs / 1_000_000_000n),
        ctimeNsec: Number(stats[i]!.ctimeNs % 1_000_000_000n),
        mtimeSec: Number(stats[i]!.mtimeNs / 1_000_000_000n),
        mtimeNsec: Number(stats[i]!.mtimeNs % 1_000_000_000n),
        ino: Number(stats[i]!.ino & 0xffffffffn),
        size: Number(stats[i]!.size),
      })),
      ignored: new Map(),
      excludesStamp: '',
      gitignores: [],
    };
    // Then an agent writes one more.
    writeFileSync(path.join(ws, 'out', 'task-80.ts'), 'export const x = 80;\n');
    const few = await fewChanges(ws, snapshot, 'sha1', async () => new Set());
    // With a second's margin the 80 were read again (racily clean), more than a few: git add -A instead.
    expect(few).toMatchObject({ blobs: [Buffer.from('export const x = 80;\n')] });
  });

  it("its long-lived git ends with the run, reaped (the run's end waits for it)", async () => {
    const others = new Set(checkIgnoreChildren()); // other tests' stores, in this process
    const ours = () => checkIgnoreChildren().filter((pid) => !others.has(pid));
    const store = new Checkpoints(ws);
    await take(store);
    writeFileSync(path.join(ws, 'src', 'new.txt'), 'new\n');
    await take(store);
    expect(ours()).toHaveLength(1);
    await store.endHelpers();
    expect(ours()).toEqual([]);
    // A later checkpoint starts it again.
    writeFileSync(path.join(ws, 'src', 'other.txt'), 'other\n');
    const later = await take(store);
    expect(later.filesTree).toBe(treeByGit(store));
    await store.endHelpers();
  });

  it('a file that goes while it is looked at (a temp file renamed into place by another agent) is looked at again, not handed to git', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    await store.endHelpers(); // the first walk started the long-lived git: the next question starts it again
    // The long-lived `git check-ignore` is asked about the new files between their listing and their reading: the
    // wrapper removes the temp file as that git starts, as another agent's rename would at that moment.
    const temp = path.join(ws, 'src', '.b.txt.tmp');
    const realGit = execFileSync('sh', ['-c', `PATH='${process.env.PATH!.split(':').slice(1).join(':')}' command -v git`], { encoding: 'utf8' }).trim();
    writeFileSync(
      path.join(base, 'bin', 'git'),
      `#!/bin/sh\necho "$*" >> '${path.join(base, 'git.log')}'\ncase "$*" in *check-ignore*) rm -f '${temp}' ;; esac\nexec '${realGit}' "$@"\n`,
    );
    writeFileSync(temp, 'half written\n');
    writeFileSync(path.join(ws, 'src', 'new.txt'), 'new\n');
    const before = gitCalls().length;
    const next = await take(store);
    expect(
      gitCalls()
        .slice(before)
        .some((line) => line.includes('check-ignore')),
    ).toBe(true); // the temp file went where the test meant
    expect(addsSince(before)).toEqual([]);
    expect(next.filesTree).toBe(treeByGit(store));
    const listed = execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', next.filesTree], { encoding: 'utf8' });
    expect(listed.split('\n').filter(Boolean).sort()).toEqual(['.gitignore', 'a.txt', 'src/b.txt', 'src/c.txt', 'src/new.txt']);
    await store.endHelpers();
  });

  it('the walk asks the same long-lived git which new directories are ignored (no git per level), and learns a .gitignore found deeper', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    // A directory gone sends the checkpoint to git's walk, which meets three new levels.
    rmSync(path.join(ws, 'src'), { recursive: true });
    mkdirSync(path.join(ws, 'lib', 'deep', 'er'), { recursive: true });
    writeFileSync(path.join(ws, 'lib', 'deep', 'er', 'x.txt'), 'x\n');
    const walked = await take(store);
    expect(addsSince(0)).toHaveLength(2);
    expect(walked.filesTree).toBe(treeByGit(store));
    writeFileSync(path.join(ws, 'lib', 'new.txt'), 'new\n');
    const few = await take(store);
    expect(few.filesTree).toBe(treeByGit(store));
    const checkIgnores = () => gitCalls().filter((line) => / check-ignore /.test(` ${line} `));
    // Two walks (four levels asked) and a few-changes question, one git (each level was a git of its own before).
    expect(checkIgnores()).toHaveLength(1);

    mkdirSync(path.join(ws, 'lib', 'skipped'));
    writeFileSync(path.join(ws, 'lib', 'skipped', 'y.txt'), 'y: ignored by the .gitignore one level down\n');
    writeFileSync(path.join(ws, 'lib', '.gitignore'), 'skipped/\n');
    const ignoring = await take(store);
    expect(ignoring.filesTree).toBe(treeByGit(store));
    const listed = execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', ignoring.filesTree], { encoding: 'utf8' });
    expect(listed).toContain('lib/.gitignore');
    expect(listed).not.toContain('skipped');
    expect(checkIgnores().length).toBeGreaterThan(1); // started again: it had not read lib/.gitignore
    await store.endHelpers();
  });

  it('new directories are read without git add, as git would: ignored ones left out, nested ones walked', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    const before = gitCalls().length;
    mkdirSync(path.join(ws, 'lib', 'deep'), { recursive: true });
    writeFileSync(path.join(ws, 'lib', 'x.txt'), 'x\n');
    writeFileSync(path.join(ws, 'lib', 'debug.log'), 'ignored file in a new directory\n');
    writeFileSync(path.join(ws, 'lib', 'deep', 'y.txt'), 'y\n');
    chmodSync(path.join(ws, 'lib', 'deep', 'y.txt'), 0o755);
    mkdirSync(path.join(ws, 'lib', 'empty'));
    mkdirSync(path.join(ws, 'trace.log')); // a directory the *.log pattern ignores
    writeFileSync(path.join(ws, 'trace.log', 'z.txt'), 'z\n');
    const withDirs = await take(store);
    expect(addsSince(before)).toEqual([]);
    expect(withDirs.filesTree).toBe(treeByGit(store));
    const listed = execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', withDirs.filesTree], { encoding: 'utf8' });
    expect(listed.split('\n').filter(Boolean).sort()).toEqual(['.gitignore', 'a.txt', 'lib/deep/y.txt', 'lib/x.txt', 'src/b.txt', 'src/c.txt']);

    // The new directories are known now: a file in one is a few changes again, and nothing is a change.
    const known = gitCalls().length; // (treeByGit's own git add is logged too)
    writeFileSync(path.join(ws, 'lib', 'deep', 'w.txt'), 'w\n');
    const again = await take(store);
    expect(addsSince(known)).toEqual([]);
    expect(again.filesTree).toBe(treeByGit(store));
    expect((await take(store)).id).toBe(again.id);
    await store.endHelpers();
  });

  it('a new directory holding a .gitignore or a symlink is read by git', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    let before = gitCalls().length;
    mkdirSync(path.join(ws, 'pkg'));
    writeFileSync(path.join(ws, 'pkg', '.gitignore'), '*.txt\n');
    writeFileSync(path.join(ws, 'pkg', 'ignored.txt'), 'ignored by its own directory\n');
    writeFileSync(path.join(ws, 'pkg', 'kept.md'), 'kept\n');
    const withIgnore = await take(store);
    expect(addsSince(before)).not.toEqual([]);
    expect(withIgnore.filesTree).toBe(treeByGit(store));

    before = gitCalls().length;
    mkdirSync(path.join(ws, 'links'));
    symlinkSync('../a.txt', path.join(ws, 'links', 'to-a'));
    const withLink = await take(store);
    expect(addsSince(before)).not.toEqual([]);
    expect(withLink.filesTree).toBe(treeByGit(store));
    await store.endHelpers();
  });

  it('a new name git may refuse (.GIT, .git., git~1, in a new directory or a known one) goes to git, never into a checkpoint git cannot read back', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    for (const name of ['.GIT/config', 'src/.git.', 'd/git~1/x', 'src/.g\u200cit']) {
      mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
      writeFileSync(path.join(ws, name), 'x\n');
      const before = gitCalls().length;
      // git refuses the path: the checkpoint fails (its warning says so) or holds what git recorded, never the name.
      const taken = await take(store).catch(() => undefined);
      expect(addsSince(before), name).not.toEqual([]);
      if (taken) {
        const listed = execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', '-r', '--name-only', taken.filesTree], { encoding: 'utf8' });
        expect(listed.split('\n'), name).not.toContain(name);
      }
      rmSync(path.join(ws, name.split('/')[0] === 'src' ? name : name.split('/')[0]!), { recursive: true, force: true });
      await take(store).catch(() => undefined);
    }
    expect(['.git', '.GIT', '.Git.', '.git ', '.git::$INDEX_ALLOCATION', 'GIT~1', '.g\u200cit'].filter((n) => !gitGuardedName(n))).toEqual([]);
    expect(['.github', 'git', 'a.git', '.gitkeep', 'git~x'].filter((n) => gitGuardedName(n))).toEqual([]);
    await store.endHelpers();
  });

  it('a rewind to a checkpoint git cannot read back removes nothing', async () => {
    const store = new Checkpoints(ws);
    const current = await take(store);
    // A tree holding a path git refuses (made by hand: no checkpoint holds one now).
    const shadow = (args: string[], input?: string) => execFileSync('git', ['--git-dir', store.shadow, ...args], { encoding: 'utf8', input }).trim();
    const blob = shadow(['hash-object', '-w', '--stdin'], 'x\n');
    const sub = shadow(['mktree'], `100644 blob ${blob}\tconfig\n`);
    const bad = shadow(['mktree'], `040000 tree ${sub}\t.GIT\n`);
    await expect(restoreFiles(store, { ...current, filesTree: bad }, current)).rejects.toThrow();
    expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(path.join(ws, 'src', 'b.txt'), 'utf8')).toBe('b\n');
    await store.endHelpers();
  });

  it('a file system without executable bits or with case-folding names (as git init found it) is read by git', async () => {
    await take(new Checkpoints(ws));
    const store = new Checkpoints(ws); // as the next huddle process would, reading the shadow's config
    writeFileSync(path.join(store.shadow, 'config'), `${readFileSync(path.join(store.shadow, 'config'), 'utf8')}[core]\n\tfilemode = false\n`);
    await take(store);
    const before = gitCalls().length;
    writeFileSync(path.join(ws, 'a.txt'), 'a changed\n');
    await take(store);
    expect(addsSince(before)).not.toEqual([]);
  });

  it('a workspace with attributes is read by git', async () => {
    const store = new Checkpoints(ws);
    await take(store);
    writeFileSync(path.join(ws, '.gitattributes'), '*.txt text eol=lf\n');
    await take(store);
    const before = gitCalls().length;
    writeFileSync(path.join(ws, 'a.txt'), 'crlf\r\n');
    const withAttributes = await take(store);
    expect(addsSince(before)).not.toEqual([]);
    expect(withAttributes.filesTree).toBe(treeByGit(store));
  });
});
