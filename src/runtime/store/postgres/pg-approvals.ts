// The needs-you queue of a team spread over hosts: a question asked on a worker (an ask-mode
// command, a budget stop) must reach the person at the lead's console. Each process keeps its own
// questions as the in-memory queue does (memory-approvals.ts: the asker waits on a promise) and
// copies them to huddle_approvals; a console lists its own questions and those of other hosts,
// and its answer to another host's question is written back there and reaches the asker by NOTIFY.
// A question counts as answerable when a console is attached anywhere in the team.
import type { ApprovalDecision, ApprovalKind, ApprovalOutcome, ApprovalRequest, Approvals, PendingApproval } from '../approvals.js';
import { ApprovalQueue } from '../memory-approvals.js';
import { type PgContext, write } from './pg-context.js';
import { hostToken } from './pg-hosts.js';
import { toJsonb } from './pg-json.js';

interface Row {
  id: string;
  host: string;
  request: ApprovalRequest;
  state: string;
  decision: ApprovalDecision | null;
  decided_by: string | null;
}

export class PgApprovals implements Approvals {
  readonly #ctx: PgContext;
  readonly #queue: ApprovalQueue;
  /** Questions of other hosts, by their team-wide id. */
  readonly #remote = new Map<string, ApprovalRequest>();
  readonly #listeners = new Set<() => void>();
  /** Local ids already copied to the database. */
  readonly #copied = new Set<string>();
  #localAnswerers = 0;
  #remoteAnswerers = 0;
  /** Held while a console on another host can answer: the local queue then accepts questions. */
  #remoteAttachment: (() => void) | undefined;
  #unsubscribe: () => void = () => undefined;
  #sync: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(ctx: PgContext) {
    this.#ctx = ctx;
    this.#queue = new ApprovalQueue(ctx.hub, { idPrefix: `${hostToken(ctx.host)}-` });
    this.#queue.onChange(() => {
      this.#copyLocal();
      this.#changed();
    });
  }

  static async open(ctx: PgContext): Promise<PgApprovals> {
    const approvals = new PgApprovals(ctx);
    // Another store's change (another host, or another store of the team in this process).
    const offChange = ctx.channel.on('a', (change) => {
      if (!change.allow && change.from !== ctx.host) void approvals.#reload();
    });
    const offResync = ctx.channel.onResync(() => void approvals.#reload());
    approvals.#unsubscribe = () => {
      offChange();
      offResync();
    };
    await approvals.#reload();
    return approvals;
  }

  get answerable(): boolean {
    return this.#queue.answerable;
  }

  answerableFor(kind: ApprovalKind): boolean {
    return this.#queue.answerableFor(kind);
  }

  /** A headless run's control socket (`kinds`) answers this process's own requests only: it is not published to the team. */
  attachAnswerer(kinds?: readonly ApprovalKind[]): () => void {
    if (kinds) return this.#queue.attachAnswerer(kinds);
    const detach = this.#queue.attachAnswerer();
    this.#localAnswerers += 1;
    this.#publishAnswerers();
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      this.#localAnswerers -= 1;
      this.#publishAnswerers();
      detach();
    };
  }

  list(): PendingApproval[] {
    const remote = [...this.#remote.entries()].map(([id, request]) => ({
      ...request,
      id,
      resolve: (decision: ApprovalDecision) => void this.resolve(id, decision),
    }));
    return [...this.#queue.list(), ...remote];
  }

  get size(): number {
    return this.#queue.size + this.#remote.size;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  request(request: Omit<ApprovalRequest, 'id' | 'created_at'>, signal?: AbortSignal): Promise<ApprovalOutcome> {
    return this.#queue.request(request, signal);
  }

  revise(id: string, detail: string): boolean {
    return this.#queue.revise(id, detail);
  }

  resolve(id: string, decision: ApprovalDecision, by = 'user', note?: string, edited?: string): boolean {
    if (this.#queue.list().some((request) => request.id === id)) return this.#queue.resolve(id, decision, by, note, edited);
    if (!this.#remote.has(id)) return false;
    this.#remote.delete(id);
    this.#changed();
    this.#enqueue(() =>
      write(this.#ctx, async (client) => {
        await client.query(`UPDATE huddle_approvals SET state = 'answered', decision = $3, decided_by = $4 WHERE team = $1 AND id = $2 AND state = 'pending'`, [
          this.#ctx.team,
          id,
          decision,
          by,
        ]);
        await this.#ctx.channel.publish(client, { k: 'a', from: this.#ctx.host });
      }).then(() => this.#ctx.channel.local({ k: 'a', from: this.#ctx.host })),
    );
    return true;
  }

  close(reason?: string): void {
    this.#closed = true;
    this.#queue.close(reason);
    this.#unsubscribe();
    this.#remoteAttachment?.();
    this.#remoteAttachment = undefined;
  }

  /** Waits for the copies to the database (closing the store does this). */
  settled(): Promise<void> {
    return this.#sync;
  }

  // ---- internals ---------------------------------------------------------------------------

  /** Ids are unique across the team's hosts already (the queue prefixes them): the same id in the database. */
  #dbId(localId: string): string {
    return localId;
  }

  /** Copies new local questions to the database, and marks the ones gone (answered, cancelled) as done. */
  #copyLocal(): void {
    const pending = new Map(this.#queue.list().map((request) => [request.id, request]));
    const added = [...pending.values()].filter((request) => !this.#copied.has(request.id));
    const gone = [...this.#copied].filter((id) => !pending.has(id));
    if (!added.length && !gone.length) return;
    for (const request of added) this.#copied.add(request.id);
    for (const id of gone) this.#copied.delete(id);
    const { team, host, channel } = this.#ctx;
    this.#enqueue(() =>
      write(this.#ctx, async (client) => {
        for (const { resolve: _resolve, ...request } of added) {
          await client.query(
            `INSERT INTO huddle_approvals (team, id, host, request, state) VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT (team, id) DO NOTHING`,
            [team, this.#dbId(request.id), host, toJsonb(request)],
          );
        }
        for (const id of gone)
          await client.query(`UPDATE huddle_approvals SET state = 'done' WHERE team = $1 AND id = $2 AND state <> 'done'`, [team, this.#dbId(id)]);
        await channel.publish(client, { k: 'a', from: host });
      }).then(() => channel.local({ k: 'a', from: host })),
    );
  }

  /** Re-reads the other hosts' questions, answers to ours, and whether a console is attached elsewhere. */
  async #reload(): Promise<void> {
    if (this.#closed) return;
    const { team, host } = this.#ctx;
    let rows: Row[];
    let answerers: number;
    try {
      ({ rows } = await this.#ctx.db.query<Row>(
        `SELECT id, host, request, state, decision, decided_by FROM huddle_approvals WHERE team = $1 AND state <> 'done' ORDER BY created_at`,
        [team],
      ));
      const live = await this.#ctx.db.query<{ n: string }>(
        `SELECT coalesce(sum(answerers), 0) AS n FROM huddle_hosts WHERE team = $1 AND host <> $2 AND state = 'live' AND lease_until > now()`,
        [team, host],
      );
      answerers = Number(live.rows[0]?.n ?? 0);
    } catch {
      return; // read again on the next change or reconnect
    }
    if (this.#closed) return;
    let changed = false;
    const seen = new Set<string>();
    for (const row of rows) {
      if (row.host === host) {
        // An answer from another host's console to one of our questions.
        const localId = row.id;
        if (row.state === 'answered' && row.decision) this.#queue.resolve(localId, row.decision, row.decided_by ?? 'user');
        continue;
      }
      if (row.state !== 'pending') continue;
      seen.add(row.id);
      if (!this.#remote.has(row.id)) {
        this.#remote.set(row.id, { ...row.request, id: row.id });
        changed = true;
      }
    }
    for (const id of [...this.#remote.keys()]) {
      if (!seen.has(id)) {
        this.#remote.delete(id);
        changed = true;
      }
    }
    // A console attached or gone elsewhere: listeners hear of it (answerable changed).
    if (answerers > 0 !== this.#remoteAnswerers > 0) changed = true;
    this.#remoteAnswerers = answerers;
    if (answerers > 0 && !this.#remoteAttachment) this.#remoteAttachment = this.#queue.attachAnswerer();
    if (answerers === 0 && this.#remoteAttachment) {
      const detach = this.#remoteAttachment;
      this.#remoteAttachment = undefined;
      detach();
    }
    if (changed) this.#changed();
  }

  #publishAnswerers(): void {
    const { team, host, channel } = this.#ctx;
    const count = this.#localAnswerers;
    this.#enqueue(() =>
      write(this.#ctx, async (client) => {
        await client.query('UPDATE huddle_hosts SET answerers = $3 WHERE team = $1 AND host = $2', [team, host, count]);
        await channel.publish(client, { k: 'a', from: host });
      }).then(() => channel.local({ k: 'a', from: host })),
    );
  }

  #enqueue(work: () => Promise<unknown>): void {
    this.#sync = this.#sync.then(work).then(
      () => undefined,
      () => undefined,
    );
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A broken listener must not break the queue.
      }
    }
  }
}
