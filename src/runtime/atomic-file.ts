// JSON files that readers never see half-written: write to a temp file, then rename.
import { readFileSync } from 'node:fs';
import writeFileAtomic from 'write-file-atomic';

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, { fsync: false });
}

export function writeJsonAtomicSync(file: string, value: unknown): void {
  writeFileAtomic.sync(file, `${JSON.stringify(value, null, 2)}\n`, { fsync: false });
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
