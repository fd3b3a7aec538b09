// The team's governor of model calls: at most `limit` calls in flight for every agent of this
// process together (the rest wait their turn, in order), and one shared back-off: a 429 or 529
// pauses every agent's next call until its retry-after has passed, instead of each agent finding
// the rate limit alone and backing off on its own.

/** The wait was given up because its signal aborted (the model client turns it into its InterruptedError). */
export class WaitAbortedError extends Error {
  constructor() {
    super('interrupted while waiting for a model call slot');
    this.name = 'WaitAbortedError';
  }
}

/** Why a call is not sent yet: waiting for a free slot, or for the team's back-off to pass. */
export type CallWait =
  | { kind: 'queued'; inFlight: number; limit: number; ahead: number }
  | { kind: 'backoff'; untilMs: number; reason: string }
  /** A sibling's call with the same prefix is writing it to the prompt cache (prefix-gate.ts). */
  | { kind: 'cache_warmup' };

export interface BackoffNotice {
  untilMs: number;
  delayMs: number;
  reason: string;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class CallGovernor {
  /** Calls in flight at most (0: no cap). */
  readonly limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #pauseReason = '';
  readonly #queue: Waiter[] = [];
  readonly #backoffListeners = new Set<(notice: BackoffNotice) => void>();
  readonly #now: () => number;

  constructor(options: { limit: number; now?: () => number }) {
    this.limit = Math.max(0, Math.floor(options.limit));
    this.#now = options.now ?? Date.now;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** When the team's back-off ends (ms since the epoch; past: none). */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /** Called when a 429/529 starts a team back-off (a warning for the person). */
  onBackoff(listener: (notice: BackoffNotice) => void): () => void {
    this.#backoffListeners.add(listener);
    return () => this.#backoffListeners.delete(listener);
  }

  /**
   * Waits for the team's back-off and a free slot; resolves with the function that frees it.
   * `onWait` hears why the call waits, then `undefined` once it is sent.
   */
  async acquire(signal: AbortSignal | undefined, onWait?: (wait: CallWait | undefined) => void): Promise<() => void> {
    let waited = false;
    for (;;) {
      if (signal?.aborted) throw new WaitAbortedError();
      const pause = this.#pausedUntil - this.#now();
      if (pause > 0) {
        waited = true;
        onWait?.({ kind: 'backoff', untilMs: this.#pausedUntil, reason: this.#pauseReason });
        await sleepFor(pause, signal);
        continue;
      }
      // First come, first served: a free slot goes to the queue before a newcomer.
      if (this.limit === 0 || (this.#inFlight < this.limit && this.#queue.length === 0)) {
        this.#inFlight += 1;
        break;
      }
      waited = true;
      onWait?.({ kind: 'queued', inFlight: this.#inFlight, limit: this.limit, ahead: this.#queue.length });
      // Resolves with the slot handed over by the call that freed it.
      await this.#waitForSlot(signal);
      const rest = this.#pausedUntil - this.#now();
      if (rest > 0) {
        onWait?.({ kind: 'backoff', untilMs: this.#pausedUntil, reason: this.#pauseReason });
        await sleepFor(rest, signal).catch((error: unknown) => {
          this.#free();
          throw error;
        });
      }
      break;
    }
    if (waited) onWait?.(undefined);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#free();
    };
  }

  /** A slot is freed: handed to the first queued call, else counted free. */
  #free(): void {
    const next = this.#queue.shift();
    if (next) next.resolve();
    else this.#inFlight -= 1;
  }

  /** A 429 or 529: nobody's next call is sent before `delayMs` from now. */
  backOff(delayMs: number, reason: string): void {
    const now = this.#now();
    const until = now + delayMs;
    if (until <= this.#pausedUntil) return;
    const fresh = this.#pausedUntil <= now;
    this.#pausedUntil = until;
    this.#pauseReason = reason;
    // Told once per back-off, not once per agent that runs into the same limit.
    if (fresh) for (const listener of this.#backoffListeners) listener({ untilMs: until, delayMs, reason });
  }

  #waitForSlot(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = () => {
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(new WaitAbortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }
}

function sleepFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new WaitAbortedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new WaitAbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** "queued: 4 of 4 model calls in flight, 2 ahead" / "team back-off: rate limited (429), 3 s left". */
export function describeWait(wait: CallWait, now = Date.now()): string {
  if (wait.kind === 'cache_warmup') return 'waiting for a teammate to write the shared prompt cache';
  if (wait.kind === 'queued') return `queued: ${wait.inFlight} of ${wait.limit} model calls in flight${wait.ahead ? `, ${wait.ahead} ahead` : ''}`;
  const seconds = Math.max(1, Math.ceil((wait.untilMs - now) / 1000));
  return `team back-off: ${wait.reason}, ${seconds} s left`;
}
