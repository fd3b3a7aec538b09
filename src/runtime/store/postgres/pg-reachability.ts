// Whether this process reaches a database now, as the pool, the listener and the lease renewals
// find it: each reports a connection that failed (down) or a statement that went through (up).
// A failure that outlasts a short grace (a restart that takes a moment is no news) is said once,
// and its end once: the one-line status a person reads while the server is away.
export type ReachabilityListener = (state: { reachable: boolean; why?: string }) => void;

/** A dropped connection that is back within this long is not worth a line. */
const GRACE_MS = 1_000;

const states = new Map<string, Reachability>();

export class Reachability {
  readonly #listeners = new Set<ReachabilityListener>();
  #failing: { since: number; why: string } | undefined;
  #said = false;
  #timer: NodeJS.Timeout | undefined;

  /** The process's reachability of the database at `connectionString`. */
  static of(connectionString: string): Reachability {
    let state = states.get(connectionString);
    if (!state) states.set(connectionString, (state = new Reachability()));
    return state;
  }

  on(listener: ReachabilityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A connection failed: said after the grace unless something went through meanwhile. */
  down(error: unknown): void {
    const why = describe(error);
    if (this.#failing) {
      this.#failing.why = why;
      return;
    }
    this.#failing = { since: Date.now(), why };
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (!this.#failing) return;
      this.#said = true;
      this.#tell({ reachable: false, why: this.#failing.why });
    }, GRACE_MS);
    // The session holds the process while it is open (pg-store.ts); this timer only says so.
    this.#timer.unref();
  }

  /** Something went through: the database is there. */
  up(): void {
    if (!this.#failing) return;
    this.#failing = undefined;
    clearTimeout(this.#timer);
    if (!this.#said) return;
    this.#said = false;
    this.#tell({ reachable: true });
  }

  #tell(state: { reachable: boolean; why?: string }): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(state);
      } catch {
        // One listener's failure is not the others'.
      }
    }
  }
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string } | undefined;
  if (e?.code === 'ECONNREFUSED') return 'nothing listens there';
  if (e?.code === '57P01' || e?.code === '57P02') return 'the server shut down';
  if (e?.code === '57P03') return 'the server is starting up';
  const message = (e?.message ?? String(error)).split('\n')[0]!;
  return message || 'the connection dropped';
}
