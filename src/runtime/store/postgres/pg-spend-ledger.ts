// What the team has spent, counted in the database (docs/contract.md#command-line: team-wide budgets): one row
// per agent and task, each usage added in one transaction with the attribution read from the
// board in that same transaction. Reads are synchronous: the tally as last read (every ledger of
// the team in this process shares it; other hosts' spend arrives by NOTIFY) plus this instance's
// usage still on its way, so a budget checked right after a model call already counts it.
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
  /** Bumped by every write of this process: a re-read begun before one must be done again. */
  generation: number;
  reading: Promise<void> | undefined;
  unsubscribe: () => void;
}

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
      const state: SharedSpend = { stored: emptySpend(), generation: 0, reading: undefined, unsubscribe: () => undefined };
      ctx.channel.shared.set(SHARED_KEY, (shared = state));
      const offChange = ctx.channel.on('s', (_change, remote) => {
        if (remote) void reread(ctx, state);
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
        await write(
          this.#ctx,
          async (client) => {
            const { rows } = await client.query<{ id: string; subject: string }>(
              `SELECT id, data->>'subject' AS subject FROM huddle_tasks WHERE team = $1 AND owner = $2 AND status = 'in_progress' ORDER BY id LIMIT 1`,
              [team, usage.agent],
            );
            const found = rows[0] ? { id: rows[0].id, subject: rows[0].subject ?? '' } : null;
            await client.query(
              `INSERT INTO huddle_spend (team, agent, task, subject, cost_usd, model_calls, input_tokens, output_tokens)
               VALUES ($1, $2, $3, $4, $5, 1, $6, $7)
               ON CONFLICT (team, agent, task) DO UPDATE SET
                 subject = EXCLUDED.subject,
                 cost_usd = huddle_spend.cost_usd + EXCLUDED.cost_usd,
                 model_calls = huddle_spend.model_calls + 1,
                 input_tokens = huddle_spend.input_tokens + EXCLUDED.input_tokens,
                 output_tokens = huddle_spend.output_tokens + EXCLUDED.output_tokens`,
              [team, usage.agent, found?.id ?? '', found?.subject ?? '', usage.cost, usage.input, usage.output],
            );
            await channel.publish(client, { k: 's' });
            return found;
          },
          { once: true },
        );
        // Read back before it stops being pending, so it is never counted twice nor missed.
        this.#shared.generation += 1;
        await reread(this.#ctx, this.#shared).catch(() => undefined);
      } catch (error) {
        if (this.#onFailure && error instanceof StoreError) this.#onFailure(error);
        else this.#ctx.hub.emit('huddle', 'warning', { message: `could not count spend in the team's database: ${(error as Error).message}` });
      } finally {
        this.#pending.splice(this.#pending.indexOf(usage), 1);
      }
    });
  }
}

/** Reads the whole tally; read again when a write of this process landed meanwhile. */
function reread(ctx: PgContext, shared: SharedSpend): Promise<void> {
  shared.reading ??= (async () => {
    try {
      for (;;) {
        const generation = shared.generation;
        const { rows } = await ctx.db.query<SpendRow>('SELECT agent, task, subject, cost_usd, model_calls, input_tokens, output_tokens FROM huddle_spend WHERE team = $1', [ctx.team]);
        if (generation !== shared.generation) continue;
        shared.stored = tally(rows);
        return;
      }
    } finally {
      shared.reading = undefined;
    }
  })();
  return shared.reading;
}

function tally(rows: SpendRow[]): SpendFile {
  const data = emptySpend();
  for (const row of rows) {
    const usage = { cost: Number(row.cost_usd), calls: Number(row.model_calls), input: Number(row.input_tokens), output: Number(row.output_tokens) };
    const addRow = (t: SpendTally) => {
      t.cost_usd += usage.cost;
      t.model_calls += usage.calls;
      t.input_tokens += usage.input;
      t.output_tokens += usage.output;
    };
    addRow((data.agents[row.agent] ??= emptyTally()));
    if (row.task) {
      const entry = (data.tasks[row.task] ??= { ...emptyTally(), subject: row.subject, agents: {} });
      if (row.subject) entry.subject = row.subject;
      addRow(entry);
      entry.agents[row.agent] = (entry.agents[row.agent] ?? 0) + usage.cost;
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
