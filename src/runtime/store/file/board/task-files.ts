// The file board's files: `.tasks/task_<id>.json`, one task each, and `.tasks/.ids.json`, the
// highest id ever given out (so an id is never given out twice, even after its file vanished).
// Writes are atomic (temp file + rename; temp names never match task_<n>.json); a new task's file
// is created exclusively (hard link of the temp file: fails if the name exists), so a create can
// never overwrite a task, whatever a person or another tool put on the board.
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { MalformedFileError } from '../../../fs/atomic-file.js';
import { parseTaskRecord, type Task, taskIdSchema } from '../../board/task.js';
import type { BoardProblem } from '../../board.js';
import { StoreWriteError } from '../../store-errors.js';
import { PRIVATE_FILE_MODE } from '../../../fs/private-modes.js';

export const TASK_FILE = /^task_([1-9][0-9]*)\.json$/;
/** withFileLock locks `<name>.lock`: the board's lock is `.tasks/.board.lock`. */
export const LOCK_NAME = '.board';
const IDS_FILE = '.ids.json';
const IDS_RECORD_LENGTH = 48;

/** A task file that exists but cannot be used: not JSON, or not the shape of a task. */
export class MalformedTaskFileError extends MalformedFileError {
  constructor(
    file: string,
    readonly detail: string,
  ) {
    super(file, detail);
    this.message = `${file} is not a valid task file (${detail}); fix or remove the file`;
    this.name = 'MalformedTaskFileError';
  }
}

export function taskFileName(id: number): string {
  return `task_${id}.json`;
}

/** What a file of the board holds, as last read: keyed by its stat, so an unchanged file is not parsed again. */
export interface TaskEntry {
  key: string;
  task?: Task;
  problem?: BoardProblem;
  /** The bytes it was parsed from (for warning once per distinct content). */
  text?: string;
}

export interface Listing {
  /** Ids of the task files, ascending. */
  ids: number[];
  /** Files named like tasks whose id is not a safe integer (task_100000000000000000000.json): skipped. */
  unsafe: BoardProblem[];
}

/** The task files in `dir` by name (malformed files included; ids that are not safe integers apart). */
export function listTaskFiles(dir: string): Listing {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ids: [], unsafe: [] };
    throw error;
  }
  const ids: number[] = [];
  const unsafe: BoardProblem[] = [];
  for (const name of names) {
    const match = TASK_FILE.exec(name);
    if (!match) continue;
    const id = Number(match[1]);
    if (Number.isSafeInteger(id)) ids.push(id);
    else unsafe.push(unsafeIdProblem(path.join(dir, name), match[1]!));
  }
  return { ids: ids.sort((a, b) => a - b), unsafe };
}

function unsafeIdProblem(file: string, digits: string): BoardProblem {
  const error = `its id ${digits} is too large (task ids go up to ${Number.MAX_SAFE_INTEGER}); it is skipped`;
  return { file, error, message: `skipped ${file}: ${error}; rename or remove it` };
}

export function statOrUndefined(file: string): Stats | undefined {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

// Every board write renames a new file into place, so the inode changes with each write; size and
// times catch in-place edits. (Only a claim's fresh read decides a claim; this key just saves reads.)
export function statKey(stat: Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/** Reads one task file: the task, or the problem with it; undefined when there is no such file. */
export function readTaskFile(file: string, id: number): TaskEntry | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  try {
    // The stat of the file read (a rename may put another file under the name meanwhile).
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const text = readFileSync(fd, 'utf8');
    return { ...parseTaskText(file, id, text), key: statKey(stat), text };
  } finally {
    closeSync(fd);
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

function parseTaskText(file: string, id: number, text: string): { task?: Task; problem?: BoardProblem } {
  const problem = (error: string): { problem: BoardProblem } => ({ problem: { file, error, message: `skipped ${file}: ${error}; fix or remove the file` } });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return problem(`not valid JSON: ${(error as Error).message}`);
  }
  const parsed = parseTaskRecord(raw);
  if ('error' in parsed) return problem(parsed.error);
  if (parsed.task.id !== id) return problem(`its id is ${parsed.task.id} but its file name says ${id}`);
  return { task: parsed.task };
}

/** Writes a task over its file, atomically; returns the new file's stat key. */
export function writeTaskFile(file: string, task: Task): string {
  const temp = tempFor(file);
  try {
    writeFileSync(temp, `${JSON.stringify(task, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    renameSync(temp, file);
    return statKey(statSync(file));
  } catch (error) {
    rmSync(temp, { force: true });
    throw StoreWriteError.from(error, file);
  }
}

/** Creates a task's file unless the name is taken (false then): never overwrites. Returns the stat key. */
export function createTaskFile(file: string, task: Task): string | false {
  const temp = tempFor(file);
  let linked: boolean;
  try {
    writeFileSync(temp, `${JSON.stringify(task, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    linkSync(temp, file);
    linked = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      rmSync(temp, { force: true });
      throw StoreWriteError.from(error, file);
    }
    linked = false;
  }
  // Unlinking the temp name changes the file's ctime: the key is taken after it.
  removeQuietly(temp);
  return linked ? statKey(statSync(file)) : false;
}

// pid + a counter: unique within the host (cheaper than random bytes, on the claim path).
let tempCounter = 0;
function tempFor(file: string): string {
  return `${file}.${process.pid}.${(tempCounter++).toString(36)}.tmp`;
}

/** The highest id ever given out on this board (0 when none is recorded, or the record is unreadable). */
export function readHighestId(dir: string): number {
  try {
    const value = (JSON.parse(readFileSync(path.join(dir, IDS_FILE), 'utf8')) as { highest_id?: unknown }).highest_id;
    return taskIdSchema().safeParse(value).success ? (value as number) : 0;
  } catch {
    // Missing or broken: the task files themselves still keep ids from being given out twice.
    return 0;
  }
}

/**
 * Records `id` as the highest given out. Written in place, at a fixed length (the JSON padded with
 * spaces): no rename and no truncation, which on ext4 would flush the file's data on every create.
 * A record torn by a crash reads as 0, and the task files still keep ids from being given out twice.
 */
export function writeHighestId(dir: string, id: number): void {
  const file = path.join(dir, IDS_FILE);
  const record = Buffer.from(`${JSON.stringify({ highest_id: id }).padEnd(IDS_RECORD_LENGTH - 1)}\n`);
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT, PRIVATE_FILE_MODE);
    writeSync(fd, record, 0, record.length, 0);
    if (fstatSync(fd).size !== record.length) ftruncateSync(fd, record.length);
  } catch (error) {
    throw StoreWriteError.from(error, file);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
