// JSON files that readers never see half-written: write to a temp file, then rename. Owner-only
// (0600, whatever the umask): they hold the team's state, private to the person (docs/trust.md).
// Plain node:fs rather than write-file-atomic: that package names its temp files after its own
// __filename, which does not exist in huddle's ESM bundle (dist/), so every write failed there.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { PRIVATE_FILE_MODE } from './private-modes.js';

/** `<file>.<pid>.<random>.tmp`: never a name the board or the bus would take for one of theirs. */
function tempFileFor(file: string): string {
  return `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const temp = tempFileFor(file);
  try {
    await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    await rename(temp, file);
  } catch (error) {
    // Removing our own leftover: the error that brought us here is the one to report.
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

export function writeJsonAtomicSync(file: string, value: unknown): void {
  const temp = tempFileFor(file);
  try {
    writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export class MalformedFileError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file} is not valid JSON (${detail}); fix or remove the file`);
    this.name = 'MalformedFileError';
  }
}

/** Reads and parses a JSON file; undefined when it does not exist, MalformedFileError when broken. */
export function readJson<T>(file: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new MalformedFileError(file, (error as Error).message);
  }
}
