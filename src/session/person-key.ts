// The person's key for a workspace (docs/trust.md): what lets `huddle mcp --as NAME` over the team's
// store act as a member, and what no agent can show. huddle mints it when it runs the team: the key
// itself goes to huddle's private runtime directory (owner-only, hidden from every sandbox), only
// its SHA-256 to `.team/person-key.sha256` (read-only inside every sandbox). A process that can read
// the key is one of the person's own; a sandboxed command sees no key (its own runtime directory,
// if it makes one, holds a key whose hash is not the team's), and cannot rewrite the hash.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { huddleRuntimeDir, personKeysDir } from '../runtime/sandbox/runtime-dir.js';

const HASH_FILE = 'person-key.sha256';

/** One key per workspace ever run, in a directory of their own: the runtime directory, listed at every start, stays small. */
function keyFile(teamDir: string): string {
  const id = createHash('sha256').update(teamDir).digest('hex').slice(0, 16);
  return path.join(personKeysDir(huddleRuntimeDir()), `person-${id}.key`);
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Makes sure the workspace has a key whose hash the team holds (kept when both still match). */
export function mintPersonKey(teamDir: string): void {
  const file = keyFile(teamDir);
  const key = read(file);
  const hashFile = path.join(teamDir, HASH_FILE);
  if (key && read(hashFile) === digest(key)) return;
  const fresh = randomBytes(32).toString('hex');
  mkdirSync(teamDir, { recursive: true, mode: 0o700 }); // a team on PostgreSQL may have no files here yet
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${fresh}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  // Private like the rest of .team/ (docs/trust.md#secrets-and-files): the person's processes read it.
  writeFileSync(hashFile, `${digest(fresh)}\n`, { mode: 0o600 });
  chmodSync(hashFile, 0o600);
}

/** Undefined when this process holds the person's key for the team in `teamDir`; else why not, in one line. */
export function whyNotPerson(teamDir: string): string | undefined {
  const stored = read(path.join(teamDir, HASH_FILE));
  if (!stored) return `huddle has not run the team in ${path.dirname(teamDir)} yet, so there is no member to act as`;
  const key = read(keyFile(teamDir));
  const expected = Buffer.from(stored, 'utf8');
  const actual = Buffer.from(key ? digest(key) : '', 'utf8');
  if (key && expected.length === actual.length && timingSafeEqual(expected, actual)) return undefined;
  return "this process cannot show the person's key (huddle keeps it where no agent's sandbox can read it); run it from your own shell, where huddle runs";
}
