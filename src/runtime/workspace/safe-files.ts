// Opening and writing files inside a workspace without a window between checking a path and using
// it, for the file tools. An agent's shell can swap a directory for a symlink at any moment, so a
// path checked first and opened later may lead anywhere by then. Instead:
//   reading: open with O_NOFOLLOW (no link in the last step), then ask the kernel where the open
//     descriptor really is (/proc/self/fd/N) and refuse it when that is outside;
//   writing: never into an existing file. The content goes to a new temp file (O_EXCL|O_NOFOLLOW)
//     in the target's directory, verified the same way, then renamed over the target: a rename
//     replaces the name, never the content of another inode, so a swapped directory or a hard
//     link cannot carry the write outside. Readers never see a half-written file either.
// Hard links: a file with other links is refused for writing (the rename would silently split
// the link), and for reading unless every link is found inside the workspace (its content may
// belong to a file outside: a link made to read what the workspace should not see).
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, realpathSync, type Dirent, type Stats } from 'node:fs';
import { mkdir, open, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { configPathReason, configRefusal, ownConfigDir } from './config-paths.js';
import { isInside, PathEscapeError, type Workspace } from './workspace.js';

/** A file error meant for the model: what went wrong and what to do instead. */
export class FileAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileAccessError';
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The real path, as the kernel reports it for the open descriptor. */
  absolute: string;
  stats: Stats;
}

/** How many directory entries to look through for the other links of a multiply-linked file. */
const LINK_SEARCH_LIMIT = 50_000;

/** Opens a regular file inside the workspace for reading; `shown` names it in messages. */
export async function openInside(workspace: Workspace, requested: string, shown?: string): Promise<OpenedFile> {
  const absolute = workspace.resolve(requested);
  const label = shown ?? workspace.relative(absolute);
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new FileAccessError(`file not found: ${label}; use glob to find the right path`);
    if (code === 'ELOOP') throw new PathEscapeError(requested, workspace.root);
    throw error;
  }
  try {
    const real = whereIs(handle, absolute);
    if (!isInside(workspace.root, real)) throw new PathEscapeError(requested, workspace.root);
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new FileAccessError(`${label} is a directory; use glob to list its files`);
    if (!stats.isFile()) throw new FileAccessError(`${label} is not a regular file`);
    if (stats.nlink > 1 && !allLinksInside(workspace.root, stats)) {
      throw new FileAccessError(
        `${label} has ${stats.nlink} hard links and not all of them are inside the workspace, so it may be a file from outside; the file tools do not read it`,
      );
    }
    return { handle, absolute: real, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads a whole file inside the workspace (see openInside). */
export async function readInside(workspace: Workspace, requested: string, shown?: string): Promise<{ buffer: Buffer; absolute: string; stats: Stats }> {
  const { handle, absolute, stats } = await openInside(workspace, requested, shown);
  try {
    return { buffer: await handle.readFile(), absolute, stats };
  } finally {
    await handle.close();
  }
}

/**
 * Writes `content` as the whole file at `requested` inside the workspace, atomically (temp file
 * and rename), keeping an existing file's mode; missing parent directories are made, each
 * checked to be inside. Returns whether the file existed.
 */
export async function writeInside(
  workspace: Workspace,
  requested: string,
  content: string | Uint8Array,
  shown?: string,
): Promise<{ absolute: string; existed: boolean }> {
  const absolute = workspace.resolve(requested);
  const label = shown ?? workspace.relative(absolute);
  // Configuration is refused as spelled and where it really is (docs/trust.md).
  const configDir = ownConfigDir();
  refuseConfig(workspace, path.resolve(workspace.root, requested), label, configDir);
  refuseConfig(workspace, absolute, label, configDir);
  const dir = path.dirname(absolute);
  await makeDirsInside(workspace, dir, requested);

  // A new file is the usual case: no exception for its absence.
  const existing: Stats | undefined = lstatSync(absolute, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw new FileAccessError(`${label} is a directory; give a file path`);
  // resolve() followed every link, so a link here appeared since: someone is racing the tool.
  if (existing?.isSymbolicLink()) throw new PathEscapeError(requested, workspace.root);
  if (existing && !existing.isFile()) throw new FileAccessError(`${label} is not a regular file`);
  if (existing && existing.nlink > 1) {
    throw new FileAccessError(
      `${label} has ${existing.nlink} hard links; writing it would split them (or reach a file outside the workspace), so the file tools do not write it`,
    );
  }

  const temp = path.join(dir, `.${path.basename(absolute).slice(0, 200)}.huddle-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, existing ? 0o600 : 0o666);
  let tempReal = temp;
  try {
    tempReal = whereIs(handle, temp);
    if (!isInside(workspace.root, tempReal)) throw new PathEscapeError(requested, workspace.root);
    // A directory swapped for a link into .git since the check above lands the temp file there.
    refuseConfig(workspace, path.join(path.dirname(tempReal), path.basename(absolute)), label, configDir);
    await handle.writeFile(content);
    if (existing) await handle.chmod(existing.mode & 0o7777);
    await handle.close();
  } catch (error) {
    // Closing our own handle on the way out: the error that brought us here is the one to report.
    await handle.close().catch(() => undefined);
    // Removing our own leftover: the error that brought us here is the one to report.
    await unlink(tempReal).catch(() => undefined);
    throw error;
  }
  try {
    // Both names in the directory verified above; if it was swapped since, the temp file is not
    // found through the new path and the rename fails rather than writing elsewhere.
    await rename(temp, absolute);
  } catch (error) {
    // Removing our own leftover: the error that brought us here is the one to report.
    await unlink(tempReal).catch(() => undefined);
    throw error;
  }
  return { absolute, existed: existing !== undefined };
}

function refuseConfig(workspace: Workspace, absolute: string, label: string, configDir: string): void {
  const why = configPathReason(workspace.root, absolute, [], configDir);
  if (why) throw new FileAccessError(configRefusal(label, why));
}

/**
 * mkdir -p, one step at a time. Each directory is made in, and opened from, the directory opened before it
 * (through /proc/self/fd, as mkdirat would): a directory swapped for a link out of the workspace meanwhile
 * is never made through, since a path is not walked again (docs/trust.md). Elsewhere than Linux, each new
 * directory is checked to be inside after it is made (and removed if not).
 */
async function makeDirsInside(workspace: Workspace, dir: string, requested: string): Promise<void> {
  const relative = path.relative(workspace.root, dir);
  if (!relative) return;
  if (process.platform === 'linux') return makeDirsBeneath(workspace.root, relative.split(path.sep), requested);
  let current = workspace.root;
  for (const part of relative.split(path.sep)) {
    current = path.join(current, part);
    let made = false;
    try {
      await mkdir(current);
      made = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let real: string;
    try {
      real = realpathSync(current);
    } catch {
      throw new PathEscapeError(requested, workspace.root);
    }
    if (!isInside(workspace.root, real)) {
      // Removing our own leftover: the error that brought us here is the one to report.
      if (made) await rmdir(real).catch(() => undefined);
      throw new PathEscapeError(requested, workspace.root);
    }
  }
}

const DIRECTORY_NOT_LINK = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The walk of makeDirsInside on Linux: from an open directory to the next, never by path from the root.
 * Synchronous: a few metadata calls, where each await cost a trip through libuv's thread pool. The
 * directory usually exists: it is opened first, and made (then opened again) only when that fails.
 */
function makeDirsBeneath(root: string, parts: string[], requested: string): void {
  let parent = openSync(root, DIRECTORY_NOT_LINK);
  try {
    if (!isInside(root, whereIsFd(parent, root))) throw new PathEscapeError(requested, root);
    for (const [index, part] of parts.entries()) {
      const next = `/proc/self/fd/${parent}/${part}`;
      // O_NOFOLLOW: a link in the directory's place (made since, or there all along) is not opened.
      let child = openDirectory(next);
      if (typeof child !== 'number') {
        try {
          mkdirSync(next);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        child = openDirectory(next);
      }
      if (child === 'ENOTDIR') {
        const file = parts.slice(0, index + 1).join('/');
        throw new FileAccessError(`${file} is a file, not a directory, so ${requested} cannot be made; choose another path`);
      }
      if (typeof child !== 'number') throw new PathEscapeError(requested, root);
      closeSync(parent);
      parent = child;
    }
  } finally {
    closeSync(parent);
  }
}

/** A directory opened without following a link, or why not (ENOENT, ELOOP for a link, ENOTDIR for a file…). */
function openDirectory(file: string): number | string {
  try {
    return openSync(file, DIRECTORY_NOT_LINK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EIO';
  }
}

/** Where an open descriptor really is: the kernel's answer on Linux, else the path it was opened by. */
function whereIs(handle: FileHandle, opened: string): string {
  return whereIsFd(handle.fd, opened);
}

function whereIsFd(fd: number, opened: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '');
  } catch {
    return realpathSync(opened);
  }
}

/** Whether all `stats.nlink` names of the file are found in the workspace (a bounded walk). */
function allLinksInside(root: string, stats: Stats): boolean {
  let found = 0;
  let seen = 0;
  const pending = [root];
  while (pending.length) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > LINK_SEARCH_LIMIT) return false;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile()) {
        try {
          const info = statLinkSync(full);
          if (info && info.ino === stats.ino && info.dev === stats.dev && ++found >= stats.nlink) return true;
        } catch {
          // gone meanwhile
        }
      }
    }
  }
  return false;
}

function statLinkSync(p: string): Stats | undefined {
  return lstatSync(p, { throwIfNoEntry: false });
}
