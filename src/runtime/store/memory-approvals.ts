// The needs-you queue of one huddle process, in memory: the person answers at the console of the
// process whose agents ask (approvals.ts has the contract).
import type { EventHub } from '../events/events.js';
import type { ApprovalDecision, ApprovalKind, ApprovalOutcome, ApprovalRequest, Approvals, PendingApproval } from './approvals.js';

export class ApprovalQueue implements Approvals {
  readonly #hub: EventHub;
  readonly #pending = new Map<string, PendingApproval>();
  /** How to end each pending request's wait without an answer. */
  readonly #cancels = new Map<string, () => void>();
  readonly #listeners = new Set<() => void>();
  /** Who can answer: the console (every kind: undefined) or a headless run's control socket (some kinds). */
  readonly #answerers = new Set<{ kinds: readonly ApprovalKind[] | undefined }>();
  #next = 1;
  #closed = false;
  readonly #idPrefix: string;

  /** `idPrefix` keeps ids unique across processes whose queues one console shows (a team on PostgreSQL). */
  constructor(hub: EventHub, options: { idPrefix?: string } = {}) {
    this.#hub = hub;
    this.#idPrefix = options.idPrefix ?? '';
  }

  /** True while someone (the console) can answer requests of every kind. */
  get answerable(): boolean {
    return !this.#closed && [...this.#answerers].some((a) => a.kinds === undefined);
  }

  answerableFor(kind: ApprovalKind): boolean {
    return !this.#closed && [...this.#answerers].some((a) => a.kinds === undefined || a.kinds.includes(kind));
  }

  /** The console calls this when it opens (every kind); a headless run's control socket for `kinds` only. */
  attachAnswerer(kinds?: readonly ApprovalKind[]): () => void {
    const answerer = { kinds };
    this.#answerers.add(answerer);
    return () => {
      if (!this.#answerers.delete(answerer)) return;
      // With nobody left to answer, nothing waiting may hang.
      for (const request of this.list()) if (!this.answerableFor(request.kind ?? 'tool')) this.#finish(request.id, 'deny', 'no one is left to answer');
    };
  }

  /** Pending requests, oldest first. */
  list(): PendingApproval[] {
    return [...this.#pending.values()];
  }

  get size(): number {
    return this.#pending.size;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Queues a request and resolves when the person answers, the signal aborts (the agent was
   * interrupted or stopped), or the queue closes. Emits `approval_requested` as the agent.
   */
  request(request: Omit<ApprovalRequest, 'id' | 'created_at'>, signal?: AbortSignal): Promise<ApprovalOutcome> {
    if (!this.answerableFor(request.kind ?? 'tool')) return Promise.resolve({ kind: 'unanswerable' });
    if (signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    const id = `${this.#idPrefix}approval_${this.#next++}`;
    const created_at = new Date().toISOString();
    return new Promise((resolve) => {
      const onAbort = () => this.#finish(id, 'cancelled', 'the agent was interrupted');
      const entry: PendingApproval = {
        ...request,
        id,
        created_at,
        resolve: (decision, note, edited) => {
          signal?.removeEventListener('abort', onAbort);
          if (decision === 'deny') resolve(note ? { kind: 'denied', reason: note } : { kind: 'denied' });
          else resolve({ kind: 'approved', always: decision === 'always', ...(note ? { note } : {}), ...(edited !== undefined ? { edited } : {}) });
        },
      };
      const cancel = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve({ kind: 'cancelled' });
      };
      this.#cancels.set(id, cancel);
      this.#pending.set(id, entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#hub.emit(request.agent, 'approval_requested', {
        id,
        tool: request.tool,
        summary: request.summary,
        reason: request.reason,
        prefixes: request.prefixes,
        ...(request.detail ? { detail: request.detail } : {}),
      });
      this.#changed();
    });
  }

  /** The person's answer (with a denial, maybe why). False when there is no such request (already answered, or cancelled). */
  resolve(id: string, decision: ApprovalDecision, by = 'user', note?: string, edited?: string): boolean {
    return this.#finish(id, decision, note, by, note !== undefined, edited);
  }

  /** The person rewrote what waits (a plan) without deciding yet: the queue shows the new text. */
  revise(id: string, detail: string): boolean {
    const entry = this.#pending.get(id);
    if (!entry) return false;
    entry.detail = detail;
    entry.summary = oneLine(detail);
    this.#changed();
    return true;
  }

  /** Denies everything pending; later requests are unanswerable. */
  close(reason = 'huddle is closing'): void {
    this.#closed = true;
    for (const request of this.list()) this.#finish(request.id, 'deny', reason);
  }

  #finish(id: string, decision: ApprovalDecision | 'cancelled', note?: string, by?: string, byPerson = false, edited?: string): boolean {
    const entry = this.#pending.get(id);
    if (!entry) return false;
    this.#pending.delete(id);
    const cancel = this.#cancels.get(id);
    this.#cancels.delete(id);
    this.#hub.emit(entry.agent, 'approval_resolved', {
      id,
      decision,
      ...(by ? { by } : {}),
      ...(note ? { note } : {}),
    });
    if (decision === 'cancelled') cancel?.();
    // Only the person's own words go to the agent; huddle's notes (closing, nobody left) are for the log.
    else entry.resolve(decision, byPerson ? note : undefined, edited);
    this.#changed();
    return true;
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // A broken listener must not break the queue.
      }
    }
  }
}

/** A request's one-line summary of a longer text (a plan). */
export function oneLine(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
