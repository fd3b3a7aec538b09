// What the team has spent, per agent and per task: each `usage` event's cost goes to the task
// its agent owned in progress at the time (none: "unattributed"). Kept in .team/spend.json, so
// /cost still knows after a restart, and shared by every process of the team: each usage is added
// to the file under its lock (read, add, write atomically), never by rewriting a tally held in
// memory, so two processes never lose each other's spend. Reads see the file (re-read when it
// changed) plus this process's usage still on its way to it, so a budget checked right after a
// model call already counts that call.
import { copyFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { MalformedFileError, readJson, writeJsonAtomicSync } from '../../fs/atomic-file.js';
import type { Board } from '../board.js';
import type { EventHub, HuddleEvent } from '../../events/events.js';
import { emptySpend, emptyTally, type SpendFile, type SpendLedger, spendTaskLines, type SpendTally } from '../spend-ledger.js';
import { StoreError, StoreWriteError } from '../store-errors.js';
import { withFileLock } from '../file-lock.js';

interface Usage {
  agent: string;
  cost: number;
  input: number;
  output: number;
  /** The task it is spent on: null for none, undefined while not yet looked up. */
  task?: { id: number; subject: string } | null;
}

export class FileSpendLedger implements SpendLedger {
  readonly file: string;
  readonly #board: Board;
  readonly #hub: EventHub;
  readonly #unsubscribe: () => void;
  /** The file as last read or written. */
  #stored: SpendFile = emptySpend();
  #storedStamp = '';
  #warnedStamp = '';
  /** Usage of this process not in the file yet, oldest first. */
  readonly #pending: Usage[] = [];
  /** Attribution reads the board (async): events are handled one after another, in order. */
  #queue: Promise<void> = Promise.resolve();

  readonly #onFailure: ((error: StoreError) => void) | undefined;

  /** `onFailure`: where a failed write goes (the store's failure); without it, a warning. */
  constructor(options: { teamDir: string; board: Board; hub: EventHub; onFailure?: (error: StoreError) => void }) {
    this.file = path.join(options.teamDir, 'spend.json');
    this.#board = options.board;
    this.#hub = options.hub;
    this.#onFailure = options.onFailure;
    this.#refresh();
    this.#unsubscribe = options.hub.subscribe((event) => this.#onEvent(event));
  }

  /** The tally: the file, plus this process's usage still being written. Do not change it. */
  get data(): SpendFile {
    this.#refresh();
    if (this.#pending.length === 0) return this.#stored;
    const view = structuredClone(this.#stored);
    for (const usage of this.#pending) apply(view, usage);
    return view;
  }

  /** Resolves once every usage event seen so far is tallied and written. */
  flush(): Promise<void> {
    return this.#queue;
  }

  close(): Promise<void> {
    this.#unsubscribe();
    return this.flush();
  }

  /** Lines for /cost: per task (most expensive first), then what no task owned. */
  taskLines(): string[] {
    return spendTaskLines(this.data);
  }

  /** Re-reads the file when it changed since we last saw it; an unreadable one is reported once and the last good tally kept. */
  #refresh(): void {
    const stamp = stampOf(this.file);
    if (stamp === this.#storedStamp) return;
    try {
      this.#stored = stamp ? readLedger(this.file) : emptySpend();
      this.#storedStamp = stamp;
    } catch (error) {
      if (this.#warnedStamp === stamp) return;
      this.#warnedStamp = stamp;
      this.#hub.emit('huddle', 'warning', {
        message: `${path.basename(this.file)} is unreadable (${(error as Error).message}); it is kept aside and the tally starts again on the next model call`,
      });
    }
  }

  #onEvent(event: HuddleEvent): void {
    if (event.type !== 'usage') return;
    const usage: Usage = { agent: event.agent, cost: num(event.cost_usd), input: num(event.input_tokens), output: num(event.output_tokens) };
    this.#pending.push(usage);
    this.#queue = this.#queue.then(async () => {
      const tasks = await this.#board.list().catch(() => []);
      const task = tasks.find((t) => t.owner === usage.agent && t.status === 'in_progress');
      usage.task = task ? { id: task.id, subject: task.subject } : null;
      try {
        await withFileLock(this.file, () => {
          const current = this.#readForUpdate();
          apply(current, usage);
          // Synchronous, so that no read can see the new file and the usage still pending (counted twice).
          try {
            writeJsonAtomicSync(this.file, current);
          } catch (error) {
            throw StoreWriteError.from(error, this.file);
          }
          this.#stored = current;
          this.#storedStamp = stampOf(this.file);
          this.#pending.splice(this.#pending.indexOf(usage), 1);
        });
      } catch (error) {
        if (this.#onFailure && error instanceof StoreError) this.#onFailure(error);
        else this.#hub.emit('huddle', 'warning', { message: `could not write ${path.basename(this.file)}: ${(error as Error).message}` });
      }
    });
  }

  /** The file as it is now (under the lock); an unreadable one is kept aside and the tally starts from zero. */
  #readForUpdate(): SpendFile {
    try {
      return readLedger(this.file);
    } catch (error) {
      // Keep the unreadable file for a person to look at; the tally starts again.
      const kept = `${this.file}.bad-${Date.now()}`;
      try {
        copyFileSync(this.file, kept);
      } catch {
        // Nothing more to keep.
      }
      this.#hub.emit('huddle', 'warning', {
        message: `${path.basename(this.file)} was unreadable (${(error as Error).message}); kept as ${path.basename(kept)}, spend per task starts from zero`,
      });
      return emptySpend();
    }
  }
}

function readLedger(file: string): SpendFile {
  const data = readJson<SpendFile>(file);
  if (data === undefined) return emptySpend();
  if (data && typeof data === 'object' && data.agents && data.tasks && data.unattributed) return data;
  throw new MalformedFileError(file, 'not a spend ledger');
}

function apply(data: SpendFile, usage: Usage): void {
  add((data.agents[usage.agent] ??= emptyTally()), usage);
  if (usage.task === undefined) return; // attributed when it is written
  if (usage.task) {
    const entry = (data.tasks[String(usage.task.id)] ??= { ...emptyTally(), subject: usage.task.subject, agents: {} });
    entry.subject = usage.task.subject;
    add(entry, usage);
    entry.agents[usage.agent] = (entry.agents[usage.agent] ?? 0) + usage.cost;
  } else {
    add(data.unattributed, usage);
  }
}

function stampOf(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return '';
  }
}

function num(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function add(tally: SpendTally, usage: Usage): void {
  tally.cost_usd += usage.cost;
  tally.model_calls += 1;
  tally.input_tokens += usage.input;
  tally.output_tokens += usage.output;
}
