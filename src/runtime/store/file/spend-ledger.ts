// What the team has spent, per agent and per task: each `usage` event's cost goes to the task
// its agent owned in progress at the time (none: "unattributed"). Kept in .team/spend.json,
// written atomically after each change, so /cost still knows after a restart.
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { MalformedFileError, readJson, writeJsonAtomic } from '../../fs/atomic-file.js';
import type { Board } from '../board.js';
import type { EventHub, HuddleEvent } from '../../events/events.js';
import { emptySpend, emptyTally, type SpendFile, type SpendLedger, type SpendTally } from '../spend-ledger.js';

export class FileSpendLedger implements SpendLedger {
  readonly file: string;
  readonly #board: Board;
  readonly #hub: EventHub;
  readonly #unsubscribe: () => void;
  #data: SpendFile;
  /** Attribution reads the board (async): events are handled one after another, in order. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: { teamDir: string; board: Board; hub: EventHub }) {
    this.file = path.join(options.teamDir, 'spend.json');
    this.#board = options.board;
    this.#hub = options.hub;
    this.#data = this.#load();
    this.#unsubscribe = options.hub.subscribe((event) => this.#onEvent(event));
  }

  get data(): SpendFile {
    return this.#data;
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
    const tasks = Object.entries(this.#data.tasks).sort(([, a], [, b]) => b.cost_usd - a.cost_usd);
    const lines = tasks.map(([id, task]) => {
      const who = Object.entries(task.agents).map(([name, cost]) => `${name} $${cost.toFixed(4)}`).join(', ');
      return `#${id} ${task.subject}: $${task.cost_usd.toFixed(4)} (${task.model_calls} calls${who ? `; ${who}` : ''})`;
    });
    const none = this.#data.unattributed;
    if (none.model_calls > 0) lines.push(`no task: $${none.cost_usd.toFixed(4)} (${none.model_calls} calls)`);
    return lines;
  }

  #load(): SpendFile {
    if (!existsSync(this.file)) return emptySpend();
    try {
      const data = readJson<SpendFile>(this.file);
      if (data && typeof data === 'object' && data.agents && data.tasks && data.unattributed) return data;
      throw new MalformedFileError(this.file, 'not a spend ledger');
    } catch (error) {
      // Keep the unreadable file for a person to look at; the tally starts again.
      const kept = `${this.file}.bad-${Date.now()}`;
      try {
        copyFileSync(this.file, kept);
      } catch {
        // Nothing more to keep.
      }
      this.#hub.emit('huddle', 'warning', { message: `${path.basename(this.file)} was unreadable (${(error as Error).message}); kept as ${path.basename(kept)}, spend per task starts from zero` });
      return emptySpend();
    }
  }

  #onEvent(event: HuddleEvent): void {
    if (event.type !== 'usage') return;
    const agent = event.agent;
    const cost = num(event.cost_usd);
    const input = num(event.input_tokens);
    const output = num(event.output_tokens);
    this.#queue = this.#queue.then(async () => {
      const tasks = await this.#board.list().catch(() => []);
      const task = tasks.find((t) => t.owner === agent && t.status === 'in_progress');
      add((this.#data.agents[agent] ??= emptyTally()), cost, input, output);
      if (task) {
        const entry = (this.#data.tasks[String(task.id)] ??= { ...emptyTally(), subject: task.subject, agents: {} });
        entry.subject = task.subject;
        add(entry, cost, input, output);
        entry.agents[agent] = (entry.agents[agent] ?? 0) + cost;
      } else {
        add(this.#data.unattributed, cost, input, output);
      }
      await writeJsonAtomic(this.file, this.#data).catch((error: Error) => {
        this.#hub.emit('huddle', 'warning', { message: `could not write ${path.basename(this.file)}: ${error.message}` });
      });
    });
  }
}

function num(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function add(tally: SpendTally, cost: number, input: number, output: number): void {
  tally.cost_usd += cost;
  tally.model_calls += 1;
  tally.input_tokens += input;
  tally.output_tokens += output;
}
