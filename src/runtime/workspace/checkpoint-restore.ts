// Bringing a checkpoint back (checkpoints.ts): the repository's state (objects, refs, HEAD, index,
// the stash's reflog; config, hooks and info only where they are missing: agents cannot write them
// in the sandbox, so what is there is the person's), and the files.
//
// `repairGit` is what runs on its own after a tool call broke `.git`: it only fills in what is
// missing. `rewindTo` is what the person asks for (`huddle rewind`, /rewind): the whole state as it
// was, after a checkpoint of the state now, so that a rewind can itself be undone.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { CheckpointError, gitPipe, gitText, runGit } from './checkpoint-git.js';
import { isDir, type Checkpoint, type Checkpoints } from './checkpoints.js';

/** The files of a checkpoint's `git` tree, written out to a temporary directory. */
async function extractState(store: Checkpoints, gitTree: string): Promise<{ dir: string; cleanup: () => void }> {
  const dir = mkdtempSync(path.join(store.dir, 'restore-'));
  const index = path.join(dir, '.index');
  const call = store.shadowCall({ GIT_INDEX_FILE: index, GIT_WORK_TREE: dir });
  await gitText(['read-tree', gitTree], call, 'cannot read the checkpoint');
  await gitText(['checkout-index', '-a', '-f', `--prefix=${dir}/state/`], { ...call, cwd: dir }, 'cannot read the checkpoint');
  return { dir: path.join(dir, 'state'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Puts the repository state of `gitTree` back into the workspace's `.git`. `force`: every ref, HEAD,
 * the index and the stash's reflog as they were; else only what is missing or broken. Returns what
 * it put back, in words.
 */
export async function restoreGitState(store: Checkpoints, gitTree: string, force: boolean): Promise<string[]> {
  const { dir: state, cleanup } = await extractState(store, gitTree);
  const done: string[] = [];
  try {
    const gitDir = store.gitDir;
    if (existsSync(gitDir) && !isDir(gitDir)) {
      renameSync(gitDir, `${gitDir}.moved-by-agent-${Date.now()}`);
      done.push('moved a file named .git aside');
    }
    for (const dir of ['objects/pack', 'objects/info', 'refs/heads', 'refs/tags', 'logs/refs']) mkdirSync(path.join(gitDir, dir), { recursive: true });
    const headFile = path.join(gitDir, 'HEAD');
    if (force || !existsSync(headFile) || !/^(ref: refs\/|[0-9a-f]{40})/.test(readOr(headFile))) {
      copyFileSync(path.join(state, 'HEAD'), headFile);
      done.push('HEAD');
    }
    for (const name of ['config', 'description']) {
      if (!existsSync(path.join(gitDir, name)) && existsSync(path.join(state, name))) {
        copyFileSync(path.join(state, name), path.join(gitDir, name));
        done.push(name);
      }
    }
    for (const name of ['hooks', 'info']) if (copyMissing(path.join(state, name), path.join(gitDir, name))) done.push(name);

    // Every object the refs, the stash and the index reach, from the shadow (it has them all).
    const refs = readOr(path.join(state, 'refs'))
      .split('\n')
      .map((line) => line.split(' '))
      .filter((parts): parts is [string, string] => parts.length === 2 && /^[0-9a-f]{40,64}$/.test(parts[0]!));
    const stashLog = readOr(path.join(state, 'stash-log'));
    const stashTips = stashLog
      .split('\n')
      .map((line) => line.split(' ')[1])
      .filter((id): id is string => !!id && /^[0-9a-f]{40,64}$/.test(id) && !/^0+$/.test(id));
    const wanted = [...new Set([...refs.map(([id]) => id), ...stashTips])];
    const hasIndex = existsSync(path.join(state, 'index'));
    const packArgs = ['pack-objects', '--revs', '--stdout', '-q', ...(hasIndex ? ['--indexed-objects'] : [])];
    const producer = {
      args: packArgs,
      call: store.shadowCall(hasIndex ? { GIT_INDEX_FILE: path.join(state, 'index') } : {}, wanted.map((id) => `${id}\n`).join('')),
    };
    const consumer = { args: ['index-pack', '--stdin'], call: { env: { GIT_DIR: gitDir }, cwd: gitDir } };
    const missing = force
      ? true
      : (await runGit(['cat-file', '--batch-check'], { env: { GIT_DIR: gitDir }, cwd: gitDir, input: wanted.map((id) => `${id}\n`).join('') })).stdout
          .toString()
          .includes(' missing');
    if (missing || force) {
      const copied = await gitPipe(producer, consumer);
      if (!copied.ok) throw new CheckpointError(`cannot copy the repository's objects back: ${copied.stderr.split('\n')[0] ?? ''}`);
      done.push('objects');
    }

    // Refs: all of them (force), else those gone or pointing at nothing.
    const now = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { env: { GIT_DIR: gitDir }, cwd: gitDir });
    const current = new Map(
      now.stdout
        .toString()
        .split('\n')
        .map((line) => line.split(' '))
        .filter((p) => p.length === 2)
        .map(([id, ref]) => [ref!, id!]),
    );
    const updates = refs.filter(([id, ref]) => (force ? current.get(ref) !== id : !current.has(ref)));
    if (updates.length) {
      await gitText(
        ['update-ref', '--no-deref', '--stdin'],
        { env: { GIT_DIR: gitDir }, cwd: gitDir, input: updates.map(([id, ref]) => `update ${ref} ${id}\n`).join('') },
        'cannot put the refs back',
      );
      done.push(`${updates.length} ref${updates.length === 1 ? '' : 's'}`);
    }
    // The stash's entries are its reflog: putting refs/stash back added a line to it, the saved one replaces it.
    const stashFile = path.join(gitDir, 'logs', 'refs', 'stash');
    const stashMoved = updates.some(([, ref]) => ref === 'refs/stash');
    if (stashLog && (force || stashMoved ? readOr(stashFile) !== stashLog : !existsSync(stashFile))) {
      writeFileSync(stashFile, stashLog);
      done.push('the stash');
    }
    const indexFile = path.join(gitDir, 'index');
    if (hasIndex && (force || !existsSync(indexFile))) {
      copyFileSync(path.join(state, 'index'), indexFile);
      done.push('the index');
    }
    return done;
  } finally {
    cleanup();
  }
}

/**
 * The files of checkpoint `target` back in the workspace (all, or only `only`: files or directories
 * relative to the root); files it did not have are removed, as `current` (the state just before)
 * shows. Returns how many were written and removed.
 */
export async function restoreFiles(
  store: Checkpoints,
  target: Checkpoint,
  current: Checkpoint,
  only?: string[],
): Promise<{ written: number; removed: string[] }> {
  const pathspec = only?.length ? ['--', ...only] : [];
  const listed = async (tree: string) =>
    (await gitText(['ls-tree', '-r', '-z', '--name-only', tree, ...pathspec], store.shadowCall(), 'cannot read the checkpoint')).split('\0').filter(Boolean);
  const wanted = await listed(target.filesTree);
  const had = new Set(wanted);
  const removed = (await listed(current.filesTree)).filter((file) => !had.has(file));
  const index = path.join(store.dir, `rewind-index.${process.pid}`);
  const call = store.shadowCall({ GIT_INDEX_FILE: index, GIT_WORK_TREE: store.root });
  try {
    // Read first: a checkpoint git cannot read back (a path it refuses) fails here, before a file is removed.
    if (wanted.length) await gitText(['read-tree', target.filesTree], call, 'cannot read the checkpoint');
    for (const file of removed) {
      try {
        unlinkSync(path.join(store.root, file));
      } catch {
        // already gone
      }
    }
    if (wanted.length) {
      for (const file of wanted) clearWay(store.root, file);
      await gitText(
        ['checkout-index', '-f', '-z', '--stdin'],
        { ...call, cwd: store.root, input: wanted.map((f) => `${f}\0`).join('') },
        'cannot write the files back',
      );
    }
  } finally {
    rmSync(index, { force: true });
  }
  return { written: wanted.length, removed };
}

/** A directory where the file must go (or a file where its directory must be) is moved out of the way. */
function clearWay(root: string, file: string): void {
  const parts = file.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const p = path.join(root, ...parts.slice(0, i));
    let info;
    try {
      info = statSync(p);
    } catch {
      return;
    }
    const last = i === parts.length;
    if ((last && info.isDirectory() && readdirSync(p).length === 0) || (!last && !info.isDirectory())) rmSync(p, { recursive: false, force: true });
  }
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Files of `from` that `to` lacks, copied (with their modes). True when any was. */
function copyMissing(from: string, to: string): boolean {
  if (!isDir(from)) return false;
  mkdirSync(to, { recursive: true });
  let any = false;
  for (const name of readdirSync(from)) {
    const source = path.join(from, name);
    const target = path.join(to, name);
    if (isDir(source)) any = copyMissing(source, target) || any;
    else if (!existsSync(target)) {
      copyFileSync(source, target);
      chmodSync(target, statSync(source).mode & 0o777);
      any = true;
    }
  }
  return any;
}
