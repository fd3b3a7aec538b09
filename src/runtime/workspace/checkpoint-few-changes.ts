// A checkpoint of a workspace where only a few files changed, in directories the last checkpoint
// already looked into, taken without `git add -A` (checkpoints.ts): every directory and file the
// last checkpoint saw is checked by its stat as the change detector does (checkpoint-snapshot.ts,
// racily clean ones by content); what moved is read and hashed here, and a new file's or new
// directory's name is asked of the long-lived `git check-ignore` (checkpoint-ignores.ts), a new
// directory that is not ignored being read level by level as git's walk would. Anything else — a
// removed directory, a symlink, a .gitignore that changed or came in a new directory, more than a
// few files — is undefined, and git reads the workspace as before. A file that moved while it was
// looked at (another agent's write renaming its temp file into place) is MOVED: the caller looks
// again. The result is what `git add -A` would record.
import { existsSync, lstatSync, readdirSync, readFileSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import type { IndexEntry } from './git-index.js';
import { blobId, dirStatOf, isRacy, low32, racyMarginMs, type DirStat, type WorkspaceSnapshot } from './checkpoint-snapshot.js';

/** A file came, went or changed while it was being read: a second look will likely see it settled. */
export const MOVED = 'moved';

/** More changed files than this, or more bytes: git reads them. */
const MAX_FILES = 64;
const MAX_BYTES = 8 * 1024 * 1024;

export interface FewChanges {
  takenMs: number;
  dirs: DirStat[];
  entries: IndexEntry[];
  /** The contents of the new or changed files (blobs to store). */
  blobs: Buffer[];
}

/** Which of these new files (relative paths) git ignores; undefined if it could not say. */
export type IgnoredFiles = (paths: string[]) => Promise<Set<string> | undefined>;

export async function fewChanges(
  root: string,
  snapshot: WorkspaceSnapshot,
  hash: 'sha1' | 'sha256',
  ignoredFiles: IgnoredFiles,
): Promise<FewChanges | typeof MOVED | undefined> {
  const takenMs = Date.now();
  const margin = racyMarginMs(root);
  // Attributes can make git store other bytes than the file's (eol, text): git reads such a workspace.
  if (existsSync(globalGitFile('attributes')) || snapshot.dirs.some((dir) => dir.listing.includes('.gitattributes'))) return undefined;
  const dirs: DirStat[] = [];
  const known = new Set(snapshot.dirs.map((dir) => dir.path));
  const added: string[] = [];
  const removed = new Set<string>();
  for (const dir of snapshot.dirs) {
    const full = path.join(root, dir.path);
    let stats: BigIntStats;
    try {
      stats = lstatSync(full, { bigint: true });
    } catch {
      return undefined;
    }
    if (!stats.isDirectory() || stats.ino !== dir.ino) return undefined;
    const sameStat = stats.mtimeNs === dir.mtimeNs && stats.ctimeNs === dir.ctimeNs;
    if (sameStat && !dir.names) {
      dirs.push(dir);
      continue;
    }
    let names: string[];
    try {
      names = readdirSync(full).sort();
    } catch {
      return undefined;
    }
    const before = new Set(dir.listing);
    const now = new Set(names);
    for (const name of names) if (!before.has(name)) added.push(dir.path ? `${dir.path}/${name}` : name);
    for (const name of dir.listing) if (!now.has(name)) removed.add(dir.path ? `${dir.path}/${name}` : name);
    dirs.push(dirStatOf(dir.path, stats, names, takenMs, margin));
  }
  // What decides what is ignored, or a directory come or gone: git's walk.
  for (const file of [...added, ...removed]) {
    if (
      path.basename(file) === '.gitignore' ||
      path.basename(file) === '.gitattributes' ||
      gitGuardedName(path.basename(file)) ||
      known.has(file) ||
      file.includes('\uFFFD')
    )
      return undefined;
  }
  const changed: string[] = [];
  const entries: IndexEntry[] = [];
  for (const entry of snapshot.entries) {
    if (entry.mode !== 0o100644 && entry.mode !== 0o100755) return undefined;
    if (removed.has(entry.path)) continue;
    let stats: BigIntStats;
    try {
      stats = lstatSync(path.join(root, entry.path), { bigint: true });
    } catch {
      // Gone since its directory was listed.
      return MOVED;
    }
    if (!stats.isFile()) return undefined;
    const same =
      low32(stats.ino) === entry.ino &&
      low32(stats.size) === entry.size &&
      stats.ctimeNs === BigInt(entry.ctimeSec) * 1_000_000_000n + BigInt(entry.ctimeNsec) &&
      stats.mtimeNs === BigInt(entry.mtimeSec) * 1_000_000_000n + BigInt(entry.mtimeNsec) &&
      ((stats.mode & 0o100n) !== 0n) === (entry.mode === 0o100755);
    // Racily clean (or stat moved): read again, as git would.
    if (same && !isRacy(stats, snapshot.takenMs, margin)) entries.push(entry);
    else changed.push(entry.path);
  }
  const fresh: string[] = [];
  const newDirs: string[] = [];
  for (const file of added) {
    let stats: BigIntStats;
    try {
      stats = lstatSync(path.join(root, file), { bigint: true });
    } catch {
      // Listed a moment ago and gone now: a temp file renamed into place, most likely.
      return MOVED;
    }
    // A symlink or special file: git decides.
    if (stats.isDirectory()) newDirs.push(file);
    else if (stats.isFile()) fresh.push(file);
    else return undefined;
  }
  const readDirs = await readNewDirectories(root, newDirs, takenMs, margin, ignoredFiles, dirs, fresh);
  if (readDirs !== true) return readDirs === MOVED ? MOVED : undefined;
  if (changed.length + fresh.length > MAX_FILES) return undefined;
  const ignored = fresh.length ? await ignoredFiles(fresh) : new Set<string>();
  if (!ignored) return undefined;
  const blobs: Buffer[] = [];
  let bytes = 0;
  for (const file of [...changed, ...fresh.filter((f) => !ignored.has(f))]) {
    const full = path.join(root, file);
    let content: Buffer;
    let before: BigIntStats;
    let after: BigIntStats;
    try {
      before = lstatSync(full, { bigint: true });
      content = readFileSync(full);
      after = lstatSync(full, { bigint: true });
    } catch {
      return MOVED;
    }
    if (!after.isFile()) return undefined;
    // Written while read: looked at again.
    if (after.mtimeNs !== before.mtimeNs || after.ctimeNs !== before.ctimeNs || after.size !== before.size || after.ino !== before.ino) return MOVED;
    bytes += content.length;
    if (bytes > MAX_BYTES) return undefined;
    blobs.push(content);
    entries.push({
      path: file,
      raw: Buffer.from(file),
      mode: (after.mode & 0o100n) !== 0n ? 0o100755 : 0o100644,
      oid: blobId(content, hash),
      ctimeSec: Number(after.ctimeNs / 1_000_000_000n),
      ctimeNsec: Number(after.ctimeNs % 1_000_000_000n),
      mtimeSec: Number(after.mtimeNs / 1_000_000_000n),
      mtimeNsec: Number(after.mtimeNs % 1_000_000_000n),
      ino: low32(after.ino),
      size: low32(after.size),
    });
  }
  return { takenMs, dirs, entries, blobs };
}

/**
 * New directories read as git's walk would: each level's directories asked whether they are
 * ignored (one question to the long-lived git), the rest listed, their stat recorded (`dirs`) and
 * their files added to `fresh`. False when git must decide: a .gitignore, .gitattributes or
 * nested repository in one, a symlink or special file, a name that is not UTF-8, or too much;
 * MOVED when something listed went before it was looked at.
 */
async function readNewDirectories(
  root: string,
  found: string[],
  takenMs: number,
  margin: number,
  ignoredPaths: IgnoredFiles,
  dirs: DirStat[],
  fresh: string[],
): Promise<boolean | typeof MOVED> {
  let level = found;
  let count = 0;
  while (level.length) {
    count += level.length;
    if (count > MAX_FILES) return false;
    const ignored = await ignoredPaths(level);
    if (!ignored) return false;
    const next: string[] = [];
    for (const dir of level) {
      if (ignored.has(dir)) continue;
      let stats: BigIntStats;
      let names: string[];
      try {
        stats = lstatSync(path.join(root, dir), { bigint: true });
        names = readdirSync(path.join(root, dir)).sort();
      } catch {
        return MOVED; // listed a moment ago and gone now
      }
      if (!stats.isDirectory()) return false;
      dirs.push(dirStatOf(dir, stats, names, takenMs, margin));
      for (const name of names) {
        const child = `${dir}/${name}`;
        if (name === '.gitignore' || name === '.gitattributes' || gitGuardedName(name) || child.includes('\uFFFD')) return false;
        let entry: BigIntStats;
        try {
          entry = lstatSync(path.join(root, child), { bigint: true });
        } catch {
          return MOVED; // a temp file renamed into place since the listing, most likely
        }
        if (entry.isDirectory()) next.push(child);
        else if (entry.isFile()) fresh.push(child);
        else return false;
      }
      if (fresh.length > MAX_FILES) return false;
    }
    level = next;
  }
  return true;
}

/**
 * A name git may refuse to store (its verify_path: `.git` in any case, with trailing dots or spaces or an
 * NTFS stream, with characters HFS ignores, or an NTFS short name `git~N`): git decides, so that no
 * checkpoint holds a path git cannot read back on a rewind.
 */
export function gitGuardedName(name: string): boolean {
  const plain = name
    .toLowerCase()
    .replace(/[^\x21-\x7e]/g, '')
    .replace(/[. ]+$/, '');
  return plain === '.git' || plain.startsWith('.git:') || /^git~\d+$/.test(plain);
}

/** The user's own git file that the shadow's git reads even with no global config (its environment has HOME, no XDG_CONFIG_HOME: checkpoint-git.ts). */
export function globalGitFile(name: 'ignore' | 'attributes'): string {
  return path.join(process.env.HOME ?? '/', '.config', 'git', name);
}
