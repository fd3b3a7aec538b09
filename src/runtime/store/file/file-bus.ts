// The message bus: one append-only JSONL inbox per agent under `.team/inbox/` (SPEC section 4).
//
// Sending appends one line to `<to>.jsonl` under a per-inbox lock. Reading never changes the
// inbox: a cursor file `<name>.cursor` records the byte offset up to which messages have been
// delivered, so a reader that crashes loses nothing and the file stays a complete history.
//
// Exactly once. `peek` returns the unread messages and the offset just past them; `ack` moves the
// cursor there (atomically, never backwards). A consumer that hands messages to a model records the
// delivery, together with `nextOffset`, in its own durable state (the agent's session log) and only
// then acks. After a crash it calls `ack(name, recordedOffset)` before peeking again; ack is
// monotonic and idempotent, so whichever of "recorded" and "acked" happened last, nothing is
// delivered twice and nothing is skipped. The cursor also keeps the ids of the last
// DELIVERED_TAIL acked messages, and peek skips those ids: that guards against lines that appear
// again after the cursor (an inbox truncated or replaced under a live cursor and re-read from the
// start, a line appended twice). It is written in the same atomic write as the offset, so on its own
// it cannot close the window between "delivered" and "acked" — only the consumer's own record can.
//
// Wake-ups are events: in-process sends wake waiters at once through an EventEmitter; sends from
// other processes wake them through one fs.watch on the inbox directory. There is no polling loop.
import { EventEmitter } from 'node:events';
import {
  closeSync,
  type FSWatcher,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  watch,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { MalformedFileError, readJson, writeJsonAtomic } from '../../fs/atomic-file.js';
import type { EventHub } from '../../events/events.js';
import { withFileLock } from './file-lock.js';
import { AGENT_NAME_PATTERN } from '../../vocabulary.js';
import {
  type Bus,
  BusClosedError,
  type Message,
  MESSAGE_TYPES,
  type MessageType,
  newMessageId,
  type OutgoingMessage,
  type PeekResult,
  UnknownRecipientError,
} from '../bus.js';

/** The content of `<name>.cursor`. */
export interface InboxCursor {
  /** Bytes of `<name>.jsonl` already delivered; always at a line boundary. */
  offset: number;
  /** Lines before `offset` (for warnings that name a line). */
  line: number;
  /** Ids of the most recently acked messages, oldest first. */
  delivered_ids_tail: string[];
}

export interface FileBusOptions {
  /** The names a message may be sent to (the roster's members). */
  knownNames: () => string[];
  events?: EventHub;
}

/** How many acked ids the cursor remembers. */
export const DELIVERED_TAIL = 1000;
/** fs.watch fires once per write; waiters are woken at most this often per burst (ms). */
const WATCH_DEBOUNCE_MS = 3;
/** Only when fs.watch itself fails (e.g. out of inotify watches): how often waiters re-check. */
const FALLBACK_POLL_MS = 250;



const NEWLINE = 0x0a;
// In-process wake-ups are shared by every bus over the same directory in this process.
const localWakeups = new EventEmitter();
localWakeups.setMaxListeners(0);
// Cursor updates (ack, take) of one inbox are serialized within the process.
const cursorQueues = new Map<string, Promise<unknown>>();


interface Waiter {
  fail(error: Error): void;
}

export class FileBus implements Bus {
  readonly inboxDir: string;
  #knownNames: () => string[];
  #events: EventHub | undefined;
  #watcher: FSWatcher | undefined;
  #fallbackTimer: NodeJS.Timeout | undefined;
  #debounceTimer: NodeJS.Timeout | undefined;
  #pendingWakes = new Set<string>();
  #waiters = new Set<Waiter>();
  #warned = new Set<string>();
  #closed = false;

  constructor(inboxDir: string, opts: FileBusOptions) {
    this.inboxDir = path.resolve(inboxDir);
    this.#knownNames = opts.knownNames;
    this.#events = opts.events;
    mkdirSync(this.inboxDir, { recursive: true });
  }

  inboxFile(name: string): string {
    return path.join(this.inboxDir, `${name}.jsonl`);
  }

  cursorFile(name: string): string {
    return path.join(this.inboxDir, `${name}.cursor`);
  }

  // ---- sending ---------------------------------------------------------------------------

  /** Appends one message to the recipient's inbox. Refuses unknown recipients. */
  async send(input: OutgoingMessage): Promise<Message> {
    const { id: _id, ts: _ts, type = 'message', from, to, content, ...extra } = input;
    const known = this.#knownNames();
    if (typeof to !== 'string' || !known.includes(to)) throw new UnknownRecipientError(String(to), known);
    assertName(to);
    if (!MESSAGE_TYPES.includes(type)) {
      throw new Error(`unknown message type '${String(type)}'; use one of ${MESSAGE_TYPES.join(', ')}`);
    }
    if (typeof from !== 'string' || from === '') throw new Error('a message needs a sender (from)');
    if (typeof content !== 'string') throw new Error('a message needs text content');

    const message: Message = { id: newMessageId(), type, from, to, content, ts: new Date().toISOString() };
    for (const [key, value] of Object.entries(extra)) if (value !== undefined) message[key] = value;
    const line = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
    const file = this.inboxFile(to);
    await withFileLock(file, () => appendLine(file, line));

    localWakeups.emit(this.#wakeKey(to));
    this.#events?.emit(from, 'message_sent', {
      id: message.id,
      from,
      to,
      message_type: type,
      content,
      ...(message.request_id !== undefined ? { request_id: message.request_id } : {}),
    });
    return message;
  }

  /** Sends a `broadcast` copy to every known name except the sender and `exclude`. */
  async broadcast(from: string, content: string, exclude: Iterable<string> = []): Promise<Message[]> {
    const skip = new Set(exclude);
    skip.add(from);
    const sent: Message[] = [];
    for (const to of this.#knownNames()) {
      if (skip.has(to)) continue;
      sent.push(await this.send({ type: 'broadcast', from, to, content }));
    }
    return sent;
  }

  // ---- reading ---------------------------------------------------------------------------

  /**
   * The unread messages of `name`, without marking them read. `limit` caps how many are returned
   * (nextOffset then stops just after the last one), for delivering a long backlog in pieces.
   */
  async peek(name: string, options: { limit?: number } = {}): Promise<PeekResult> {
    assertName(name);
    return this.#scan(name, this.#readCursor(name), options.limit);
  }

  /**
   * Marks everything before `nextOffset` (from `peek`) as delivered. Monotonic: an offset at or
   * before the current cursor changes nothing, so re-acking a recorded offset after a crash is safe.
   */
  async ack(name: string, nextOffset: number): Promise<void> {
    assertName(name);
    if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
      throw new Error(`cannot ack ${name}'s inbox to offset ${String(nextOffset)}: not a byte offset`);
    }
    await this.#withCursor(name, () => this.#ackNow(name, nextOffset));
  }

  /** peek + ack, for callers that deliver at once. Concurrent takes never return the same message. */
  async take(name: string): Promise<Message[]> {
    assertName(name);
    return this.#withCursor(name, async () => {
      const result = this.#scan(name, this.#readCursor(name));
      await this.#ackNow(name, result.nextOffset);
      return result.messages;
    });
  }

  async history(name: string): Promise<Message[]> {
    assertName(name);
    const region = readRegion(this.inboxFile(name), () => 0);
    if (!region) return [];
    const text = region.bytes.toString('utf8');
    // A last line without its newline is still being written (or was torn by a crash): not yet history.
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    return complete.split('\n').flatMap((line) => {
      if (!line.trim()) return [];
      const parsed = parseMessage(line);
      return typeof parsed === 'string' ? [] : [parsed];
    });
  }

  async unreadCount(name: string): Promise<number> {
    return (await this.peek(name)).messages.length;
  }

  /** The cursor as stored (offset 0 when the agent has never acked). */
  cursor(name: string): InboxCursor {
    assertName(name);
    return this.#readCursor(name);
  }

  // ---- waiting ---------------------------------------------------------------------------

  /**
   * Resolves as soon as `name` has an unread message (at once if it has one already). Rejects
   * with the signal's reason when aborted, and with BusClosedError when the bus is closed.
   */
  waitForMessage(name: string, signal?: AbortSignal): Promise<void> {
    assertName(name);
    if (this.#closed) return Promise.reject(new BusClosedError());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const key = this.#wakeKey(name);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (error?: Error): void => {
        if (done) return;
        done = true;
        localWakeups.off(key, check);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(waiter);
        this.#refWatcher();
        if (error) reject(error);
        else resolve();
      };
      const check = (): void => {
        if (done) return;
        try {
          if (this.#scan(name, this.#readCursor(name)).messages.length > 0) finish();
        } catch (error) {
          finish(error as Error);
        }
      };
      const onAbort = (): void => finish(abortReason(signal!));
      const waiter: Waiter = { fail: finish };

      // Listen first, then look: a message that lands in between still wakes us.
      this.#waiters.add(waiter);
      this.#startWatching();
      localWakeups.on(key, check);
      signal?.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }

  /** Stops the watcher; pending waitForMessage calls reject with BusClosedError. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#fallbackTimer) clearInterval(this.#fallbackTimer);
    if (this.#debounceTimer) clearTimeout(this.#debounceTimer);
    this.#fallbackTimer = this.#debounceTimer = undefined;
    for (const waiter of [...this.#waiters]) waiter.fail(new BusClosedError());
  }

  // ---- internals -------------------------------------------------------------------------

  #wakeKey(name: string): string {
    return `${this.inboxDir}\0${name}`;
  }

  #startWatching(): void {
    if (this.#watcher || this.#fallbackTimer) {
      this.#refWatcher();
      return;
    }
    try {
      this.#watcher = watch(this.inboxDir, (_event, filename) => this.#onDirectoryEvent(filename));
      this.#watcher.on('error', (error) => this.#fallBackToPolling(error));
    } catch (error) {
      this.#fallBackToPolling(error as Error);
    }
    this.#refWatcher();
  }

  /** The watcher keeps the process alive only while someone is waiting. */
  #refWatcher(): void {
    const active = this.#waiters.size > 0;
    for (const handle of [this.#watcher, this.#fallbackTimer]) {
      if (!handle) continue;
      if (active) handle.ref();
      else handle.unref();
    }
  }

  #onDirectoryEvent(filename: string | Buffer | null): void {
    if (filename === null) this.#pendingWakes.add('*');
    else {
      const name = filename.toString();
      if (!name.endsWith('.jsonl')) return; // locks, cursors, temp files
      this.#pendingWakes.add(name.slice(0, -'.jsonl'.length));
    }
    this.#debounceTimer ??= setTimeout(() => {
      this.#debounceTimer = undefined;
      const names = [...this.#pendingWakes];
      this.#pendingWakes.clear();
      if (names.includes('*')) this.#wakeAll();
      else for (const name of names) localWakeups.emit(this.#wakeKey(name));
    }, WATCH_DEBOUNCE_MS);
  }

  #wakeAll(): void {
    const prefix = `${this.inboxDir}\0`;
    for (const key of localWakeups.eventNames()) {
      if (typeof key === 'string' && key.startsWith(prefix)) localWakeups.emit(key);
    }
  }

  #fallBackToPolling(error: Error): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#closed || this.#fallbackTimer) return;
    this.#events?.emit('bus', 'warning', {
      message: `cannot watch ${this.inboxDir} (${error.message}); checking inboxes every ${FALLBACK_POLL_MS} ms instead`,
      inbox: this.inboxDir,
    });
    this.#fallbackTimer = setInterval(() => this.#wakeAll(), FALLBACK_POLL_MS);
    this.#refWatcher();
  }

  #withCursor<T>(name: string, work: () => Promise<T>): Promise<T> {
    const key = this.cursorFile(name);
    const previous = cursorQueues.get(key) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(work);
    const tail = run.catch(() => undefined);
    cursorQueues.set(key, tail);
    void tail.then(() => {
      if (cursorQueues.get(key) === tail) cursorQueues.delete(key);
    });
    return run;
  }

  #readCursor(name: string): InboxCursor {
    const file = this.cursorFile(name);
    const stored = readJson<Partial<InboxCursor>>(file);
    if (stored === undefined) return { offset: 0, line: 0, delivered_ids_tail: [] };
    const { offset, line = 0, delivered_ids_tail: tail = [] } = stored ?? {};
    if (
      !Number.isSafeInteger(offset) ||
      (offset as number) < 0 ||
      !Number.isSafeInteger(line) ||
      !Array.isArray(tail) ||
      !tail.every((id) => typeof id === 'string')
    ) {
      throw new MalformedFileError(file, 'expected {"offset": <bytes>, "line"?: <n>, "delivered_ids_tail"?: [ids]}');
    }
    return { offset: offset as number, line, delivered_ids_tail: tail };
  }

  /** The cursor to read from: the stored one, or the start when the inbox shrank under it. */
  #effectiveCursor(name: string, cursor: InboxCursor, size: number): InboxCursor {
    if (cursor.offset <= size) return cursor;
    this.#warnOnce(`${name}:shrunk:${cursor.offset}:${size}`, name, {
      message:
        `${this.inboxFile(name)} is shorter (${size} bytes) than its cursor (${cursor.offset}); ` +
        `re-reading it from the start, skipping the ${cursor.delivered_ids_tail.length} most recently delivered ids`,
      inbox: this.inboxFile(name),
    });
    return { offset: 0, line: 0, delivered_ids_tail: cursor.delivered_ids_tail };
  }

  #scan(name: string, stored: InboxCursor, limit = Number.POSITIVE_INFINITY): PeekResult {
    const file = this.inboxFile(name);
    const region = readRegion(file, (size) => this.#effectiveCursor(name, stored, size).offset);
    if (!region) return { messages: [], nextOffset: stored.offset };
    const cursor = this.#effectiveCursor(name, stored, region.size);
    const { bytes, start } = region;
    const end = bytes.lastIndexOf(NEWLINE);
    // Everything after the last newline is a line still being written: leave it for later.
    if (end < 0) return { messages: [], nextOffset: start };
    const delivered = new Set(cursor.delivered_ids_tail);
    const messages: Message[] = [];
    let position = 0;
    let line = cursor.line;
    while (position <= end && messages.length < limit) {
      const newline = bytes.indexOf(NEWLINE, position);
      const lineStart = start + position;
      const text = bytes.toString('utf8', position, newline);
      position = newline + 1;
      line += 1;
      if (text.trim() === '') continue;
      const problem = parseMessage(text);
      if (typeof problem === 'string') {
        this.#warnOnce(`${name}:line:${lineStart}`, name, {
          message: `skipped line ${line} of ${file}: ${problem}`,
          inbox: file,
          line,
          offset: lineStart,
          text: text.length > 200 ? `${text.slice(0, 199)}…` : text,
        });
        continue;
      }
      if (delivered.has(problem.id)) continue;
      messages.push(problem);
    }
    return { messages, nextOffset: start + position };
  }

  async #ackNow(name: string, nextOffset: number): Promise<void> {
    const file = this.inboxFile(name);
    const stored = this.#readCursor(name);
    const region = readRegion(file, (size) => this.#effectiveCursor(name, stored, size).offset, nextOffset);
    const size = region?.size ?? 0;
    if (nextOffset > size) {
      throw new Error(`cannot ack ${name}'s inbox to offset ${nextOffset}: ${file} holds only ${size} bytes`);
    }
    const cursor = this.#effectiveCursor(name, stored, size);
    if (nextOffset <= cursor.offset) {
      if (cursor !== stored) await writeJsonAtomic(this.cursorFile(name), cursor); // the inbox shrank
      return;
    }
    const bytes = region!.bytes;
    if (bytes[bytes.length - 1] !== NEWLINE) {
      throw new Error(`cannot ack ${name}'s inbox to offset ${nextOffset}: not the end of a line`);
    }
    const tail = [...cursor.delivered_ids_tail];
    const seen = new Set(tail);
    let line = cursor.line;
    let position = 0;
    while (position < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, position);
      const parsed = parseMessage(bytes.toString('utf8', position, newline));
      position = newline + 1;
      line += 1;
      if (typeof parsed !== 'string' && !seen.has(parsed.id)) {
        seen.add(parsed.id);
        tail.push(parsed.id);
      }
    }
    const next: InboxCursor = {
      offset: nextOffset,
      line,
      delivered_ids_tail: tail.length > DELIVERED_TAIL ? tail.slice(-DELIVERED_TAIL) : tail,
    };
    await writeJsonAtomic(this.cursorFile(name), next);
  }

  #warnOnce(key: string, agent: string, fields: Record<string, unknown>): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#events?.emit(agent, 'warning', fields);
  }
}

function assertName(name: string): void {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name)) {
    throw new Error(`'${String(name)}' is not an agent name (expected ${AGENT_NAME_PATTERN.source})`);
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'aborted');
  error.name = 'AbortError';
  return error;
}

/** A message, or what is wrong with the line. */
function parseMessage(text: string): Message | string {
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
function readRegion(
  file: string,
  startOf: (size: number) => number,
  end?: number,
): { bytes: Buffer; start: number; size: number } | undefined {
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
function appendLine(file: string, line: Buffer): void {
  const fd = openSync(file, 'a+');
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

