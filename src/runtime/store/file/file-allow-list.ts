// The allow-list in `.team/allow.json`: a JSON array of command prefixes, read on every check
// (so a hand edit applies at once) and extended under the file lock.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../fs/atomic-file.js';
import type { AllowList, AllowListEntries } from '../allow-list.js';
import { withFileLock } from './file-lock.js';

export const ALLOW_FILE = 'allow.json';

export class FileAllowList implements AllowList {
  constructor(readonly teamDir: string) {}

  read(): AllowListEntries {
    return readAllowFile(this.teamDir);
  }

  add(prefixes: string[]): Promise<string[]> {
    return addToAllowFile(this.teamDir, prefixes);
  }
}


/** The workspace's allow-list; a broken file counts as empty, and `error` says how to fix it. */
function readAllowFile(teamDir: string): AllowListEntries {
  const file = path.join(teamDir, ALLOW_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { entries: [] };
  }
  const problem = (what: string) => ({
    entries: [],
    error: `.team/${ALLOW_FILE} is ignored: ${what}; it must be a JSON array of command prefixes such as ["npm test", "make"]`,
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return problem(`it is not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value)) return problem('it is not an array');
  const bad = value.find((entry) => typeof entry !== 'string' || !entry.trim());
  if (bad !== undefined) return problem(`${JSON.stringify(bad)} is not a command prefix`);
  return { entries: value as string[] };
}

/** Adds prefixes to the allow-list (kept in order, no duplicates). Refuses to overwrite a broken file. */
async function addToAllowFile(teamDir: string, prefixes: string[]): Promise<string[]> {
  const file = path.join(teamDir, ALLOW_FILE);
  return withFileLock(file, async () => {
    const current = readAllowFile(teamDir);
    if (current.error) throw new Error(current.error);
    const added = prefixes.filter((p) => p.trim() && !current.entries.includes(p));
    if (added.length) await writeJsonAtomic(file, [...current.entries, ...added]);
    return added;
  });
}
