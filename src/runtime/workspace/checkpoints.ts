// Checkpoints of a workspace (docs/trust.md, "nothing an agent does loses the person's work"): before
// a tool call that can write, the files (tracked and untracked, not ignored) and the repository's own
// state (refs, HEAD, index, config, hooks, info, the stash's reflog, and every object they reach) go
// into a private shadow repository outside the workspace, where neither the sandbox nor the file
// tools can write: $XDG_STATE_HOME/huddle/checkpoints/<hash of the path>. The deny-list is the first,
// explainable layer; this is what holds when a spelling gets past it.
//
// Cheap when nothing changed: no git process at all when the stat of every file and directory the
// last checkpoint saw is unchanged (checkpoint-snapshot.ts, which also handles racily clean files);
// otherwise one `git add -A` against the shadow's own index (git's stat cache), the previous tree
// reused when that index did not change, and the repository's state re-read only when a stat of
// .git's HEAD, index, refs or packed-refs moved. Each checkpoint is a commit on
// refs/huddle/checkpoints whose tree holds `files` and `git`, and whose message is its metadata (JSON).
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  type Stats,
} from 'node:fs';
import os from 'node:os';
import { deflateSync } from 'node:zlib';
import path from 'node:path';
import { CheckpointError, gitPipe, gitText, runGit, type GitCall } from './checkpoint-git.js';
import { registeredSecretFiles } from '../secrets.js';
import { checkpointsRoot } from '../fs/huddle-dirs.js';
import { excludesStamp, gitBlindEdits, readDirectories, unchangedSince, type WorkspaceSnapshot } from './checkpoint-snapshot.js';
import { readGitIndex } from './git-index.js';
import { writeTrees } from './git-tree.js';
import { fewChanges, globalGitFile, MOVED } from './checkpoint-few-changes.js';
import { IgnoreOracle } from './checkpoint-ignores.js';

export const CHECKPOINT_REF = 'refs/huddle/checkpoints';
/** How many times a few-changes checkpoint looks at files that keep moving before git reads the workspace. */
const LOOKS = 3;

/** What a checkpoint says about itself (its commit message). */
export interface CheckpointMeta {
  time: string;
  agent: string;
  /** The tool call it was taken before (`bash`, `write_file`…), or `run start`, `rewind`, `run end`. */
  tool: string;
  summary: string;
  /** Files that differ from the previous checkpoint: `M path`, `A path`, `D path` (at most 50; filled in by list()). */
  changed: string[];
  changedCount: number;
}

export interface Checkpoint extends CheckpointMeta {
  id: string;
  filesTree: string;
  /** Absent when the workspace had no repository of its own (or it was broken) then. */
  gitTree?: string | undefined;
}

/** What the directory walk before a checkpoint saw (checkpoint-snapshot.ts): a snapshot but the index entries. */
type Walk = Omit<WorkspaceSnapshot, 'entries'>;

interface Last {
  commit: string;
  filesTree: string;
  gitTree: string | undefined;
  indexStamp: string | undefined;
  gitStamp: string | undefined;
  /** The refs' tips as read then: excluded from the next object copy (the shadow has them). */
  tips: string[];
  headResolved: boolean;
  /** The repository had an index then (one gone since is put back). */
  hadIndex?: boolean;
  /** Its description, once read or written. */
  described?: Checkpoint;
  /** The files as that checkpoint saw them: an unchanged workspace then costs no git process. */
  snapshot?: WorkspaceSnapshot | undefined;
}

/** Where a workspace's checkpoints live: outside it. */
export function checkpointDirFor(root: string): string {
  return path.join(checkpointsRoot(), createHash('sha256').update(root).digest('hex').slice(0, 16));
}

const stores = new Map<string, Checkpoints>();

export class Checkpoints {
  readonly root: string;
  readonly dir: string;
  readonly shadow: string;
  readonly gitDir: string;
  #last: Last | undefined;
  #loaded = false;
  /** The shadow's hash: the workspace repository's (its objects are copied in as they are). */
  #hash: 'sha1' | 'sha256' = 'sha1';
  #queue: Promise<unknown> = Promise.resolve();
  /** Checkpoint requests whose checkpoint has not started yet (they all get the same one). */
  #waiting: { metas: CallMeta[]; checkpoint: Promise<Checkpoint> } | undefined;
  #plainFileSystem = true;
  /** New files' ignore status, from one long-lived git (checkpoint-ignores.ts). */
  #ignores: IgnoreOracle | undefined;
  /** Directories of the shadow this store made or found (no mkdir per object or ref written). */
  readonly #madeDirs = new Set<string>();

  /** One store per workspace in a process: agents working side by side share its lock. */
  static for(root: string): Checkpoints {
    let store = stores.get(root);
    if (!store) {
      store = new Checkpoints(root);
      stores.set(root, store);
    }
    return store;
  }

  constructor(root: string, dir = checkpointDirFor(root)) {
    this.root = root;
    this.dir = dir;
    this.shadow = path.join(dir, 'shadow.git');
    this.gitDir = path.join(root, '.git');
  }

  /** One checkpoint operation at a time per workspace. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    // The queue only orders the work: each caller hears its own failure through the promise it holds.
    this.#queue = next.catch(() => undefined);
    return next;
  }

  shadowCall(extra: Record<string, string> = {}, input?: string): GitCall {
    return { env: { GIT_DIR: this.shadow, ...extra }, isolated: true, ...(input !== undefined ? { input } : {}) };
  }

  workspaceCall(extra: Record<string, string> = {}, input?: string): GitCall {
    return { env: { GIT_DIR: this.gitDir, GIT_WORK_TREE: this.root, ...extra }, cwd: this.root, ...(input !== undefined ? { input } : {}) };
  }

  /** Not `/` nor the home directory: those get no checkpoints. */
  get covered(): boolean {
    return this.root !== '/' && this.root !== realHome();
  }

  /** The workspace is the top of a repository whose git dir is `.git` here (the only kind it protects). */
  hasOwnRepository(): boolean {
    return isDir(this.gitDir);
  }

  async #init(): Promise<void> {
    if (this.#loaded) return;
    if (!existsSync(path.join(this.shadow, 'HEAD'))) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(path.join(this.dir, 'workspace'), `${this.root}\n`);
      const format = this.hasOwnRepository() ? (await runGit(['rev-parse', '--show-object-format'], this.workspaceCall())).stdout.toString().trim() : '';
      const temp = `${this.shadow}.${process.pid}.tmp`;
      rmSync(temp, { recursive: true, force: true });
      // No template (`--template=`): a dozen sample hooks, a description and an exclude a shadow never uses
      // cost a file each, ~25 ms of a fresh workspace's first checkpoint here; the exclude is written below.
      await gitText(
        ['init', '-q', '--bare', '--template=', ...(format === 'sha256' ? ['--object-format=sha256'] : []), temp],
        { isolated: true },
        'cannot make the checkpoint repository',
      );
      // The workspace's objects are reachable only through the checkpoints' ref lists (blobs): never prune here.
      // Appended to the config git init wrote (a second [core] section is valid) rather than by three `git config`.
      appendFileSync(path.join(temp, 'config'), '[core]\n\tlogAllRefUpdates = false\n[gc]\n\tauto = 0\n\tpruneExpire = never\n');
      renameSync(temp, this.shadow);
    }
    this.#writeExcludes();
    const config = readFileSync(path.join(this.shadow, 'config'), 'utf8');
    this.#hash = /objectformat\s*=\s*sha256/i.test(config) ? 'sha256' : 'sha1';
    // A file system without executable bits or with case-folding names: git's own rules, so git reads it (no few-changes path).
    this.#plainFileSystem = !/filemode\s*=\s*false/i.test(config) && !/ignorecase\s*=\s*true/i.test(config);
    const head = this.#readCheckpointRef();
    if (head) {
      const trees = await runGit(['rev-parse', `${head}:files`, `${head}:git`], this.shadowCall());
      const [filesTree, gitTree] = trees.stdout.toString().split('\n');
      if (filesTree && /^[0-9a-f]+$/.test(filesTree)) {
        this.#last = {
          commit: head,
          filesTree,
          gitTree: gitTree && /^[0-9a-f]+$/.test(gitTree) ? gitTree : undefined,
          indexStamp: undefined,
          gitStamp: undefined,
          tips: [],
          headResolved: false,
        };
      }
    }
    this.#loaded = true;
  }

  /** The shadow never takes huddle's own state, nor what the repository's info/exclude leaves out. */
  #writeExcludes(): void {
    let own = '';
    try {
      own = readFileSync(path.join(this.gitDir, 'info', 'exclude'), 'utf8');
    } catch {
      // none
    }
    // A key file inside the workspace (--api-key-file) is never copied out of it.
    const secrets = registeredSecretFiles()
      .map((file) => path.relative(this.root, file))
      .filter((relative) => relative && !relative.startsWith('..') && !path.isAbsolute(relative))
      .map((relative) => `/${relative.replace(/([*?[\\!#])/g, '\\$1')}\n`)
      .join('');
    mkdirSync(path.join(this.shadow, 'info'), { recursive: true });
    writeFileSync(path.join(this.shadow, 'info', 'exclude'), `/.team/\n/.tasks/\n${secrets}${own}\n`);
  }

  #readCheckpointRef(): string | undefined {
    try {
      const id = readFileSync(path.join(this.shadow, CHECKPOINT_REF), 'utf8').trim();
      return /^[0-9a-f]{40,64}$/.test(id) ? id : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The ref is written over its old bytes when it holds an id of the same length (every id of a
   * store has one): one write of 41 bytes (65 with SHA-256) at the start of the file, inside one
   * block: a reader (git) finds the old id or the new one (a torn read of 41 bytes is possible in
   * theory, never seen), and so does a crash. A new file renamed over the old one cost ~1-2 ms of CPU a checkpoint
   * here (a new inode, and ext4 starting the new file's writeback on a rename over a file). A missing
   * ref, or one of another length, is written anew through a temp file.
   */
  #writeCheckpointRef(id: string): void {
    const file = path.join(this.shadow, CHECKPOINT_REF);
    if (!overwriteSameLength(file, Buffer.from(`${id}\n`))) this.#replaceFile(file, `${id}\n`);
  }

  /** Ends the long-lived git this store keeps (a later checkpoint starts it again); resolves once it has exited. */
  endHelpers(): Promise<void> {
    return this.#ignores?.end() ?? Promise.resolve();
  }

  /** The latest checkpoint's id, if any (without taking one). */
  async latest(): Promise<string | undefined> {
    await this.#init();
    return this.#last?.commit;
  }

  /**
   * Takes a checkpoint of the workspace as it is now, unless nothing changed since the last one
   * (then that one is returned). Never throws for the workspace's state; a CheckpointError when the
   * shadow itself cannot be written.
   */
  take(meta: CallMeta): Promise<Checkpoint> {
    // Callers that ask while another checkpoint is being taken share the next one: it starts after
    // every one of them asked and before any of their calls can run (each waits for it).
    const waiting = this.#waiting;
    if (waiting) {
      waiting.metas.push(meta);
      return waiting.checkpoint;
    }
    const batch: { metas: CallMeta[]; checkpoint: Promise<Checkpoint> } = { metas: [meta], checkpoint: Promise.resolve(undefined as never) };
    batch.checkpoint = this.serial(() => {
      if (this.#waiting === batch) this.#waiting = undefined;
      return this.#take(mergeMeta(batch.metas));
    });
    this.#waiting = batch;
    return batch.checkpoint;
  }

  async #take(meta: CallMeta): Promise<Checkpoint> {
    if (!this.covered) {
      throw new CheckpointError(
        'huddle keeps no checkpoints of / or your home directory (too large, and it holds your credentials): run huddle in a project directory',
      );
    }
    // Another process (huddle rewind, a second huddle here) moved the chain: start from its end.
    if (this.#loaded && this.#readCheckpointRef() !== this.#last?.commit) {
      this.#loaded = false;
      this.#last = undefined;
    }
    await this.#init();
    const last = this.#last;
    const gitStamp = this.#gitStamp();
    if (last?.described && last.snapshot && gitStamp === last.gitStamp && unchangedSince(this.root, last.snapshot, this.#hash)) return last.described;
    const filesIndex = path.join(this.shadow, 'files-index');
    const few = last?.snapshot && gitStamp === last.gitStamp && this.#plainFileSystem ? await this.#fewChanges(last.snapshot, filesIndex) : undefined;
    if (few) return this.#commit(meta, last!, few.filesTree, last!.gitTree, { ...last!, gitStamp, indexStamp: undefined, snapshot: few.snapshot });
    const walk = await this.#readDirectories(last?.snapshot, filesIndex);
    const { filesTree, indexStamp, snapshot } =
      walk && holdsNoFiles(this.root, walk) ? this.#emptyFiles(walk, filesIndex) : await this.#addAll(walk, last, filesIndex);

    let gitTree = last?.gitTree;
    let tips = last?.tips ?? [];
    let headResolved = last?.headResolved ?? false;
    let hadIndex = last?.hadIndex ?? false;
    if (gitStamp !== last?.gitStamp) {
      const state = await this.#captureGit(tips);
      if (state) {
        ({ gitTree, tips, headResolved } = state);
        hadIndex = existsSync(path.join(this.gitDir, 'index'));
      }
    }

    return this.#commit(meta, last, filesTree, gitTree, { commit: '', filesTree, gitTree, indexStamp, gitStamp, tips, headResolved, hadIndex, snapshot });
  }

  /**
   * A workspace with no file at all (directories git would look into, and ignored ones, only): its
   * tree is the empty tree, known without `git add -A`. The shadow index is removed (the next git
   * checkpoint builds it anew, trusting no stat in it) and is not stamped, so it is never reused.
   */
  #emptyFiles(walk: Walk, filesIndex: string): { filesTree: string; indexStamp: undefined; snapshot: WorkspaceSnapshot } {
    rmSync(filesIndex, { force: true });
    return { filesTree: this.#writeObject('tree', Buffer.alloc(0)), indexStamp: undefined, snapshot: { ...walk, entries: [] } };
  }

  /** The files' tree as `git add -A` records them in the shadow index (and the snapshot, when the walk could vouch). */
  async #addAll(
    walk: Walk | undefined,
    last: Last | undefined,
    filesIndex: string,
  ): Promise<{ filesTree: string; indexStamp: string | undefined; snapshot: WorkspaceSnapshot | undefined }> {
    const hashBytes = this.#hash === 'sha256' ? 32 : 20;
    // Edits git's stat check cannot see (checkpoint-snapshot.ts#gitBlindEdits) are hashed again by name.
    const known = last?.snapshot?.entries ?? readGitIndex(filesIndex, hashBytes);
    const blind = known ? gitBlindEdits(this.root, known, last?.snapshot?.takenMs ?? mtimeMs(filesIndex), this.#hash) : [];
    if (blind === undefined) rmSync(filesIndex, { force: true });
    const addCall = this.shadowCall({ GIT_WORK_TREE: this.root, GIT_INDEX_FILE: filesIndex });
    await gitText(['add', '-A', '--ignore-errors'], addCall, 'cannot read the workspace for a checkpoint');
    if (blind?.length) {
      const paths = blind.map((file) => `:(literal)${file}\0`).join('');
      const again = await runGit(['add', '--renormalize', '--ignore-errors', '--pathspec-from-file=-', '--pathspec-file-nul'], { ...addCall, input: paths });
      if (again.code !== 0) {
        // One of them went away meanwhile (a pathspec that matches nothing fails): git reads every file instead.
        rmSync(filesIndex, { force: true });
        await gitText(['add', '-A', '--ignore-errors'], addCall, 'cannot read the workspace for a checkpoint');
      }
    }
    const indexStamp = stamp(filesIndex);
    const reuse = last && last.indexStamp === indexStamp;
    const entries = reuse && !walk ? undefined : readGitIndex(filesIndex, hashBytes);
    const snapshot = walk && entries ? { ...walk, entries } : undefined;
    // The trees written here rather than by `git write-tree` (one process fewer), unless the index is of a kind not read here.
    const filesTree = reuse
      ? last.filesTree
      : entries
        ? writeTrees(entries, (body) => this.#writeObject('tree', body))
        : (await gitText(['write-tree'], this.shadowCall({ GIT_INDEX_FILE: filesIndex }), 'cannot write a checkpoint')).trim();
    return { filesTree, indexStamp, snapshot };
  }

  /** The checkpoint of these trees: the last one when they did not change, else a new commit on the chain. */
  async #commit(meta: CallMeta, last: Last | undefined, filesTree: string, gitTree: string | undefined, next: Last): Promise<Checkpoint> {
    if (last && last.filesTree === filesTree && last.gitTree === gitTree) {
      const described = last.described ?? (await this.#describe(last.commit, filesTree, gitTree));
      this.#last = { ...next, commit: last.commit, filesTree, gitTree, described };
      return described;
    }
    // What changed since the previous checkpoint is worked out when listing (list()), not here.
    const body: CheckpointMeta = {
      time: new Date().toISOString(),
      agent: meta.agent,
      tool: meta.tool,
      summary: meta.summary.slice(0, 200),
      changed: [],
      changedCount: 0,
    };
    // The checkpoint's tree and commit are two small objects: written here rather than by two more git processes.
    const tree = this.#writeObject('tree', Buffer.concat([treeEntry('files', filesTree), ...(gitTree ? [treeEntry('git', gitTree)] : [])]));
    const seconds = Math.floor(Date.now() / 1000);
    const who = `huddle <huddle@localhost> ${seconds} +0000`;
    const commit = this.#writeObject(
      'commit',
      Buffer.from(`tree ${tree}\n${last ? `parent ${last.commit}\n` : ''}author ${who}\ncommitter ${who}\n\n${JSON.stringify(body)}\n`),
    );
    this.#writeCheckpointRef(commit);
    const described: Checkpoint = { id: commit, ...body, filesTree, gitTree };
    this.#last = { ...next, commit, filesTree, gitTree, described };
    return described;
  }

  /**
   * A few files changed in directories the last checkpoint looked into: their blobs and the trees
   * written here, no `git add -A` (checkpoint-few-changes.ts). The shadow index is then behind:
   * the next checkpoint that asks git does not reuse a tree by its stamp (indexStamp undefined).
   */
  async #fewChanges(previous: WorkspaceSnapshot, filesIndex: string): Promise<{ filesTree: string; snapshot: WorkspaceSnapshot } | undefined> {
    const exclude = path.join(this.shadow, 'info', 'exclude');
    if (excludesStamp([exclude, ...previous.gitignores]) !== previous.excludesStamp) return undefined;
    const stamp = this.#ignoreStamp(previous.excludesStamp);
    const oracle = this.#ignoreOracle(filesIndex);
    // Files that moved under the look (other agents writing beside this one) are looked at again, a few
    // times, before git is asked to read the whole workspace (a process, and tens of ms of fork here).
    let few: Awaited<ReturnType<typeof fewChanges>> = MOVED;
    for (let look = 0; few === MOVED && look < LOOKS; look++) few = await fewChanges(this.root, previous, this.#hash, (paths) => oracle.ignored(paths, stamp));
    if (!few || few === MOVED) return undefined;
    for (const blob of few.blobs) this.#writeObject('blob', blob);
    const filesTree = writeTrees(few.entries, (body) => this.#writeObject('tree', body));
    return { filesTree, snapshot: { ...previous, takenMs: few.takenMs, dirs: few.dirs, entries: few.entries } };
  }

  /** The one long-lived `git check-ignore` of this store (checkpoint-ignores.ts), for the walk and for few changes alike. */
  #ignoreOracle(filesIndex: string): IgnoreOracle {
    this.#ignores ??= new IgnoreOracle(this.root, { GIT_DIR: this.shadow, GIT_WORK_TREE: this.root, GIT_INDEX_FILE: filesIndex });
    return this.#ignores;
  }

  /** What the long-lived git's answers hold for: the excludes' and .gitignore files' stamp, and the user's global ignore file. */
  #ignoreStamp(excludes: string): string {
    return `${excludes}|${excludesStamp([globalGitFile('ignore')])}`;
  }

  /**
   * The directories git would look into, read before `git add -A` (checkpoint-snapshot.ts); what
   * is ignored is learnt again when a .gitignore or the shadow's exclude moved. Its questions go to
   * the long-lived git, under the stamp of the ignore files found so far: a .gitignore found on a
   * deeper level (or changed) starts that git again. Undefined: the detector steps aside for this
   * checkpoint.
   */
  async #readDirectories(previous: WorkspaceSnapshot | undefined, filesIndex: string): Promise<Walk | undefined> {
    const exclude = path.join(this.shadow, 'info', 'exclude');
    const askIgnored = (dirs: string[], gitignores: readonly string[]): Promise<Set<string> | undefined> =>
      this.#ignoreOracle(filesIndex).ignored(dirs, this.#ignoreStamp(excludesStamp([exclude, ...gitignores])));
    let walk = await readDirectories(this.root, previous?.ignored, askIgnored);
    if (!walk) return undefined;
    let stamped = excludesStamp([exclude, ...walk.gitignores]);
    if (previous && stamped !== previous.excludesStamp) {
      walk = await readDirectories(this.root, undefined, askIgnored);
      if (!walk) return undefined;
      stamped = excludesStamp([exclude, ...walk.gitignores]);
    }
    return { takenMs: walk.takenMs, dirs: walk.dirs, ignored: walk.ignored, excludesStamp: stamped, gitignores: walk.gitignores };
  }

  /** A loose object in the shadow (zlib, as git writes them); its id. */
  #writeObject(type: 'blob' | 'tree' | 'commit', body: Buffer): string {
    const data = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
    const id = createHash(this.#hash).update(data).digest('hex');
    const file = path.join(this.shadow, 'objects', id.slice(0, 2), id.slice(2));
    if (!existsSync(file)) this.#replaceFile(file, deflateSync(data));
    return id;
  }

  /** `file` written whole through a temp file and a rename; its directory made once, or again when it went. */
  #replaceFile(file: string, data: Buffer | string): void {
    const dir = path.dirname(file);
    const temp = `${file}.${process.pid}.tmp`;
    if (!this.#madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.#madeDirs.add(dir);
    }
    try {
      writeFileSync(temp, data);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The shadow was removed under this store (huddle prune, a test): made again.
      this.#madeDirs.clear();
      mkdirSync(dir, { recursive: true });
      this.#madeDirs.add(dir);
      writeFileSync(temp, data);
    }
    renameSync(temp, file);
  }

  async #describe(commit: string, filesTree: string, gitTree: string | undefined): Promise<Checkpoint> {
    const message = await gitText(['log', '-1', '--format=%B', commit], this.shadowCall(), 'cannot read a checkpoint');
    return { id: commit, ...parseMeta(message), filesTree, gitTree };
  }

  /**
   * The stat of what a change of the repository's state moves: HEAD, the index, packed-refs, the
   * stash's reflog, and every file and directory under refs/. Undefined without a repository.
   */
  #gitStamp(): string | undefined {
    if (!this.hasOwnRepository()) return undefined;
    const parts: string[] = [];
    for (const name of ['HEAD', 'index', 'packed-refs', 'config', 'logs/refs/stash', 'objects', 'objects/pack'])
      parts.push(`${name}:${stamp(path.join(this.gitDir, name)) ?? '-'}`);
    const walk = (dir: string, depth: number) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        parts.push(`${dir}:-`);
        return;
      }
      for (const name of names) {
        const full = path.join(dir, name);
        parts.push(`${full}:${stamp(full) ?? '-'}`);
        if (depth < 12 && isDir(full)) walk(full, depth + 1);
      }
    };
    walk(path.join(this.gitDir, 'refs'), 0);
    return parts.join('\n');
  }

  /**
   * The repository's state into the shadow: objects reachable from its refs, reflogs and index
   * (only what is new since `tips`), then copies of HEAD, the refs, index, config, hooks, info and the
   * stash's reflog, as one tree. Undefined when there is no repository, or it is broken now (the
   * last good state stays the one to restore).
   */
  async #captureGit(tips: string[]): Promise<{ gitTree: string; tips: string[]; headResolved: boolean } | undefined> {
    if (!this.hasOwnRepository() || !existsSync(path.join(this.gitDir, 'HEAD')) || !isDir(path.join(this.gitDir, 'objects'))) return undefined;
    const refsOut = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], this.workspaceCall());
    if (refsOut.code !== 0) return undefined;
    const refs = refsOut.stdout.toString('utf8');
    const headResolved = (await runGit(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], this.workspaceCall())).code === 0;
    const packArgs = ['pack-objects', '--revs', '--all', '--reflog', '--indexed-objects', '--stdout', '-q'];
    const into = { args: ['index-pack', '--stdin', '--fix-thin'], call: this.shadowCall() };
    let copied = await gitPipe({ args: packArgs, call: this.workspaceCall({}, tips.map((t) => `^${t}\n`).join('')) }, into);
    if (!copied.ok && tips.length) copied = await gitPipe({ args: packArgs, call: this.workspaceCall({}, '') }, into);
    if (!copied.ok) return undefined;

    const stage = path.join(this.dir, 'state');
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(stage, { recursive: true });
    writeFileSync(path.join(stage, 'refs'), refs);
    copyIfFile(path.join(this.gitDir, 'HEAD'), path.join(stage, 'HEAD'));
    copyIfFile(path.join(this.gitDir, 'index'), path.join(stage, 'index'));
    copyIfFile(path.join(this.gitDir, 'config'), path.join(stage, 'config'));
    copyIfFile(path.join(this.gitDir, 'logs', 'refs', 'stash'), path.join(stage, 'stash-log'));
    copyFiles(path.join(this.gitDir, 'hooks'), path.join(stage, 'hooks'));
    copyFiles(path.join(this.gitDir, 'info'), path.join(stage, 'info'));
    const stageIndex = path.join(this.dir, 'state-index');
    rmSync(stageIndex, { force: true });
    const call = this.shadowCall({ GIT_WORK_TREE: stage, GIT_INDEX_FILE: stageIndex });
    await gitText(['add', '-A', '-f', '.'], { ...call, cwd: stage }, 'cannot keep the repository state');
    const gitTree = (await gitText(['write-tree'], call, 'cannot keep the repository state')).trim();
    rmSync(stage, { recursive: true, force: true });
    const newTips = [
      ...new Set(
        refs
          .split('\n')
          .map((line) => line.split(' ')[0]!)
          .filter(Boolean),
      ),
    ];
    return { gitTree, tips: newTips, headResolved };
  }

  /**
   * Why the repository is broken now, when the last checkpoint had it whole: `.git` or its HEAD,
   * objects or refs gone, or HEAD no longer resolving to a commit. Undefined: nothing to repair.
   */
  async brokenReason(): Promise<string | undefined> {
    if (!this.covered) return undefined;
    return this.serial(async () => {
      await this.#init();
      const last = this.#last;
      if (!last?.gitTree) return undefined;
      if (!isDir(this.gitDir)) return 'the repository (.git) is gone';
      if (!existsSync(path.join(this.gitDir, 'HEAD'))) return '.git/HEAD is gone';
      if (!isDir(path.join(this.gitDir, 'objects'))) return "the repository's objects are gone";
      if (!isDir(path.join(this.gitDir, 'refs'))) return "the repository's refs are gone";
      if (last.hadIndex && !existsSync(path.join(this.gitDir, 'index'))) return "the repository's index is gone";
      if (!last.headResolved) return undefined;
      const now = this.#gitStamp();
      if (last.gitStamp !== undefined && now === last.gitStamp) return undefined;
      const head = await runGit(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], this.workspaceCall());
      if (head.code !== 0) return 'HEAD no longer points at a commit (its branch or objects are gone)';
      return undefined;
    });
  }

  /** The last checkpoint taken (or found), as the store knows it. */
  get lastTaken(): { commit: string; gitTree: string | undefined } | undefined {
    return this.#last ? { commit: this.#last.commit, gitTree: this.#last.gitTree } : undefined;
  }

  /** Forget the cached stats: the next checkpoint reads everything again (after a restore). */
  invalidate(): void {
    if (this.#last) this.#last = { ...this.#last, indexStamp: undefined, gitStamp: undefined, snapshot: undefined };
  }

  /** Checkpoints, newest first, each with the files that differ from the one before it. */
  async list(limit = 1000): Promise<Checkpoint[]> {
    await this.#init();
    if (!this.#readCheckpointRef()) return [];
    const out = await gitText(
      ['log', `-n${limit}`, '--format=%x1e%H%x1f%B%x1f', '--name-status', '--no-renames', CHECKPOINT_REF],
      this.shadowCall(),
      'cannot list checkpoints',
    );
    const result: Checkpoint[] = [];
    for (const entry of out.split('\x1e').filter((chunk) => chunk.trim())) {
      const [id, message, names] = entry.split('\x1f') as [string, string, string | undefined];
      const meta = parseMeta(message ?? '');
      const changed = (names ?? '')
        .split('\n')
        .map((line) => /^([AMDT])\tfiles\/(.*)$/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => `${m[1]} ${m[2]}`);
      result.push({ id: id.trim(), ...meta, changed: changed.slice(0, 50), changedCount: changed.length, filesTree: '', gitTree: undefined });
    }
    // The first checkpoint of a workspace has nothing before it to differ from.
    const oldest = result.at(-1);
    if (oldest && result.length < limit) Object.assign(oldest, { changed: [], changedCount: 0 });
    return result;
  }

  /** A checkpoint by its id or a unique prefix of it (at least 4 characters). */
  async find(id: string): Promise<Checkpoint | undefined> {
    if (!/^[0-9a-f]{4,64}$/.test(id)) return undefined;
    const all = await this.list();
    const matches = all.filter((c) => c.id.startsWith(id));
    if (matches.length !== 1) return undefined;
    const found = matches[0]!;
    const trees = await runGit(['rev-parse', `${found.id}:files`, `${found.id}:git`], this.shadowCall());
    const [filesTree, gitTree] = trees.stdout.toString().split('\n');
    return { ...found, filesTree: filesTree ?? '', gitTree: gitTree && /^[0-9a-f]+$/.test(gitTree) ? gitTree : undefined };
  }
}

/** What a checkpoint is taken before: one call, or several that asked together (agents side by side). */
type CallMeta = { agent: string; tool: string; summary: string };

function mergeMeta(metas: CallMeta[]): CallMeta {
  if (metas.length === 1) return metas[0]!;
  const distinct = (values: string[]) => [...new Set(values)].join(', ');
  return {
    agent: distinct(metas.map((m) => m.agent)),
    tool: distinct(metas.map((m) => m.tool)),
    summary: metas.map((m) => `${m.agent}: ${m.summary}`).join('; '),
  };
}

/** Home directory → its real path, asked once per value (every checkpoint asks whether it covers the workspace). */
const realHomes = new Map<string, string>();

function realHome(): string {
  const home = os.homedir();
  let real = realHomes.get(home);
  if (real === undefined) {
    try {
      real = realpathSync(home);
    } catch {
      return home; // not there (yet): asked again next time
    }
    realHomes.set(home, real);
  }
  return real;
}

/** One entry of a tree object: a subtree `name` with id `id` (hex). */
function treeEntry(name: string, id: string): Buffer {
  return Buffer.concat([Buffer.from(`40000 ${name}\0`), Buffer.from(id, 'hex')]);
}

function parseMeta(message: string): CheckpointMeta {
  try {
    const parsed = JSON.parse(message) as Partial<CheckpointMeta>;
    return {
      time: String(parsed.time ?? ''),
      agent: String(parsed.agent ?? ''),
      tool: String(parsed.tool ?? ''),
      summary: String(parsed.summary ?? ''),
      changed: Array.isArray(parsed.changed) ? parsed.changed.map(String) : [],
      changedCount: Number(parsed.changedCount ?? 0),
    };
  } catch {
    return { time: '', agent: '', tool: '', summary: message.trim().slice(0, 200), changed: [], changedCount: 0 };
  }
}

function stat(p: string): Stats | undefined {
  try {
    // A missing file (no .git in most bench and scratch workspaces, no packed-refs) is no exception.
    return statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // not a directory on the way, not allowed: as absent
  }
}

function mtimeMs(p: string): number {
  return stat(p)?.mtimeMs ?? 0;
}

function stamp(p: string): string | undefined {
  const s = stat(p);
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}` : undefined;
}

export function isDir(p: string): boolean {
  return stat(p)?.isDirectory() === true;
}

function copyIfFile(from: string, to: string): void {
  if (stat(from)?.isFile()) copyFileSync(from, to);
}

/** The regular files of a directory tree (hooks, info), copied. */
function copyFiles(from: string, to: string): void {
  if (!isDir(from)) return;
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const source = path.join(from, name);
    const s = stat(source);
    if (s?.isDirectory()) copyFiles(source, path.join(to, name));
    else if (s?.isFile()) copyFileSync(source, path.join(to, name));
  }
}

export { CheckpointError };

/**
 * Nothing but directories anywhere git would look (the workspace's own .git aside): every name the
 * walk listed is a directory it looked into or knows to be ignored, and is a directory still.
 */
function holdsNoFiles(root: string, walk: Walk): boolean {
  if (!walk.dirs.some((dir) => dir.path === '')) return false;
  for (const dir of walk.dirs) {
    for (const name of dir.listing) {
      if (dir.path === '' && name === '.git') continue;
      const child = dir.path ? `${dir.path}/${name}` : name;
      if (!walk.ignored.has(child)) return false;
    }
  }
  for (const dir of walk.dirs) {
    for (const name of dir.listing) {
      if (dir.path === '' && name === '.git') continue;
      try {
        if (!lstatSync(path.join(root, dir.path, name)).isDirectory()) return false;
      } catch {
        return false; // gone meanwhile: git reads the workspace
      }
    }
  }
  return true;
}

/** Writes `bytes` over a regular file of exactly that length, in place; false (nothing written) when there is no such file. */
function overwriteSameLength(file: string, bytes: Buffer): boolean {
  let fd: number;
  try {
    // Not through a symlink, and never waiting on a FIFO planted under that name.
    fd = openSync(file, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // Missing (first checkpoint, a pruned store), or not a plain file: written anew.
    return false;
  }
  try {
    const stat = fstatSync(fd);
    // A second name for the file (a hard link) would be written too: that one is replaced instead.
    if (!stat.isFile() || stat.nlink !== 1 || stat.size !== bytes.length) return false;
    for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written, written);
    return true;
  } finally {
    closeSync(fd);
  }
}
