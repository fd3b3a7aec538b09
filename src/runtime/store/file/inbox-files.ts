// The files of the file bus: one inbox (`<name>.jsonl`, one message per line, append-only) and
// its cursor (`<name>.cursor`) per agent. Reading regions, appending lines, parsing messages,
// and finding a message by id for a retried send.
import { closeSync, existsSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { MalformedFileError, writeJsonAtomic } from '../../fs/atomic-file.js';
import { type Message, MESSAGE_TYPES, type MessageType } from '../bus.js';
import { StoreWriteError } from '../store-errors.js';
import { PRIVATE_FILE_MODE } from '../../fs/private-modes.js';

export const NEWLINE = 0x0a;

/** The content of `<name>.cursor`. */
export interface InboxCursor {
  /** Bytes of `<name>.jsonl` already delivered; always at a line boundary. */
  offset: number;
  /** Lines before `offset` (for warnings that name a line). */
  line: number;
  /** Ids of the most recently acked messages, oldest first. */
  delivered_ids_tail: string[];
}

/** The ids in one inbox file up to `offset` (where each line starts), to find a retried send. */
interface IdIndex {
  offset: number;
  ids: Map<string, number>;
}
const idIndexes = new Map<string, IdIndex>();

/** A cursor file that cannot be read: nothing can be delivered to that agent until it is fixed or removed. */
export class InboxCursorError extends MalformedFileError {
  constructor(file: string, problem: string, what: string) {
    super(file, problem);
    this.message = `${file} ${problem}; ${what}`;
    this.name = 'InboxCursorError';
  }
}

export async function writeCursor(file: string, cursor: InboxCursor): Promise<void> {
  try {
    await writeJsonAtomic(file, cursor);
  } catch (error) {
    throw StoreWriteError.from(error, file);
  }
}

/**
 * The message with `id` in the inbox `file`, if it holds one. Indexes the lines appended since
 * the last look (called under the inbox lock, so nothing is appended meanwhile).
 */
export function findById(file: string, id: string): Message | undefined {
  let index = idIndexes.get(file);
  const region = readRegion(file, (size) => (index && index.offset <= size ? index.offset : 0));
  if (!region) {
    idIndexes.delete(file);
    return undefined;
  }
  if (!index || region.start === 0) idIndexes.set(file, (index = { offset: 0, ids: new Map() }));
  const { bytes, start } = region;
  let position = 0;
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, position);
    if (newline < 0) break;
    const parsed = parseMessage(bytes.toString('utf8', position, newline));
    if (typeof parsed !== 'string' && !index.ids.has(parsed.id)) index.ids.set(parsed.id, start + position);
    position = newline + 1;
  }
  index.offset = start + position;
  const at = index.ids.get(id);
  if (at === undefined) return undefined;
  const line = readRegion(file, () => at);
  const text = line?.bytes.toString('utf8', 0, Math.max(0, line.bytes.indexOf(NEWLINE)));
  const message = text ? parseMessage(text) : 'gone';
  return typeof message === 'string' ? undefined : message;
}

/** A message, or what is wrong with the line. */
export function parseMessage(text: string): Message | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON (a torn or hand-edited line)';
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const message = value as Record<string, unknown>;
  for (const field of ['id', 'from', 'to', 'content', 'ts'] as const) {
    if (typeof message[field] !== 'string') return `not a message (no string '${field}')`;
  }
  if (!MESSAGE_TYPES.includes(message.type as MessageType)) {
    return `unknown message type '${String(message.type)}'`;
  }
  return message as Message;
}

/**
 * Reads `<file>` from `startOf(size)` to `end` (default: its current size). Undefined when the
 * file does not exist.
 */
export function readRegion(file: string, startOf: (size: number) => number, end?: number): { bytes: Buffer; start: number; size: number } | undefined {
  // Most agents' inboxes have never been written: asked first, so that answer costs no exception.
  if (!existsSync(file)) return undefined;
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const start = startOf(size);
    const stop = Math.min(end ?? size, size);
    const length = Math.max(0, stop - start);
    const bytes = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const count = readSync(fd, bytes, read, length - read, start + read);
      if (count === 0) break;
      read += count;
    }
    return { bytes: bytes.subarray(0, read), start, size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends `line` (ending in a newline). When the file does not end in a newline, a writer died
 * mid-line: a newline goes first, so the fragment stays its own (skipped) line.
 */
export function appendLine(file: string, line: Buffer): void {
  const fd = openSync(file, 'a+', PRIVATE_FILE_MODE);
  try {
    const size = fstatSync(fd).size;
    let data = line;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== NEWLINE) data = Buffer.concat([Buffer.from('\n'), line]);
    }
    let written = 0;
    while (written < data.length) written += writeSync(fd, data, written, data.length - written);
  } finally {
    closeSync(fd);
  }
}
