// What a workspace holds from earlier runs: an unfinished team (docs/contract.md#command-line) and archiving it.
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { readJson } from '../../fs/atomic-file.js';
import { isLockRecordFile } from '../file-lock.js';
import { fileStamp } from './event-log.js';
import { PRIVATE_DIR_MODE } from '../../fs/private-modes.js';

/** What belongs to the workspace or the person rather than to one team (and the team lock, which stays where it is looked for). */
const KEPT_ON_ARCHIVE = new Set(['archive', 'roles', 'input-history.json', 'settings.json', 'settings.local.json', '.gitignore', 'huddle.lock']);

interface RosterFile {
  members?: Array<{ name?: string; status?: string }>;
}

/** Members of the roster that are not shut down: the workspace holds an unfinished team. */
export function unfinishedMembers(teamDir: string): string[] {
  const roster = readJson<RosterFile>(path.join(teamDir, 'config.json'));
  return (roster?.members ?? []).filter((m) => m.status !== 'shutdown').map((m) => String(m.name));
}

/** Moves the team's state (all of .team but its archive, its locks' record files, and .tasks) to .team/archive/<iso>/. */
export function archiveTeam(teamDir: string, tasksDir: string): string | undefined {
  const entries = existsSync(teamDir) ? readdirSync(teamDir).filter((e) => !KEPT_ON_ARCHIVE.has(e) && !isLockRecordFile(e)) : [];
  const hasTasks = existsSync(tasksDir);
  if (entries.length === 0 && !hasTasks) return undefined;
  const target = path.join(teamDir, 'archive', fileStamp(new Date()));
  mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const entry of entries) renameSync(path.join(teamDir, entry), path.join(target, entry));
  if (hasTasks) renameSync(tasksDir, path.join(target, 'tasks'));
  return target;
}
