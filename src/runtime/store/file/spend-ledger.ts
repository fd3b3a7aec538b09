// What the team has spent, per agent and per task: each `usage` event's cost goes to the task
// its agent owned in progress at the time (none: "unattributed"). Kept in .team/spend.jsonl, one
// line per model call appended with O_APPEND (a line is far below the size the kernel writes in
// one piece), so /cost still knows after a restart, every process of the team adds to the same
// file, and a call costs one append: no lock, no rewrite of the whole tally, no board scan.
// Reads fold only the bytes appended since the last read; a process's own line, when the file ends
// with it right after what was read, is tallied as written, not read back. A spend.json left by an older huddle is
// the starting tally, read once and never written again.
//
// Which task an agent owns comes from the `task` events of the hub (claims, completions); an
// agent seen for the first time is looked up on the board once. A claim made by another process
// reaches this one's hub only through the board, so that first lookup is what it relies on there.
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { MalformedFileError, readJson } from '../../fs/atomic-file.js';
import type { Board } from '../board.js';
import type { Task } from '../board/task.js';
import type { EventHub, HuddleEvent } from '../../events/events.js';
import { emptySpend, emptyTally, type SpendFile, type SpendLedger, spendTaskLines, type SpendTally } from '../spend-ledger.js';
import { StoreError, StoreWriteError } from '../store-errors.js';

/** One line of spend.jsonl. */
interface Usage {
  agent: string;
  cost: number;
  input: number;
  output: number;
  /** The task it is spent on: null for none, undefined while not yet looked up. */
  task?: { id: number; subject: string } | null;
}

type Owned = { id: number; subject: string } | null;

export class FileSpendLedger implements SpendLedger {
  readonly file: string;
  /** The tally of an older huddle (spend.json), the base the appended lines add to. */
  readonly #legacyFile: string;
  readonly #board: Board;
  readonly #hub: EventHub;
  readonly #unsubscribe: () => void;
  /** The tally as far as the file has been read. */
  #stored: SpendFile = emptySpend();
  /** Bytes of spend.jsonl folded into #stored; a partial last line waits for its end. */
  #offset = 0;
  #warned = false;
  /** Usage whose task is still being looked up (an agent's first call), oldest first. */
  readonly #pending: Usage[] = [];
  /** The task each agent owns in progress, as far as this process knows; absent: not looked up yet. */
  readonly #owned = new Map<string, Owned>();
  /** Board lookups run one after another, so usage is written in the order it came. */
  #queue: Promise<void> = Promise.resolve();
  readonly #onFailure: ((error: StoreError) => void) | undefined;

  /** `onFailure`: where a failed write goes (the store's failure); without it, a warning. */
  constructor(options: { teamDir: string; board: Board; hub: EventHub; onFailure?: (error: StoreError) => void }) {
    this.file = path.join(options.teamDir, 'spend.jsonl');
    this.#legacyFile = path.join(options.teamDir, 'spend.json');
    this.#board = options.board;
    this.#hub = options.hub;
    this.#onFailure = options.onFailure;
    this.#stored = this.#readLegacy();
    this.#refresh();
    this.#unsubscribe = options.hub.subscribe((event) => this.#onEvent(event));
  }

  /** The tally: the file, plus this process's usage still waiting for its task. Do not change it. */
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

  #onEvent(event: HuddleEvent): void {
    if (event.type === 'task') return this.#track(event.task);
    if (event.type !== 'usage') return;
    const usage: Usage = { agent: event.agent, cost: num(event.cost_usd), input: num(event.input_tokens), output: num(event.output_tokens) };
    const owned = this.#owned.get(usage.agent);
    if (owned !== undefined && this.#pending.length === 0) {
      this.#write({ ...usage, task: owned });
      return;
    }
    this.#pending.push(usage);
    this.#queue = this.#queue.then(async () => {
      if (!this.#owned.has(usage.agent)) await this.#lookUp(usage.agent);
      usage.task = this.#owned.get(usage.agent) ?? null;
      this.#pending.splice(this.#pending.indexOf(usage), 1);
      this.#write(usage);
    });
  }

  /** A task changed: who owns what in progress follows. */
  #track(task: Task): void {
    for (const [agent, owned] of this.#owned) if (owned?.id === task.id) this.#owned.set(agent, null);
    if (task.status === 'in_progress' && task.owner) this.#owned.set(task.owner, { id: task.id, subject: task.subject });
  }

  /** One board scan for an agent not seen yet (it seeds every owner it finds). */
  async #lookUp(agent: string): Promise<void> {
    // Unreadable board: the usage counts as unattributed rather than not at all.
    const tasks = await this.#board.list().catch(() => []);
    for (const task of tasks) {
      if (task.status === 'in_progress' && task.owner && !this.#owned.has(task.owner)) this.#owned.set(task.owner, { id: task.id, subject: task.subject });
    }
    if (!this.#owned.has(agent)) this.#owned.set(agent, null);
  }

  #write(usage: Usage): void {
    const line = `${JSON.stringify(usage)}\n`;
    let size: number;
    try {
      const fd = openSync(this.file, 'a', 0o600); // .team/ is the person's alone
      try {
        writeSync(fd, line);
        size = fstatSync(fd).size;
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      const failure = StoreWriteError.from(error, this.file);
      if (this.#onFailure) this.#onFailure(failure);
      else this.#hub.emit('huddle', 'warning', { message: `could not write ${path.basename(this.file)}: ${failure.message}` });
      return;
    }
    // The file ends with our line right after what was read so far: it is tallied as written, not read back.
    if (size === this.#offset + Buffer.byteLength(line)) {
      apply(this.#stored, { ...usage, task: usage.task ?? null });
      this.#offset = size;
      return;
    }
    // Our line (and any other process's before it) is read back: one order for every reader.
    this.#refresh();
  }

  /** Folds the lines appended since the last read; a file that shrank (replaced) is read again from its start. */
  #refresh(): void {
    // Most reads (a budget check before every model call) find nothing new: one stat says so, without an open.
    let size: number;
    try {
      size = statSync(this.file).size;
    } catch {
      return; // not written yet
    }
    if (size === this.#offset) return;
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return; // gone since
    }
    try {
      size = fstatSync(fd).size;
      if (size < this.#offset) {
        this.#stored = this.#readLegacy();
        this.#offset = 0;
      }
      if (size === this.#offset) return;
      const bytes = Buffer.alloc(size - this.#offset);
      readSync(fd, bytes, 0, bytes.length, this.#offset);
      const end = bytes.lastIndexOf(0x0a);
      if (end < 0) return; // a line still being written
      for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) this.#fold(line);
      this.#offset += end + 1;
    } finally {
      closeSync(fd);
    }
  }

  #fold(line: string): void {
    if (!line.trim()) return;
    try {
      const usage = JSON.parse(line) as Usage;
      if (typeof usage.agent !== 'string') throw new Error('no agent');
      apply(this.#stored, { agent: usage.agent, cost: num(usage.cost), input: num(usage.input), output: num(usage.output), task: usage.task ?? null });
    } catch (error) {
      // A bad line is skipped (told once); the rest still counts.
      if (this.#warned) return;
      this.#warned = true;
      this.#hub.emit('huddle', 'warning', { message: `${path.basename(this.file)} has an unreadable line (${(error as Error).message}); it is skipped` });
    }
  }

  /** spend.json of an older huddle, else nothing; an unreadable one is reported and left out. */
  #readLegacy(): SpendFile {
    if (!existsSync(this.#legacyFile)) return emptySpend();
    try {
      const data = readJson<SpendFile>(this.#legacyFile);
      if (data && typeof data === 'object' && data.agents && data.tasks && data.unattributed) return structuredClone(data);
      throw new MalformedFileError(this.#legacyFile, 'not a spend ledger');
    } catch (error) {
      this.#hub.emit('huddle', 'warning', {
        message: `${path.basename(this.#legacyFile)} is unreadable (${(error as Error).message}); spend recorded before this version is left out`,
      });
      return emptySpend();
    }
  }
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
