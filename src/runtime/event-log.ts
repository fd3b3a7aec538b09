// Writes every event to `.team/logs/<agent>/session-<iso>.ndjson` (SPEC sections 2 and 7).
// One file per agent per huddle process; secrets are scrubbed from every line before it is written.
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { EventHub, HuddleEvent } from './events.js';

export class EventLog {
  readonly #logsDir: string;
  readonly #sessionStamp: string;
  readonly #secrets: string[];
  readonly #files = new Map<string, string>();
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
    // killed: resume (and a person reading the log) can trust it.
    appendFileSync(this.fileFor(event.agent), `${scrub(JSON.stringify(event), this.#secrets)}\n`);
  }

  close(): void {
    this.#unsubscribe();
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
