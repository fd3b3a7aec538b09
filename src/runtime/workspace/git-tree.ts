// The tree objects of an index's entries, as `git write-tree` makes them, without a git process:
// a checkpoint's `files` tree (checkpoints.ts) from the shadow index `git add -A` just wrote. Each
// tree's entries in git's order (by name, a directory's name compared as if it ended in `/`).
import type { IndexEntry } from './git-index.js';

interface Dir {
  files: Array<{ name: Buffer; mode: number; oid: string }>;
  dirs: Map<string, { name: Buffer; dir: Dir }>;
}

/** The id of the root tree; `write` stores each tree object (type `tree`, its body) and returns its id. */
export function writeTrees(entries: IndexEntry[], write: (body: Buffer) => string): string {
  const root: Dir = { files: [], dirs: new Map() };
  for (const entry of entries) {
    let dir = root;
    let start = 0;
    for (let slash = entry.raw.indexOf(0x2f); slash >= 0; slash = entry.raw.indexOf(0x2f, start)) {
      const name = entry.raw.subarray(start, slash);
      const key = name.toString('latin1');
      let child = dir.dirs.get(key);
      if (!child) {
        child = { name, dir: { files: [], dirs: new Map() } };
        dir.dirs.set(key, child);
      }
      dir = child.dir;
      start = slash + 1;
    }
    dir.files.push({ name: entry.raw.subarray(start), mode: entry.mode, oid: entry.oid });
  }
  const store = (dir: Dir): string => {
    const items = [
      ...dir.files.map((file) => ({ name: file.name, sortKey: file.name, mode: file.mode.toString(8), oid: file.oid })),
      ...[...dir.dirs.values()].map((child) => ({
        name: child.name,
        sortKey: Buffer.concat([child.name, Buffer.from('/')]),
        mode: '40000',
        oid: store(child.dir),
      })),
    ].sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));
    return write(Buffer.concat(items.flatMap((item) => [Buffer.from(`${item.mode} `), item.name, Buffer.from([0]), Buffer.from(item.oid, 'hex')])));
  };
  return store(root);
}
