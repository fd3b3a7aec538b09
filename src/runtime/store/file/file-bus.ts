// The message bus: one append-only JSONL inbox per agent under `.team/inbox/` (docs/contract.md#inbox).
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
// other processes wake them through one watcher on the inbox directory (fs/directory-watcher.ts).
// There is no polling loop unless fs.watch itself fails.
//
// A sender may make the message id itself (newMessageId): a send retried with that id (after a
// crash or a cut connection) finds the message already in the inbox and returns it, appending
// nothing. The ids of each inbox are indexed as its lines are read, so this costs one read of
// what was appended since the last send.
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MalformedFileError } from '../../fs/atomic-file.js';
import { DirectoryWatcher } from '../../fs/directory-watcher.js';
import type { EventHub } from '../../events/events.js';
import { makeDirectory, StoreWriteError } from '../store-errors.js';
import { withFileLock } from '../file-lock.js';
import { appendLine, findById, type InboxCursor, InboxCursorError, NEWLINE, parseMessage, readRegion, writeCursor } from './inbox-files.js';

export { type InboxCursor, InboxCursorError } from './inbox-files.js';
import { AGENT_NAME_PATTERN } from '../../vocabulary.js';
import { type Bus, BusClosedError, type Message, type OutgoingMessage, type PeekResult } from '../bus.js';
import { abortReason, assertAgentName, broadcastTo, composeMessage, messageSentFields } from '../bus-rules.js';

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
  #watcher: DirectoryWatcher | undefined;
  #waiters = new Set<Waiter>();
  #warned = new Set<string>();
  #closed = false;

  constructor(inboxDir: string, opts: FileBusOptions) {
    this.inboxDir = path.resolve(inboxDir);
    this.#knownNames = opts.knownNames;
    this.#events = opts.events;
    makeDirectory(this.inboxDir);
  }

  inboxFile(name: string): string {
    return path.join(this.inboxDir, `${name}.jsonl`);
  }

  cursorFile(name: string): string {
    return path.join(this.inboxDir, `${name}.cursor`);
  }

  // ---- sending ---------------------------------------------------------------------------

  /**
   * Appends one message to the recipient's inbox. Refuses unknown recipients. A message with a
   * caller-made `id` that the inbox already holds is not sent again: the stored one is returned.
   */
  async send(input: OutgoingMessage): Promise<Message> {
    const message = composeMessage(input, this.#knownNames());
    const { id, to } = message;
    const callerId = input.id === undefined ? undefined : id;
    const line = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
    const file = this.inboxFile(to);
    const stored = await withFileLock(file, () => {
      // Only a caller-made id can be there already (ours are new): look for it first.
      const earlier = callerId === undefined ? undefined : findById(file, callerId);
      if (earlier) return earlier;
      try {
        appendLine(file, line);
      } catch (error) {
        throw StoreWriteError.from(error, file);
      }
      return undefined;
    });
    if (stored) return stored; // a retry: delivered (and announced) once already

    localWakeups.emit(this.#wakeKey(to));
    this.#events?.emit(message.from, 'message_sent', messageSentFields(message));
    return message;
  }

  /** Sends a `broadcast` copy to every known name except the sender and `exclude`. */
  async broadcast(from: string, content: string, exclude: Iterable<string> = []): Promise<Message[]> {
    return broadcastTo((message) => this.send(message), this.#knownNames(), from, content, exclude);
  }

  // ---- reading ---------------------------------------------------------------------------

  /**
   * The unread messages of `name`, without marking them read. `limit` caps how many are returned
   * (nextOffset then stops just after the last one), for delivering a long backlog in pieces.
   */
  async peek(name: string, options: { limit?: number } = {}): Promise<PeekResult> {
    assertAgentName(name);
    return this.#scan(name, this.#readCursor(name), options.limit);
  }

  /**
   * Marks everything before `nextOffset` (from `peek`) as delivered. Monotonic: an offset at or
   * before the current cursor changes nothing, so re-acking a recorded offset after a crash is safe.
   */
  async ack(name: string, nextOffset: number): Promise<void> {
    assertAgentName(name);
    if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
      throw new Error(`cannot ack ${name}'s inbox to offset ${String(nextOffset)}: not a byte offset`);
    }
    await this.#withCursor(name, () => this.#ackNow(name, nextOffset));
  }

  /** peek + ack, for callers that deliver at once. Concurrent takes never return the same message. */
  async take(name: string): Promise<Message[]> {
    assertAgentName(name);
    return this.#withCursor(name, async () => {
      const result = this.#scan(name, this.#readCursor(name));
      await this.#ackNow(name, result.nextOffset);
      return result.messages;
    });
  }

  async history(name: string): Promise<Message[]> {
    assertAgentName(name);
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
    assertAgentName(name);
    return this.#readCursor(name);
  }

  // ---- waiting ---------------------------------------------------------------------------

  /**
   * Resolves as soon as `name` has an unread message (at once if it has one already). Rejects
   * with the signal's reason when aborted, and with BusClosedError when the bus is closed.
   */
  waitForMessage(name: string, signal?: AbortSignal): Promise<void> {
    assertAgentName(name);
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
    for (const waiter of [...this.#waiters]) waiter.fail(new BusClosedError());
  }

  /** Checks every cursor of the inbox directory; the first that cannot be read, as an error (none: undefined). */
  brokenCursor(): MalformedFileError | undefined {
    let names: string[];
    try {
      names = readdirSync(this.inboxDir);
    } catch {
      return undefined;
    }
    for (const file of names) {
      const name = file.endsWith('.cursor') ? file.slice(0, -'.cursor'.length) : undefined;
      if (!name || !AGENT_NAME_PATTERN.test(name)) continue;
      try {
        this.#readCursor(name);
      } catch (error) {
        if (error instanceof MalformedFileError) return error;
        throw error;
      }
    }
    return undefined;
  }

  // ---- internals -------------------------------------------------------------------------

  #wakeKey(name: string): string {
    return `${this.inboxDir}\0${name}`;
  }

  #startWatching(): void {
    this.#watcher ??= new DirectoryWatcher(this.inboxDir, {
      accept: (name) => name.endsWith('.jsonl'), // not locks, cursors or temp files
      onChange: (names) => {
        if (!names) this.#wakeAll();
        else for (const name of names) localWakeups.emit(this.#wakeKey(name.slice(0, -'.jsonl'.length)));
      },
      onFallback: (message) => this.#events?.emit('bus', 'warning', { message, inbox: this.inboxDir }),
      debounceMs: WATCH_DEBOUNCE_MS,
      pollMs: FALLBACK_POLL_MS,
    });
    this.#refWatcher();
  }

  /** The watcher keeps the process alive only while someone is waiting. */
  #refWatcher(): void {
    this.#watcher?.keepAlive(this.#waiters.size > 0);
  }

  #wakeAll(): void {
    const prefix = `${this.inboxDir}\0`;
    for (const key of localWakeups.eventNames()) {
      if (typeof key === 'string' && key.startsWith(prefix)) localWakeups.emit(key);
    }
  }

  #withCursor<T>(name: string, work: () => Promise<T>): Promise<T> {
    const key = this.cursorFile(name);
    const previous = cursorQueues.get(key) ?? Promise.resolve();
    // The queue only orders the work: each caller hears its own failure through the promise it holds.
    const run = previous.catch(() => undefined).then(work);
    // The queue only orders the work: each caller hears its own failure through the promise it holds.
    const tail = run.catch(() => undefined);
    cursorQueues.set(key, tail);
    void tail.then(() => {
      if (cursorQueues.get(key) === tail) cursorQueues.delete(key);
    });
    return run;
  }

  #readCursor(name: string): InboxCursor {
    const file = this.cursorFile(name);
    const what = `it marks how far ${name}'s inbox was delivered: fix or remove it (removed, every message of ${name} is delivered again; the inbox itself is intact)`;
    // An agent that was never sent anything has no cursor: asked first, so that answer costs no exception.
    if (!existsSync(file)) return { offset: 0, line: 0, delivered_ids_tail: [] };
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { offset: 0, line: 0, delivered_ids_tail: [] };
      throw error;
    }
    let stored: Partial<InboxCursor> | null;
    try {
      stored = JSON.parse(text) as Partial<InboxCursor> | null;
    } catch (error) {
      throw new InboxCursorError(file, `is not valid JSON (${(error as Error).message})`, what);
    }
    const { offset, line = 0, delivered_ids_tail: tail = [] } = stored ?? {};
    if (
      !Number.isSafeInteger(offset) ||
      (offset as number) < 0 ||
      !Number.isSafeInteger(line) ||
      !Array.isArray(tail) ||
      !tail.every((id) => typeof id === 'string')
    ) {
      throw new InboxCursorError(file, 'is not an inbox cursor (expected {"offset": <bytes>, "line"?: <n>, "delivered_ids_tail"?: [ids]})', what);
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
      if (cursor !== stored) await writeCursor(this.cursorFile(name), cursor); // the inbox shrank
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
    await writeCursor(this.cursorFile(name), next);
  }

  #warnOnce(key: string, agent: string, fields: Record<string, unknown>): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#events?.emit(agent, 'warning', fields);
  }
}
