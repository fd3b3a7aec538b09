// The checkpoints' change detector (runtime/workspace/checkpoint-snapshot.ts): a workspace whose
// files did not change costs no git process, and every kind of change still makes a new checkpoint
// that holds it (real git; the git that huddle runs is counted through a wrapper first on PATH).
// The racy cases (a change within the same clock tick as the snapshot, so its stat did not move)
// are also checked on the detector itself, where the stat is made to match exactly.
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useGitCountingWorkspace } from '../../helpers/git-counting-workspace.js';
import { Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import { FINE_RACY_MS, isRacy, RACY_MS, unchangedSince, type WorkspaceSnapshot } from '../../../src/runtime/workspace/checkpoint-snapshot.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';

const fixture = useGitCountingWorkspace('huddle-snapshot-');
let ws: string;
beforeEach(() => {
  ({ ws } = fixture);
});

const gitRuns = (): number => fixture.gitCalls().length;
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...TEST_GIT_IDENTITY } });
/** A file as a checkpoint holds it (undefined: not in it). */
const inCheckpoint = (store: Checkpoints, id: string, file: string): string | undefined => {
  try {
    return execFileSync('git', ['--git-dir', store.shadow, 'show', `${id}:files/${file}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
};
const take = (store: Checkpoints) => store.take({ agent: 'lead', tool: 'bash', summary: 'x' });
/**
 * Lets the racy window pass, so that the snapshot's stats are proof and a change is found by its stat
 * (not by hashing): the clock passing, not a wait on huddle, so load cannot make it flaky.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, RACY_MS + 100));

for (const repository of [false, true]) {
  describe(repository ? 'a workspace with its own repository' : 'a workspace that is no repository', () => {
    beforeEach(() => {
      mkdirSync(path.join(ws, 'src', 'deep'), { recursive: true });
      mkdirSync(path.join(ws, 'build', 'objs'), { recursive: true });
      writeFileSync(path.join(ws, '.gitignore'), '*.o\n/ignored/\n');
      writeFileSync(path.join(ws, 'a.txt'), 'one\n');
      writeFileSync(path.join(ws, 'src', 'deep', 'b.txt'), 'two\n');
      writeFileSync(path.join(ws, 'build', 'objs', 'x.o'), 'object\n');
      writeFileSync(path.join(ws, 'run.sh'), 'echo hi\n');
      symlinkSync('a.txt', path.join(ws, 'link'));
      mkdirSync(path.join(ws, 'ignored'));
      if (repository) {
        git(ws, 'init', '-q', '-b', 'main');
        git(ws, 'add', '-A');
        git(ws, 'commit', '-q', '-m', 'one');
      }
    });

    it('costs no git process when nothing changed, and none when only ignored paths did', async () => {
      const store = new Checkpoints(ws);
      const first = await take(store);
      await settle();
      const second = await take(store); // the racy window of the first snapshot has passed
      const runs = gitRuns();
      expect((await take(store)).id).toBe(first.id);
      expect(second.id).toBe(first.id);
      writeFileSync(path.join(ws, 'ignored', 'cache.bin'), 'ignored\n');
      writeFileSync(path.join(ws, 'build', 'objs', 'x.o'), 'object, rebuilt\n');
      expect((await take(store)).id).toBe(first.id);
      expect(gitRuns()).toBe(runs);
    });

    const changes: Array<[string, () => void, (store: Checkpoints, id: string) => void]> = [
      [
        'an edit',
        () => writeFileSync(path.join(ws, 'src', 'deep', 'b.txt'), 'two, edited\n'),
        (store, id) => expect(inCheckpoint(store, id, 'src/deep/b.txt')).toBe('two, edited\n'),
      ],
      [
        'a new file',
        () => writeFileSync(path.join(ws, 'src', 'deep', 'c.txt'), 'new\n'),
        (store, id) => expect(inCheckpoint(store, id, 'src/deep/c.txt')).toBe('new\n'),
      ],
      [
        'a new file in a directory of ignored files only',
        () => writeFileSync(path.join(ws, 'build', 'objs', 'notes.txt'), 'mine\n'),
        (store, id) => expect(inCheckpoint(store, id, 'build/objs/notes.txt')).toBe('mine\n'),
      ],
      [
        'a new directory',
        () => {
          mkdirSync(path.join(ws, 'new', 'dir'), { recursive: true });
          writeFileSync(path.join(ws, 'new', 'dir', 'd.txt'), 'deep\n');
        },
        (store, id) => expect(inCheckpoint(store, id, 'new/dir/d.txt')).toBe('deep\n'),
      ],
      ['a deletion', () => unlinkSync(path.join(ws, 'src', 'deep', 'b.txt')), (store, id) => expect(inCheckpoint(store, id, 'src/deep/b.txt')).toBeUndefined()],
      [
        'a mode change',
        () => chmodSync(path.join(ws, 'run.sh'), 0o755),
        (store, id) => expect(execFileSync('git', ['--git-dir', store.shadow, 'ls-tree', id, 'files/run.sh'], { encoding: 'utf8' })).toMatch(/^100755 /),
      ],
      [
        'a symbolic link pointed elsewhere',
        () => {
          unlinkSync(path.join(ws, 'link'));
          symlinkSync('run.sh', path.join(ws, 'link'));
        },
        (store, id) => expect(inCheckpoint(store, id, 'link')).toBe('run.sh'),
      ],
      [
        'a .gitignore that stops ignoring',
        () => writeFileSync(path.join(ws, '.gitignore'), '/ignored/\n'),
        (store, id) => expect(inCheckpoint(store, id, 'build/objs/x.o')).toBe('object\n'),
      ],
    ];
    for (const [what, change, check] of changes) {
      it(`${what}, once the snapshot has settled, makes a new checkpoint holding it`, async () => {
        const store = new Checkpoints(ws);
        const first = await take(store);
        await settle();
        expect((await take(store)).id).toBe(first.id);
        change();
        const after = await take(store);
        expect(after.id).not.toBe(first.id);
        check(store, after.id);
      });
    }

    it('a same-size edit at once, its mtime put back (racily clean), makes a new checkpoint holding it', async () => {
      const store = new Checkpoints(ws);
      await take(store);
      const file = path.join(ws, 'src', 'deep', 'b.txt');
      const before = statSync(file);
      writeFileSync(file, 'TWO\n');
      utimesSync(file, before.atime, before.mtime);
      const after = await take(store);
      expect(inCheckpoint(store, after.id, 'src/deep/b.txt')).toBe('TWO\n');
      // And again right away, the file written just before the checkpoint (racy in the shadow index too).
      writeFileSync(file, 'Two\n');
      utimesSync(file, before.atime, before.mtime);
      expect(inCheckpoint(store, (await take(store)).id, 'src/deep/b.txt')).toBe('Two\n');
    });
  });
}

it('a store that starts from the shadow another process left (no snapshot yet) still finds an edit git cannot see', async () => {
  writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  writeFileSync(path.join(ws, 'b.txt'), 'unchanged\n');
  const first = new Checkpoints(ws);
  await take(first);
  const file = path.join(ws, 'a.txt');
  const before = statSync(file);
  writeFileSync(file, 'ONE\n');
  utimesSync(file, before.atime, before.mtime);
  const second = new Checkpoints(ws); // as the next huddle process would
  expect(inCheckpoint(second, (await take(second)).id, 'a.txt')).toBe('ONE\n');
});

describe('the detector itself, where a change left every stat as it was', () => {
  const blobId = (content: string) => execFileSync('git', ['hash-object', '--stdin'], { input: content, encoding: 'utf8' }).trim();
  const snapshotOf = (takenMs: number, oid: string, names?: string[]): WorkspaceSnapshot => {
    const dir = lstatSync(ws, { bigint: true });
    const file = lstatSync(path.join(ws, 'f.txt'), { bigint: true });
    return {
      takenMs,
      dirs: [{ path: '', ino: dir.ino, mtimeNs: dir.mtimeNs, ctimeNs: dir.ctimeNs, listing: ['f.txt'], ...(names ? { names } : {}) }],
      entries: [
        {
          path: 'f.txt',
          raw: Buffer.from('f.txt'),
          mode: 0o100644,
          oid,
          ctimeSec: Number(file.ctimeNs / 1_000_000_000n),
          ctimeNsec: Number(file.ctimeNs % 1_000_000_000n),
          mtimeSec: Number(file.mtimeNs / 1_000_000_000n),
          mtimeNsec: Number(file.mtimeNs % 1_000_000_000n),
          ino: Number(file.ino & 0xffffffffn),
          size: Number(file.size),
        },
      ],
      ignored: new Map(),
      excludesStamp: '',
      gitignores: [],
    };
  };

  it('hashes a file whose stat is within the racy window, and finds the edit its stat hides', () => {
    writeFileSync(path.join(ws, 'f.txt'), 'new content\n');
    // The checkpoint holds other content of the same size, its stat recorded as the file's is now.
    expect(unchangedSince(ws, snapshotOf(Date.now(), blobId('old content\n')), 'sha1')).toBe(false);
    expect(unchangedSince(ws, snapshotOf(Date.now(), blobId('new content\n')), 'sha1')).toBe(true);
    // Outside the window the stat is proof (what makes the racy check necessary).
    expect(unchangedSince(ws, snapshotOf(Date.now() + 60_000, blobId('old content\n')), 'sha1')).toBe(true);
  });

  it('lists a directory that was racy, and finds the file its stat hides', () => {
    writeFileSync(path.join(ws, 'f.txt'), 'content\n');
    writeFileSync(path.join(ws, 'g.txt'), 'created in the same tick\n');
    const oid = blobId('content\n');
    expect(unchangedSince(ws, snapshotOf(Date.now(), oid, ['f.txt']), 'sha1')).toBe(false);
    expect(unchangedSince(ws, snapshotOf(Date.now(), oid, ['f.txt', 'g.txt']), 'sha1')).toBe(true);
  });
});

describe('the racy margin', () => {
  const NOW = 1_800_000_000_123;
  const statAt = (ms: number, nanos = 456_789n) => {
    const ns = BigInt(ms) * 1_000_000n + nanos;
    return { ctimeNs: ns, mtimeNs: ns } as BigIntStats;
  };

  it('is a clock tick where timestamps keep nanoseconds, and a second where they keep whole seconds', () => {
    expect(isRacy(statAt(NOW - 10), NOW, FINE_RACY_MS)).toBe(true);
    expect(isRacy(statAt(NOW - 4 * FINE_RACY_MS), NOW, FINE_RACY_MS)).toBe(false);
    expect(isRacy(statAt(NOW - 4 * FINE_RACY_MS), NOW)).toBe(true);
    // A ctime in whole seconds (ext3's small inodes, a FAT or network mount inside the workspace): a second's margin.
    const thisSecond = Math.floor(NOW / 1000) * 1000;
    expect(isRacy(statAt(thisSecond, 0n), NOW, FINE_RACY_MS)).toBe(true);
    expect(isRacy(statAt(thisSecond), NOW, FINE_RACY_MS)).toBe(false);
    expect(isRacy(statAt(thisSecond - 1000, 0n), NOW, FINE_RACY_MS)).toBe(false);
  });
});
