// Input history with ↑/↓, persisted per workspace in .team/input-history.json so that it
// survives restarts (and is not archived with a team: it belongs to the person).
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomicSync } from '../../runtime/fs/atomic-file.js';
import { PRIVATE_DIR_MODE } from '../../runtime/fs/private-modes.js';

const LIMIT = 500;

export class InputHistory {
  readonly #file: string;
  #entries: string[];
  /** Position while browsing: entries.length means "the draft". */
  #position: number;
  #draft = '';

  constructor(file: string) {
    this.#file = file;
    this.#entries = load(file);
    this.#position = this.#entries.length;
  }

  static forTeamDir(teamDir: string): InputHistory {
    return new InputHistory(path.join(teamDir, 'input-history.json'));
  }

  get entries(): readonly string[] {
    return this.#entries;
  }

  add(entry: string): void {
    if (!entry.trim()) return;
    if (this.#entries.at(-1) !== entry) this.#entries.push(entry);
    if (this.#entries.length > LIMIT) this.#entries = this.#entries.slice(-LIMIT);
    this.#position = this.#entries.length;
    this.#draft = '';
    try {
      mkdirSync(path.dirname(this.#file), { recursive: true, mode: PRIVATE_DIR_MODE });
      writeJsonAtomicSync(this.#file, this.#entries);
    } catch {
      // History is a convenience; failing to save it must not disturb the person.
    }
  }

  /** The entry before the current one; `current` is kept as the draft when leaving it. */
  previous(current: string): string | undefined {
    if (this.#position === 0) return undefined;
    if (this.#position === this.#entries.length) this.#draft = current;
    this.#position -= 1;
    return this.#entries[this.#position];
  }

  next(): string | undefined {
    if (this.#position >= this.#entries.length) return undefined;
    this.#position += 1;
    return this.#position === this.#entries.length ? this.#draft : this.#entries[this.#position];
  }
}

function load(file: string): string[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(parsed) ? parsed.filter((e): e is string => typeof e === 'string').slice(-LIMIT) : [];
  } catch {
    return [];
  }
}
