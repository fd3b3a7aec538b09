import { mkdirSync } from 'node:fs';
import { PRIVATE_DIR_MODE } from '../fs/private-modes.js';

// Store failures a person can act on. Every face prints one as a single line, never a stack:
// at start (opening the team) it exits 2, mid-run the run ends with exit 1.

/** A store problem with a message that says what happened and what to do. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}

/** The team's store cannot be opened here (a read-only workspace, a full disk, a broken state file). */
export class StoreUnavailableError extends StoreError {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

const WHY: Record<string, string> = {
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space is left on the device',
  EDQUOT: 'the disk quota is used up',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'it is a directory',
  EIO: 'an input/output error',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
};

/** What an fs error code means, in words. */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && WHY[code]) return `${WHY[code]} (${code})`;
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}

/** A write to the store failed (or, for a lock, could not happen). */
export class StoreWriteError extends StoreError {
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.name = 'StoreWriteError';
    this.code = code;
  }

  /** Wraps an fs error of writing `file` (a StoreError passes through unchanged). */
  static from(error: unknown, file: string): StoreError {
    if (error instanceof StoreError) return error;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    return new StoreWriteError(`cannot write ${file}: ${describeFsError(error)}`, code);
  }
}

/**
 * mkdir -p that reports the real reason: a recursive mkdir on a read-only file system says
 * ENOENT (it looks for the parent), so the last step is retried alone to get EROFS, EACCES...
 */
export function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw StoreWriteError.from(error, dir);
    try {
      mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    } catch (again) {
      throw StoreWriteError.from(again, dir);
    }
  }
}
