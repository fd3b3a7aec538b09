// Calls that arrive together run as one transaction (docs/postgresql-managed.md#commits-and-the-disk): the
// claims of several agents of one process, say, each then gets its own answer. Only what already
// waits is gathered, never by a timer: the calls made before the current turn of the event loop
// ends, and, while `inFlight` batches are running, those made meanwhile, which go in the next one
// as soon as one ends. A transaction's cost on the server is mostly per message and per commit,
// not per row, so eight claims in one cost little more than one. More than one batch may run: a
// batch that waits on a lock another session holds does not hold up the next agents' work.

/** What a batch says of one of its calls: its answer, its error, or `again` (it could not go in this batch: it goes in the next). */
export type BatchOutcome<T> = { value: T } | { error: unknown } | 'again';

export interface BatcherOptions<I, T> {
  /** Runs the calls as one; its outcomes are in the calls' order. A throw is every call's error. */
  run: (inputs: I[]) => Promise<Array<BatchOutcome<T>>>;
  /** Calls with the same key never share a batch (the later one goes in the next), so each call's work is told apart by its key. */
  key: (input: I) => string;
  /** How many batches may run at once (2 unless said). */
  inFlight?: number;
}

interface Waiting<I, T> {
  input: I;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, T> {
  readonly #options: BatcherOptions<I, T>;
  #waiting: Array<Waiting<I, T>> = [];
  #running = 0;
  #scheduled = false;

  constructor(options: BatcherOptions<I, T>) {
    this.#options = options;
  }

  /** Resolves with the call's own answer once the batch it went in has ended. */
  submit(input: I): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      this.#schedule();
    });
  }

  /** At the end of this turn of the event loop, unless as many batches as may run are in flight (the end of one starts the next). */
  #schedule(): void {
    if (this.#full() || this.#scheduled || this.#waiting.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#next();
    });
  }

  #full(): boolean {
    return this.#running >= (this.#options.inFlight ?? 2);
  }

  async #next(): Promise<void> {
    if (this.#full() || this.#waiting.length === 0) return;
    this.#running += 1;
    const batch: Array<Waiting<I, T>> = [];
    const keys = new Set<string>();
    const later: Array<Waiting<I, T>> = [];
    for (const call of this.#waiting) {
      const key = this.#options.key(call.input);
      if (keys.has(key)) later.push(call);
      else {
        keys.add(key);
        batch.push(call);
      }
    }
    this.#waiting = later;
    try {
      const outcomes = await this.#options.run(batch.map((call) => call.input)).then(
        (settled) => settled,
        (error: unknown) => batch.map(() => ({ error })),
      );
      const again: Array<Waiting<I, T>> = [];
      batch.forEach((call, i) => {
        const outcome = outcomes[i];
        if (outcome === 'again') again.push(call);
        else if (outcome === undefined) call.reject(new Error('a batch gave no answer for one of its calls'));
        else if ('error' in outcome) call.reject(outcome.error);
        else call.resolve(outcome.value);
      });
      // What could not go in this batch goes first in the next.
      this.#waiting = [...again, ...this.#waiting];
    } finally {
      this.#running -= 1;
      this.#schedule();
    }
  }
}
