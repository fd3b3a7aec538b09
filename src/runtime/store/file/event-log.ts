// Writes every event to `.team/logs/<agent>/session-<iso>.ndjson` (SPEC sections 2 and 7).
// One file per agent per huddle process; secrets are scrubbed from every line before it is written.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EventHub, HuddleEvent } from '../../events/events.js';
import type { EventStore, LoggedEvent } from '../event-store.js';

export class EventLog implements EventStore {
  readonly #logsDir: string;
  readonly #sessionStamp: string;
  readonly #secrets: string[];
  readonly #files = new Map<string, string>();
  /** Open append-only descriptors, one per agent: an event is one write(2), not open, write, close. */
  readonly #fds = new Map<string, number>();
  readonly #unsubscribe: () => void;

  constructor(hub: EventHub, logsDir: string, options: { secrets?: Array<string | undefined> } = {}) {
    this.#logsDir = logsDir;
    this.#sessionStamp = fileStamp(new Date());
    this.#secrets = (options.secrets ?? []).filter((s): s is string => Boolean(s && s.length >= 8));
    this.#unsubscribe = hub.subscribe((event) => this.write(event));
  }

  /** The log file of an agent in this session (created on its first event). */
  fileFor(agent: string): string {
    let file = this.#files.get(agent);
    if (!file) {
      const dir = path.join(this.#logsDir, agent);
      mkdirSync(dir, { recursive: true });
      file = path.join(dir, `session-${this.#sessionStamp}.ndjson`);
      this.#files.set(agent, file);
    }
    return file;
  }

  write(event: HuddleEvent): void {
    // Appending synchronously keeps the log complete up to the last event if the process is
    // killed: resume (and a person reading the log) can trust it. O_APPEND: each line lands whole
    // at the end, as appendFileSync did, without reopening the file for every event.
    let fd = this.#fds.get(event.agent);
    if (fd === undefined) {
      fd = openSync(this.fileFor(event.agent), 'a');
      this.#fds.set(event.agent, fd);
    }
    const line = Buffer.from(`${scrub(JSON.stringify(event), this.#secrets)}\n`);
    for (let written = 0; written < line.length; ) written += writeSync(fd, line, written);
  }

  close(): void {
    this.#unsubscribe();
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
    return listLoggedAgents(this.#logsDir);
  }

  async read(agent: string): Promise<LoggedEvent[]> {
    return readAgentEvents(this.#logsDir, agent);
  }

  async saveRunRecord(record: Record<string, unknown>): Promise<string> {
    mkdirSync(this.#logsDir, { recursive: true });
    const file = path.join(this.#logsDir, `run-${fileStamp(new Date())}.json`);
    await writeFile(file, `${scrub(JSON.stringify(record, null, 2), this.#secrets)}\n`);
    return file;
  }

  async saveTranscript(agent: string, record: Record<string, unknown>): Promise<string> {
    const dir = path.join(this.#logsDir, agent);
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `transcript-${fileStamp(new Date())}.json`);
    await writeFile(file, scrub(JSON.stringify(record, null, 2), this.#secrets));
    return file;
  }
}

/** An ISO timestamp safe in file names on every platform: 2026-11-22T02-04-50-123Z. */
export function fileStamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-');
}

export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/** The session files of an agent, oldest first (the stamp in the name sorts by time). */
export function sessionFiles(logsDir: string, agent: string): string[] {
  const dir = path.join(logsDir, agent);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /^session-.*\.ndjson$/.test(n)).sort().map((n) => path.join(dir, n));
}

/** The agents with a log directory. */
export function listLoggedAgents(logsDir: string): string[] {
  try {
    return readdirSync(logsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
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

