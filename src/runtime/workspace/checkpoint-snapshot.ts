// The checkpoints' change detector (checkpoints.ts; docs/trust.md#checkpoints-and-rewind): what the workspace's
// files looked like when the last checkpoint was taken, so that the next one costs no git process
// when nothing changed. It holds
// - the stat of every directory git would look into (not ignored: the long-lived `git check-ignore`
//   of checkpoint-ignores.ts is asked about each new directory, once), taken BEFORE `git add -A` ran, so that anything created, deleted or
//   renamed after that moves a directory's stat;
// - the entries of the shadow index `git add -A` wrote: path, mode, blob id and the stat git saw.
// A file or directory whose ctime is within the racy margin of the snapshot could have changed again
// in the same clock tick without its stat moving (racily clean): its content is hashed (a file) or its
// names listed (a directory) and compared instead. The margin is the file system's tick
// (racyMarginMs): a second where timestamps may be whole seconds or come from another machine's clock,
// FINE_RACY_MS on a local Linux file system that keeps nanoseconds. Anything the detector cannot vouch for (a nested
// repository, a conflicted or version-4 index, too many files, too much to hash) is "changed", and
// git decides.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statfsSync, type BigIntStats, type Dirent } from 'node:fs';
import path from 'node:path';
import type { IndexEntry } from './git-index.js';

/** Within this of the snapshot, a stat proves nothing where the file system's clock ticks coarsely. */
export const RACY_MS = 1000;
/**
 * The same on a local Linux file system with nanosecond timestamps: they are read from the kernel's
 * coarse clock, at most a tick (1–10 ms) behind the time the snapshot is stamped with. At a second,
 * a team writing files all the time had every file of the last second hashed again at each checkpoint.
 */
export const FINE_RACY_MS = 50;

/** Local Linux file systems that keep nanosecond timestamps (statfs f_type): ext2/3/4, tmpfs, btrfs, xfs, overlayfs, zfs, f2fs, bcachefs. */
const FINE_FILE_SYSTEMS = new Set([0xef53, 0x01021994, 0x9123683e, 0x58465342, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e]);
const margins = new Map<string, number>();

/**
 * The racy margin of the workspace at `root` (isRacy): FINE_RACY_MS on a file system of
 * FINE_FILE_SYSTEMS, else RACY_MS (a network file system's times come from its server's clock).
 * ext3 shares ext4's type and may keep whole seconds: isRacy falls back to RACY_MS for such a stat.
 */
export function racyMarginMs(root: string): number {
  let margin = margins.get(root);
  if (margin === undefined) {
    try {
      margin = process.platform === 'linux' && FINE_FILE_SYSTEMS.has(statfsSync(root).type) ? FINE_RACY_MS : RACY_MS;
    } catch {
      margin = RACY_MS; // not there (yet): the safe margin, asked again next time
      return margin;
    }
    margins.set(root, margin);
  }
  return margin;
}
/** Beyond these the detector steps aside: stat-ing them all would cost more than git does. */
const MAX_DIRS = 5000;
const MAX_ENTRIES = 50_000;
/** Racily clean files hashed per check, at most (bytes); more and git decides. */
const MAX_HASHED_BYTES = 8 * 1024 * 1024;

export interface DirStat {
  /** Relative, `/`-separated; '' is the workspace itself. */
  path: string;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Its names when it was racy at the snapshot. */
  names?: string[];
  /** Its names, sorted, always (checkpoint-few-changes.ts tells what was added or removed). */
  listing: string[];
}

export interface WorkspaceSnapshot {
  /** Date.now() when the directories were read (before `git add -A`). */
  takenMs: number;
  dirs: DirStat[];
  entries: IndexEntry[];
  /** Directories known to be ignored (true) or looked into (false), by relative path. */
  ignored: Map<string, boolean>;
  /** The stat of the files that decide what is ignored, when the snapshot was taken. */
  excludesStamp: string;
  /** The workspace's .gitignore files then (absolute). */
  gitignores: string[];
}

/**
 * Asks git which of these directories (relative paths) are ignored, given the .gitignore files the
 * walk has found so far (absolute: what decides, with the excludes); undefined if it could not say.
 */
export type IgnoredDirs = (dirs: string[], gitignores: readonly string[]) => Promise<Set<string> | undefined>;

/**
 * The directories of the workspace git would look into, read now (before `git add -A`).
 * Undefined: the detector cannot vouch for this workspace (a nested repository, too large, git
 * could not say what is ignored), so every checkpoint asks git.
 */
export async function readDirectories(
  root: string,
  known: Map<string, boolean> | undefined,
  askIgnored: IgnoredDirs,
): Promise<{ takenMs: number; dirs: DirStat[]; ignored: Map<string, boolean>; gitignores: string[] } | undefined> {
  const takenMs = Date.now();
  const margin = racyMarginMs(root);
  const ignored = new Map(known ?? []);
  const dirs: DirStat[] = [];
  const gitignores: string[] = [];
  let level = [''];
  while (level.length) {
    const next: string[] = [];
    for (const dir of level) {
      const full = path.join(root, dir);
      let stats: BigIntStats;
      let entries: Dirent[];
      try {
        stats = lstatSync(full, { bigint: true });
        entries = readdirSync(full, { withFileTypes: true });
      } catch {
        return undefined; // moving under us: let git read it
      }
      if (!stats.isDirectory()) return undefined;
      const names = entries.map((entry) => entry.name).sort();
      dirs.push(dirStatOf(dir, stats, names, takenMs, margin));
      if (dirs.length > MAX_DIRS) return undefined;
      for (const entry of entries) {
        if (dir === '' && entry.name === '.git') continue;
        if (entry.name === '.git') return undefined; // a nested repository: git records its HEAD, not its files
        const child = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.name === '.gitignore') gitignores.push(path.join(root, child));
        if (entry.isDirectory()) next.push(child);
      }
    }
    const unknown = next.filter((dir) => !ignored.has(dir));
    if (unknown.length) {
      const answer = await askIgnored(unknown, gitignores);
      if (!answer) return undefined;
      for (const dir of unknown) ignored.set(dir, answer.has(dir));
    }
    level = next.filter((dir) => ignored.get(dir) === false);
  }
  return { takenMs, dirs, ignored, gitignores };
}

/** True when the workspace's files are surely what the snapshot's checkpoint holds. */
export function unchangedSince(root: string, snapshot: WorkspaceSnapshot, hash: 'sha1' | 'sha256'): boolean {
  if (snapshot.entries.length > MAX_ENTRIES) return false;
  const margin = racyMarginMs(root);
  for (const dir of snapshot.dirs) {
    let stats: BigIntStats;
    try {
      stats = lstatSync(path.join(root, dir.path), { bigint: true });
    } catch {
      return false;
    }
    if (!stats.isDirectory() || stats.ino !== dir.ino || stats.mtimeNs !== dir.mtimeNs || stats.ctimeNs !== dir.ctimeNs) return false;
    // Not racy then: its stat is proof. Racy: its names are compared.
    if (dir.names) {
      let names: string[];
      try {
        names = readdirSync(path.join(root, dir.path)).sort();
      } catch {
        return false;
      }
      if (names.length !== dir.names.length || names.some((name, i) => name !== dir.names![i])) return false;
    }
  }
  let hashed = 0;
  for (const entry of snapshot.entries) {
    if (entry.mode === 0o160000) return false;
    const full = path.join(root, entry.path);
    let stats: BigIntStats;
    try {
      stats = lstatSync(full, { bigint: true });
    } catch {
      return false;
    }
    const link = stats.isSymbolicLink();
    if (link !== (entry.mode === 0o120000)) return false;
    if (!link && (!stats.isFile() || ((stats.mode & 0o100n) !== 0n) !== (entry.mode === 0o100755))) return false;
    const sameStat =
      low32(stats.ino) === entry.ino &&
      low32(stats.size) === entry.size &&
      stats.ctimeNs / 1_000_000_000n === BigInt(entry.ctimeSec) &&
      stats.ctimeNs % 1_000_000_000n === BigInt(entry.ctimeNsec) &&
      stats.mtimeNs / 1_000_000_000n === BigInt(entry.mtimeSec) &&
      stats.mtimeNs % 1_000_000_000n === BigInt(entry.mtimeNsec);
    if (sameStat && !isRacy(stats, snapshot.takenMs, margin)) continue;
    // git smudges a racily clean entry's size to 0; any other size that moved is a change.
    if (entry.size !== 0 && low32(stats.size) !== entry.size) return false;
    hashed += Number(stats.size);
    if (hashed > MAX_HASHED_BYTES) return false;
    let content: Buffer;
    try {
      content = link ? Buffer.from(readlinkSync(full, { encoding: 'buffer' })) : readFileSync(full);
    } catch {
      return false;
    }
    if (blobId(content, hash) !== entry.oid) return false;
  }
  return true;
}

/** The stat of the files that decide what git ignores here (an edit to one forgets what was learnt). */
export function excludesStamp(files: string[]): string {
  return files
    .map((file) => {
      try {
        // Most of them do not exist (a global ignore file, .gitignore files gone): no exception for that.
        const s = lstatSync(file, { bigint: true, throwIfNoEntry: false });
        return s ? `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : '-';
      } catch {
        return '-'; // not a directory on the way, not allowed: as absent
      }
    })
    .join(',');
}

/** A directory as a snapshot records it: its stat and sorted names, and those names again when it is racy. */
export function dirStatOf(dir: string, stats: BigIntStats, names: string[], takenMs: number, margin: number): DirStat {
  return { path: dir, ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, listing: names, ...(isRacy(stats, takenMs, margin) ? { names } : {}) };
}

/**
 * Whether a stat is too close to `takenMs` to prove the file unchanged. A ctime in whole seconds
 * tells of a file system (or a mount inside the workspace) that keeps no more: RACY_MS then.
 */
export function isRacy(stats: BigIntStats, takenMs: number, marginMs = RACY_MS): boolean {
  const margin = marginMs < RACY_MS && stats.ctimeNs % 1_000_000_000n === 0n ? RACY_MS : marginMs;
  const limit = BigInt(Math.floor(takenMs) - margin) * 1_000_000n;
  return stats.ctimeNs >= limit || stats.mtimeNs >= limit;
}

export function low32(n: bigint): number {
  return Number(n & 0xffffffffn);
}

export function blobId(content: Buffer, hash: 'sha1' | 'sha256'): string {
  return createHash(hash).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * Tracked files whose content changed while their stat, as git compares it (whole seconds), did
 * not: a same-size edit in the same second with its mtime put back (`cp -p`, `touch -r`, tar).
 * `git add -A` would keep the old blob; the caller has git hash these again. Only files whose stat
 * moved below a second, or that were written within RACY_MS of `referenceMs`, are hashed.
 * Undefined: too much to hash (the caller then has git read every file).
 */
export function gitBlindEdits(root: string, entries: IndexEntry[], referenceMs: number, hash: 'sha1' | 'sha256'): string[] | undefined {
  const blind: string[] = [];
  let hashed = 0;
  for (const entry of entries) {
    if (entry.mode === 0o160000 || entry.size === 0) continue; // size 0: git hashes it again anyway
    const full = path.join(root, entry.path);
    let stats: BigIntStats;
    try {
      stats = lstatSync(full, { bigint: true });
    } catch {
      continue; // gone: git sees that
    }
    const link = stats.isSymbolicLink();
    if ((!link && !stats.isFile()) || link !== (entry.mode === 0o120000) || low32(stats.ino) !== entry.ino || low32(stats.size) !== entry.size) continue;
    if (stats.ctimeNs / 1_000_000_000n !== BigInt(entry.ctimeSec) || stats.mtimeNs / 1_000_000_000n !== BigInt(entry.mtimeSec)) continue;
    const exact = stats.ctimeNs % 1_000_000_000n === BigInt(entry.ctimeNsec) && stats.mtimeNs % 1_000_000_000n === BigInt(entry.mtimeNsec);
    if (exact && !isRacy(stats, referenceMs)) continue;
    hashed += Number(stats.size);
    if (hashed > MAX_HASHED_BYTES) return undefined;
    try {
      const content = link ? Buffer.from(readlinkSync(full, { encoding: 'buffer' })) : readFileSync(full);
      if (blobId(content, hash) !== entry.oid) blind.push(entry.path);
    } catch {
      // unreadable: git skips it too (--ignore-errors)
    }
  }
  return blind;
}
