// The entries of a git index file (versions 2 and 3, the ones `git add` writes unless told
// otherwise), read without a git process: the checkpoints' change detector (checkpoint-snapshot.ts)
// compares each entry's stat data and blob id with the workspace. Version 4 (prefix-compressed
// paths) and anything unexpected read as undefined: the caller then asks git instead. No file: no entries.
import { readFileSync } from 'node:fs';

export interface IndexEntry {
  /** Relative to the work tree, `/`-separated. */
  path: string;
  /** The same, as the bytes git keeps (a name need not be UTF-8). */
  raw: Buffer;
  /** 0o100644, 0o100755, 0o120000 (symlink) or 0o160000 (a nested repository). */
  mode: number;
  /** The blob's id, hex. */
  oid: string;
  ctimeSec: number;
  ctimeNsec: number;
  mtimeSec: number;
  mtimeNsec: number;
  /** The low 32 bits, as git stores them. */
  ino: number;
  size: number;
}

export function readGitIndex(file: string, hashBytes: 20 | 32): IndexEntry[] | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (error) {
    // `git add` writes no index for a workspace with no files: nothing in it.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? [] : undefined;
  }
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = data.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const fixed = 40 + hashBytes + 2;
    if (at + fixed > data.length) return undefined;
    const flags = data.readUInt16BE(at + 40 + hashBytes);
    const extended = version === 3 && (flags & 0x4000) !== 0;
    const nameStart = at + fixed + (extended ? 2 : 0);
    const nameEnd = data.indexOf(0, nameStart);
    if (nameEnd < 0) return undefined;
    // Stage bits: a conflicted entry never comes out of `git add`; read it as "ask git".
    if ((flags & 0x3000) !== 0) return undefined;
    entries.push({
      path: data.toString('utf8', nameStart, nameEnd),
      raw: data.subarray(nameStart, nameEnd),
      mode: data.readUInt32BE(at + 24),
      oid: data.toString('hex', at + 40, at + 40 + hashBytes),
      ctimeSec: data.readUInt32BE(at),
      ctimeNsec: data.readUInt32BE(at + 4),
      mtimeSec: data.readUInt32BE(at + 8),
      mtimeNsec: data.readUInt32BE(at + 12),
      ino: data.readUInt32BE(at + 20),
      size: data.readUInt32BE(at + 36),
    });
    // Each entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
    const length = nameEnd - at;
    at += (length + 8) & ~7;
  }
  return entries;
}
