// What the person and the run see of checkpoints (checkpoints.ts): a broken `.git` repaired on its
// own, a rewind to a checkpoint, and at the end of a run, the person's own uncommitted changes (those
// there when the run began) that the run reverted or deleted.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { closeIdleSandboxShells } from '../sandbox/index.js';
import { CheckpointError, gitText } from './checkpoint-git.js';
import { restoreFiles, restoreGitState } from './checkpoint-restore.js';
import type { Checkpoint, Checkpoints } from './checkpoints.js';

/**
 * When the repository is broken now but was whole at the last checkpoint, puts back what is missing.
 * Returns one line for the person, or undefined when there was nothing to do.
 */
export async function repairGitIfBroken(store: Checkpoints): Promise<string | undefined> {
  const reason = await store.brokenReason();
  if (!reason) return undefined;
  return store.serial(async () => {
    const last = store.lastTaken;
    if (!last?.gitTree) return undefined;
    const done = await restoreGitState(store, last.gitTree, false);
    store.invalidate();
    return `${reason}; huddle rebuilt it from checkpoint ${last.commit.slice(0, 8)} (${done.join(', ') || 'nothing was missing'})`;
  });
}

export interface RewindOutcome {
  /** The checkpoint of the state just before the rewind: rewinding to it undoes this one. */
  before: string;
  written: number;
  removed: string[];
  git: string[];
}

/**
 * The workspace as checkpoint `id` had it: its files (or only `files`), and unless `files` is given,
 * the repository's refs, HEAD, index and stash too. The state before is checkpointed first.
 */
export async function rewind(store: Checkpoints, id: string, options: { files?: string[]; agent?: string } = {}): Promise<RewindOutcome> {
  const target = await store.find(id);
  if (!target) throw new CheckpointError(`no checkpoint '${id}' here (huddle rewind lists them)`);
  const files = options.files?.map((file) => normalise(store.root, file));
  const current = await store.take({
    agent: options.agent ?? 'you',
    tool: 'rewind',
    summary: `before rewinding to ${target.id.slice(0, 8)}${files?.length ? ` (${files.join(', ')})` : ''}`,
  });
  const currentFull = (await store.find(current.id.slice(0, 12))) ?? current;
  return store.serial(async () => {
    // Nothing an agent's kept-open sandbox still runs may touch the files once they are back.
    await closeIdleSandboxShells();
    const git = !files?.length && target.gitTree ? await restoreGitState(store, target.gitTree, true) : [];
    const { written, removed } = await restoreFiles(store, target, currentFull, files);
    store.invalidate();
    return { before: current.id, written, removed, git };
  });
}

function normalise(root: string, file: string): string {
  const absolute = path.resolve(root, file);
  const relative = path.relative(root, absolute);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative))
    throw new CheckpointError(`'${file}' is not a path inside the workspace (${root})`);
  return relative.split(path.sep).join('/');
}

/** The empty tree's id (SHA-1, SHA-256): a workspace with no files, listed without asking git. */
const EMPTY_TREES = new Set(['4b825dc642cb6eb9a060e54bf8d69288fbee4904', '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321']);

/** The empty file's blob id (SHA-1, SHA-256): a file of the person's emptied counts as taken away. */
const EMPTY_BLOBS = new Set(['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813']);

export interface LostWork {
  /** Files the person had changed (against HEAD) or added when the run began, now reverted, deleted or emptied. */
  files: string[];
  /** Stash entries there when the run began and gone now. */
  stash: number;
  /** Branches and tags there when the run began and gone now (huddle's own huddle/* branches aside). */
  refs: string[];
}

/**
 * What of the person's uncommitted work, there at checkpoint `start`, the run took away: files
 * they had changed that are now gone or back at the committed version, and dropped stash entries.
 * `end` is a checkpoint of the state now.
 */
export async function lostSince(store: Checkpoints, start: Checkpoint, end: Checkpoint): Promise<LostWork> {
  const listing = async (tree: string) => {
    if (EMPTY_TREES.has(tree)) return new Map<string, string>();
    const out = await gitText(['ls-tree', '-r', '-z', tree], store.shadowCall(), 'cannot read a checkpoint');
    const map = new Map<string, string>();
    for (const entry of out.split('\0').filter(Boolean)) {
      const tab = entry.indexOf('\t');
      const [, , id] = entry.slice(0, tab).split(' ');
      map.set(entry.slice(tab + 1), id!);
    }
    return map;
  };
  const before = await listing(start.filesTree);
  // Only files there at the start can have been taken away: a workspace that began empty lists nothing more.
  const after = before.size ? await listing(end.filesTree) : new Map<string, string>();
  let committed = new Map<string, string>();
  let stashBefore = 0;
  const refNames = async (gitTree: string | undefined) =>
    gitTree
      ? (await gitText(['cat-file', 'blob', `${gitTree}:refs`], store.shadowCall(), 'cannot read a checkpoint').catch(() => ''))
          .split('\n')
          .map((line) => line.split(' ')[1])
          .filter((ref): ref is string => !!ref && /^refs\/(heads|tags)\//.test(ref) && !ref.startsWith('refs/heads/huddle/'))
      : [];
  const refsNow = new Set(await refNames(end.gitTree));
  const refs = end.gitTree ? (await refNames(start.gitTree)).filter((ref) => !refsNow.has(ref)) : [];
  if (start.gitTree) {
    const head = await gitText(['cat-file', 'blob', `${start.gitTree}:refs`], store.shadowCall(), 'cannot read a checkpoint').catch(() => '');
    const headRef = (await gitText(['cat-file', 'blob', `${start.gitTree}:HEAD`], store.shadowCall(), 'cannot read a checkpoint').catch(() => '')).trim();
    const commit = headRef.startsWith('ref: ')
      ? head
          .split('\n')
          .find((line) => line.endsWith(` ${headRef.slice(5)}`))
          ?.split(' ')[0]
      : headRef;
    if (commit) committed = await listing(`${commit}^{tree}`).catch(() => new Map<string, string>());
    stashBefore = (await gitText(['cat-file', 'blob', `${start.gitTree}:stash-log`], store.shadowCall(), 'x').catch(() => ''))
      .split('\n')
      .filter(Boolean).length;
  }
  const files: string[] = [];
  for (const [file, id] of before) {
    if (committed.get(file) === id) continue; // not the person's change: the committed version
    const now = after.get(file);
    if (now === id) continue;
    if (now === undefined || (committed.has(file) && now === committed.get(file)) || EMPTY_BLOBS.has(now)) files.push(file);
  }
  let stashNow = 0;
  try {
    stashNow = readFileSync(path.join(store.gitDir, 'logs', 'refs', 'stash'), 'utf8')
      .split('\n')
      .filter(Boolean).length;
  } catch {
    // no stash now
  }
  return { files, stash: Math.max(0, stashBefore - stashNow), refs };
}

/** The one line a run ends with when it took away the person's work, or undefined. */
export function lostWorkLine(lost: LostWork, start: string): string | undefined {
  if (!lost.files.length && !lost.stash && !lost.refs.length) return undefined;
  const shown = lost.files.slice(0, 3).join(', ') + (lost.files.length > 3 ? ` and ${lost.files.length - 3} more` : '');
  const parts = [
    lost.files.length ? `${lost.files.length} file${lost.files.length === 1 ? '' : 's'} you had changed before it (${shown})` : '',
    lost.stash ? `${lost.stash} stash entr${lost.stash === 1 ? 'y' : 'ies'}` : '',
    lost.refs.length
      ? `${lost.refs.length === 1 ? 'the branch or tag' : `${lost.refs.length} branches or tags`} ${lost.refs
          .slice(0, 3)
          .map((ref) => ref.replace(/^refs\/(heads|tags)\//, ''))
          .join(', ')}`
      : '',
  ].filter(Boolean);
  return `this run reverted or deleted ${parts.join(' and ')}; to bring back the workspace as it was when the run began: huddle rewind ${start.slice(0, 12)}`;
}

/**
 * One row per checkpoint (newest first), for `huddle rewind` and /rewind: its id, time, agent, how
 * many files changed between it and the next one (what rewinding to it takes back), and the call.
 */
export function describeCheckpoints(list: Checkpoint[]): string[] {
  return list.map((checkpoint, i) => {
    const newer = list[i - 1];
    const changed = newer ? `${newer.changedCount} file${newer.changedCount === 1 ? '' : 's'} changed after` : 'the latest';
    const time = checkpoint.time ? new Date(checkpoint.time).toLocaleString('sv-SE').slice(5, 19) : '?';
    const what = ['bash', 'write_file', 'edit_file'].includes(checkpoint.tool)
      ? `before ${checkpoint.tool}: ${checkpoint.summary}`
      : `${checkpoint.tool}: ${checkpoint.summary}`;
    return `${checkpoint.id.slice(0, 12)}  ${time}  ${checkpoint.agent}  ${changed}  ${what}`;
  });
}

/** What `huddle rewind` and /rewind say after a rewind: what it did, and how to undo it. */
export function rewoundLine(id: string, outcome: RewindOutcome): string {
  const removed = outcome.removed.length ? `, removed ${outcome.removed.length} the checkpoint did not have` : '';
  const git = outcome.git.length ? `; repository: ${outcome.git.join(', ')}` : '';
  return `rewound to ${id.slice(0, 12)}: ${outcome.written} file${outcome.written === 1 ? '' : 's'} written${removed}${git}`;
}
