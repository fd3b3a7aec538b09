// What the team has spent, counted in the database (docs/contract.md#command-line: team-wide budgets): one row
// per agent and task, each usage added in one transaction with the attribution read from the
// board in that same transaction. Reads are synchronous: the tally as last known (every ledger of
// the team in this process shares it) plus this instance's usage still on its way, so a budget
// checked right after a model call already counts it. A write returns its row, and the NOTIFY
// (coalesced, team-channel.ts) carries the rows written: no process re-reads the table per write,
// only on open, on a resync of the listener and on flush(). Rows only grow, and each write adds
// one call to its row, so of two copies of a row the one with more calls is the newer.
// Events mirrored from other hosts (they carry `host`) were counted where they happened.
import type { EventHub, HuddleEvent } from '../../events/events.js';
import { emptySpend, emptyTally, type SpendFile, type SpendLedger, spendTaskLines, type SpendTally } from '../spend-ledger.js';
import { StoreError } from '../store-errors.js';
import { type PgContext, write } from './pg-context.js';

interface Usage {
  agent: string;
  cost: number;
  input: number;
  output: number;
}

interface SharedSpend {
  stored: SpendFile;
  /** Every row known, by agent and task: [agent, task, subject, cost, calls, input, output]. */
  rows: Map<string, SpendTuple>;
  reading: Promise<void> | undefined;
  unsubscribe: () => void;
}

type SpendTuple = [string, string, string, number, number, number, number];

interface SpendRow {
  agent: string;
  task: string;
  subject: string;
  cost_usd: number;
  model_calls: string;
  input_tokens: string;
  output_tokens: string;
}

const SHARED_KEY = 'spend';

export class PgSpendLedger implements SpendLedger {
  readonly #ctx: PgContext;
  readonly #shared: SharedSpend;
  readonly #pending: Usage[] = [];
  readonly #unsubscribe: () => void;
  readonly #onFailure: ((error: StoreError) => void) | undefined;
  #queue: Promise<void> = Promise.resolve();

  private constructor(ctx: PgContext, shared: SharedSpend, hub: EventHub, onFailure?: (error: StoreError) => void) {
    this.#ctx = ctx;
    this.#shared = shared;
    this.#onFailure = onFailure;
    this.#unsubscribe = hub.subscribe((event) => this.#onEvent(event));
  }

  static async open(ctx: PgContext, options: { onFailure?: (error: StoreError) => void } = {}): Promise<PgSpendLedger> {
    let shared = ctx.channel.shared.get(SHARED_KEY) as SharedSpend | undefined;
    if (!shared) {
      const state: SharedSpend = { stored: emptySpend(), rows: new Map(), reading: undefined, unsubscribe: () => undefined };
      ctx.channel.shared.set(SHARED_KEY, (shared = state));
      const offChange = ctx.channel.on('s', (change, remote) => {
        if (!remote) return;
        // The rows it carries; a notice without them (too many to say) means "read it all".
        if (Array.isArray(change.rows)) apply(state, change.rows.filter(isTuple));
        else void reread(ctx, state);
      });
      const offResync = ctx.channel.onResync(() => void reread(ctx, state));
      state.unsubscribe = () => {
        offChange();
        offResync();
      };
      await reread(ctx, state);
    }
    return new PgSpendLedger(ctx, shared, ctx.hub, options.onFailure);
  }

  get data(): SpendFile {
    if (this.#pending.length === 0) return this.#shared.stored;
    const view = structuredClone(this.#shared.stored);
    for (const usage of this.#pending) add((view.agents[usage.agent] ??= emptyTally()), usage);
    return view;
  }

  /** Every usage seen so far is stored, and the tally read back (with the other hosts' spend). */
  async flush(): Promise<void> {
    await this.#queue;
    // A read begun before now may miss what another host wrote just now: one of our own.
    await this.#shared.reading?.catch(() => undefined);
    await reread(this.#ctx, this.#shared).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    await this.#queue;
  }

  taskLines(): string[] {
    return spendTaskLines(this.data);
  }

  #onEvent(event: HuddleEvent): void {
    if (event.type !== 'usage' || (event as { host?: unknown }).host !== undefined) return;
    const usage: Usage = { agent: event.agent, cost: num(event.cost_usd), input: num(event.input_tokens), output: num(event.output_tokens) };
    this.#pending.push(usage);
    this.#queue = this.#queue.then(async () => {
      const { team, channel } = this.#ctx;
      try {
        const row = await write(
          this.#ctx,
          async (client) => {
            const { rows } = await client.query<{ id: string; subject: string }>(
              `SELECT id, data->>'subject' AS subject FROM huddle_tasks WHERE team = $1 AND owner = $2 AND status = 'in_progress' ORDER BY id LIMIT 1`,
              [team, usage.agent],
            );
            const found = rows[0] ? { id: rows[0].id, subject: rows[0].subject ?? '' } : null;
            const written = await client.query<SpendRow>(
              `INSERT INTO huddle_spend (team, agent, task, subject, cost_usd, model_calls, input_tokens, output_tokens)
               VALUES ($1, $2, $3, $4, $5, 1, $6, $7)
               ON CONFLICT (team, agent, task) DO UPDATE SET
                 subject = EXCLUDED.subject,
                 cost_usd = huddle_spend.cost_usd + EXCLUDED.cost_usd,
                 model_calls = huddle_spend.model_calls + 1,
                 input_tokens = huddle_spend.input_tokens + EXCLUDED.input_tokens,
                 output_tokens = huddle_spend.output_tokens + EXCLUDED.output_tokens
               RETURNING agent, task, subject, cost_usd, model_calls, input_tokens, output_tokens`,
              [team, usage.agent, found?.id ?? '', found?.subject ?? '', usage.cost, usage.input, usage.output],
            );
            return toTuple(written.rows[0]!);
          },
          { once: true },
        );
        // Counted in the stored row before it stops being pending: never twice, never missed.
        apply(this.#shared, [row]);
        channel.announce(this.#ctx.db, { k: 's', rows: [row] });
      } catch (error) {
        if (this.#onFailure && error instanceof StoreError) this.#onFailure(error);
        else this.#ctx.hub.emit('huddle', 'warning', { message: `could not count spend in the team's database: ${(error as Error).message}` });
      } finally {
        this.#pending.splice(this.#pending.indexOf(usage), 1);
      }
    });
  }
}

/** Reads every row of the team (on open, on resync, on flush): merged with what is known, newest copy of each row kept. */
function reread(ctx: PgContext, shared: SharedSpend): Promise<void> {
  shared.reading ??= (async () => {
    try {
      const { rows } = await ctx.db.query<SpendRow>(
        'SELECT agent, task, subject, cost_usd, model_calls, input_tokens, output_tokens FROM huddle_spend WHERE team = $1',
        [ctx.team],
      );
      apply(shared, rows.map(toTuple));
    } finally {
      shared.reading = undefined;
    }
  })();
  return shared.reading;
}

function toTuple(row: SpendRow): SpendTuple {
  return [row.agent, row.task, row.subject, Number(row.cost_usd), Number(row.model_calls), Number(row.input_tokens), Number(row.output_tokens)];
}

function isTuple(value: unknown): value is SpendTuple {
  return (
    Array.isArray(value) &&
    value.length === 7 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    typeof value[2] === 'string' &&
    value.slice(3).every((n) => Number.isFinite(n))
  );
}

/** Keeps the newer copy of each row (more calls), and the tally made from them. */
function apply(shared: SharedSpend, rows: SpendTuple[]): void {
  let changed = false;
  for (const row of rows) {
    const key = `${row[0]}\0${row[1]}`;
    const known = shared.rows.get(key);
    if (known && known[4] >= row[4]) continue;
    shared.rows.set(key, row);
    changed = true;
  }
  if (changed) shared.stored = tally([...shared.rows.values()]);
}

function tally(rows: SpendTuple[]): SpendFile {
  const data = emptySpend();
  for (const [agent, task, subject, cost, calls, input, output] of rows) {
    const addRow = (t: SpendTally) => {
      t.cost_usd += cost;
      t.model_calls += calls;
      t.input_tokens += input;
      t.output_tokens += output;
    };
    addRow((data.agents[agent] ??= emptyTally()));
    if (task) {
      const entry = (data.tasks[task] ??= { ...emptyTally(), subject, agents: {} });
      if (subject) entry.subject = subject;
      addRow(entry);
      entry.agents[agent] = (entry.agents[agent] ?? 0) + cost;
    } else {
      addRow(data.unattributed);
    }
  }
  return data;
}

function add(tally: SpendTally, usage: Usage): void {
  tally.cost_usd += usage.cost;
  tally.model_calls += 1;
  tally.input_tokens += usage.input;
  tally.output_tokens += usage.output;
}

function num(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}
