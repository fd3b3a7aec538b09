// Writes every event to `.team/logs/<agent>/session-<iso>.ndjson` (docs/contract.md#event-log).
// One file per agent per huddle process; secrets are scrubbed from every line before it is written.
// A streamed response is thousands of text_delta events: an agent's deltas are joined into one line
// (their texts, the first one's time), written with its next other event or within DELTA_FLUSH_MS,
// as the PostgreSQL store stores them; every reader joins deltas anyway. All else is written at once.
// A line that cannot be written (a full disk, a workspace gone read-only) is the end of the run's
// record: it is reported once, as a clear error through `onFailure`, never as a stack.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../fs/atomic-file.js';
import type { EventHub, HuddleEvent } from '../../events/events.js';
import type { EventStore, LoggedEvent } from '../event-store.js';
import { StoreError, StoreWriteError } from '../store-errors.js';
import { scrub } from '../../secrets.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../fs/private-modes.js';

/** The longest an agent's streamed text waits to be written: what a kill can take from the log (never a turn's own text event). */
const DELTA_FLUSH_MS = 50;

export interface EventLogOptions {
  secrets?: Array<string | undefined>;
  /** Transcript locations are given relative to this directory (the workspace root). */
  root?: string;
  /** Called once, when an event could not be recorded. */
  onFailure?: (error: StoreError) => void;
}

export class EventLog implements EventStore {
  readonly #logsDir: string;
  readonly #root: string;
  readonly #sessionStamp: string;
  readonly #secrets: string[];
  readonly #files = new Map<string, string>();
  /** Open append-only descriptors, one per agent: an event is one write(2), not open, write, close. */
  readonly #fds = new Map<string, number>();
  /** Per agent, its text_delta not yet written, that its next deltas join. */
  readonly #deltas = new Map<string, HuddleEvent & { text: string }>();
  #deltaTimer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;
  readonly #onFailure: ((error: StoreError) => void) | undefined;
  #failed = false;

  constructor(hub: EventHub, logsDir: string, options: EventLogOptions = {}) {
    this.#logsDir = logsDir;
    this.#root = options.root ?? path.dirname(path.dirname(logsDir));
    this.#sessionStamp = fileStamp(new Date());
    this.#secrets = (options.secrets ?? []).filter((s): s is string => Boolean(s && s.length >= 8));
    this.#onFailure = options.onFailure;
    this.#unsubscribe = hub.subscribe((event) => this.#record(event));
  }

  /** The log file of an agent in this session (created on its first event). */
  fileFor(agent: string): string {
    let file = this.#files.get(agent);
    if (!file) {
      const dir = path.join(this.#logsDir, agent);
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      file = path.join(dir, `session-${this.#sessionStamp}.ndjson`);
      this.#files.set(agent, file);
    }
    return file;
  }

  write(event: HuddleEvent): void {
    if (event.type === 'text_delta' && typeof event.text === 'string') {
      const held = this.#deltas.get(event.agent);
      // One of the agent's subagents streaming beside another: each one's text stays its own.
      if (held && held.subagent === event.subagent) held.text += event.text;
      else {
        if (held) this.#append(held);
        this.#deltas.set(event.agent, { ...event, text: event.text });
      }
      this.#deltaTimer ??= setTimeout(() => this.#flushDeltas(), DELTA_FLUSH_MS).unref();
      return;
    }
    const held = this.#deltas.get(event.agent);
    if (held) {
      this.#deltas.delete(event.agent);
      this.#append(held);
    }
    this.#append(event);
  }

  /** Writes every agent's held deltas (on the timer, before a read, at close). */
  #flushDeltas(): void {
    if (this.#deltaTimer) clearTimeout(this.#deltaTimer);
    this.#deltaTimer = undefined;
    const held = [...this.#deltas.values()];
    this.#deltas.clear();
    for (const event of held) this.#guarded(event, () => this.#append(event));
  }

  #append(event: HuddleEvent): void {
    // Appending synchronously keeps the log complete up to the last event if the process is
    // killed: resume (and a person reading the log) can trust it. O_APPEND: each line lands whole
    // at the end, as appendFileSync did, without reopening the file for every event.
    let fd = this.#fds.get(event.agent);
    if (fd === undefined) {
      fd = openSync(this.fileFor(event.agent), 'a', PRIVATE_FILE_MODE);
      this.#fds.set(event.agent, fd);
    }
    const line = Buffer.from(`${scrub(JSON.stringify(event), this.#secrets)}\n`);
    for (let written = 0; written < line.length;) written += writeSync(fd, line, written);
  }

  #record(event: HuddleEvent): void {
    this.#guarded(event, () => this.write(event));
  }

  #guarded(event: HuddleEvent, write: () => void): void {
    if (this.#failed) return;
    try {
      write();
    } catch (error) {
      this.#failed = true;
      const where = this.#files.get(event.agent) ?? path.join(this.#logsDir, event.agent);
      this.#onFailure?.(StoreWriteError.from(error, where));
    }
  }

  close(): void {
    this.#unsubscribe();
    this.#flushDeltas();
    for (const fd of this.#fds.values()) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    this.#fds.clear();
  }

  async agents(): Promise<string[]> {
    this.#flushDeltas(); // an agent that has only streamed so far has its directory then
    return listLoggedAgents(this.#logsDir);
  }

  async read(agent: string): Promise<LoggedEvent[]> {
    this.#flushDeltas();
    return readAgentEvents(this.#logsDir, agent);
  }

  async saveRunRecord(record: Record<string, unknown>): Promise<string> {
    mkdirSync(this.#logsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const file = path.join(this.#logsDir, `run-${fileStamp(new Date())}.json`);
    await writeJsonAtomic(file, JSON.parse(scrub(JSON.stringify(record), this.#secrets)));
    return file;
  }

  /** Writes `.team/logs/<agent>/transcript-<stamp>.json` atomically; returns that path, relative to the workspace. */
  async saveTranscript(agent: string, record: Record<string, unknown>): Promise<string> {
    const dir = path.join(this.#logsDir, agent);
    const file = path.join(dir, `transcript-${fileStamp(new Date())}.json`);
    try {
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      // Scrubbed as text (a secret may sit anywhere), then written as that JSON.
      await writeJsonAtomic(file, JSON.parse(scrub(JSON.stringify(record), this.#secrets)));
    } catch (error) {
      throw StoreWriteError.from(error, path.relative(this.#root, file));
    }
    return path.relative(this.#root, file);
  }

  async readTranscript(location: string): Promise<Record<string, unknown> | undefined> {
    const file = path.resolve(this.#root, location);
    // Only transcripts of this team's logs, whatever the caller passes.
    if (!file.startsWith(this.#logsDir + path.sep) || !/^transcript-.*\.json$/.test(path.basename(file))) return undefined;
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
}

/** An ISO timestamp safe in file names on every platform: 2026-11-22T02-04-50-123Z. */
export function fileStamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-');
}

// Redaction (the key, and its base64 and url-encoded forms) lives in one place for every writer.
export { scrub } from '../../secrets.js';

/** The session files of an agent, oldest first (the stamp in the name sorts by time). */
export function sessionFiles(logsDir: string, agent: string): string[] {
  const dir = path.join(logsDir, agent);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^session-.*\.ndjson$/.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

/** The agents with a log directory. */
export function listLoggedAgents(logsDir: string): string[] {
  try {
    return readdirSync(logsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

/** Every event of an agent's session files, in order. A line cut by the crash (the last one) is skipped. */
export function readAgentEvents(logsDir: string, agent: string): LoggedEvent[] {
  const events: LoggedEvent[] = [];
  for (const file of sessionFiles(logsDir, agent)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const event = JSON.parse(line) as LoggedEvent;
        if (event && typeof event.type === 'string') events.push(event);
      } catch {
        // A partial last line of a killed process: the event never happened as far as resume goes.
      }
    }
  }
  return events;
}
