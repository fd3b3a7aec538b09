// Staggered first calls: agents that send the same prefix (the same model, tools and shared system
// block: system-prompt.ts) write it to the prompt cache once. While a call whose prefix is not
// known to be cached is in flight, a call with the same prefix waits until that one's response has
// begun (the API has written the cache by then) and then reads what it wrote, instead of every
// teammate spawned together writing the same prefix at 1.25× the input price. A prefix counts as
// cached for the cache's lifetime after the last response that used it; the wait is bounded
// (`maxWaitMs`), so a slow first call never holds its siblings for long.
import { createHash } from 'node:crypto';
import { definitionJson } from './definition-json.js';

/** The API keeps a cache entry 5 minutes after its last use. */
export const CACHE_LIFETIME_MS = 5 * 60_000;

/** timeouts.cacheWarmupMs: how long a call waits at most for a sibling's cache write. */
export const DEFAULT_CACHE_WARMUP_MS = 10_000;

/** One attempt's part: `landed` when its response began, `done` when the attempt ended (either may come twice). */
export interface PrefixTicket {
  landed(): void;
  done(): void;
}

/** The wait was given up because its signal aborted. */
export class PrefixWaitAbortedError extends Error {
  constructor() {
    super('interrupted while waiting for a teammate to write the shared prompt cache');
    this.name = 'PrefixWaitAbortedError';
  }
}

interface Writing {
  ended: Promise<void>;
  end: () => void;
}

export class PrefixGate {
  readonly maxWaitMs: number;
  /** Prefix → when a response that used it last began. */
  readonly #cached = new Map<string, number>();
  /** Prefix → the call writing it now. */
  readonly #writing = new Map<string, Writing>();
  readonly #now: () => number;

  constructor(options: { maxWaitMs: number; now?: () => number }) {
    this.maxWaitMs = Math.max(0, options.maxWaitMs);
    this.#now = options.now ?? Date.now;
  }

  /**
   * Waits, when another call is writing `key` now, until its response began or it ended
   * (`maxWaitMs` at most); then this call goes, and writes the prefix itself when nobody has.
   * `onWait` hears `true` when the call waits, then `false` once it goes.
   */
  async enter(key: string, signal: AbortSignal | undefined, onWait?: (waiting: boolean) => void): Promise<PrefixTicket> {
    const deadline = this.#now() + this.maxWaitMs;
    let waited = false;
    try {
      for (;;) {
        if (signal?.aborted) throw new PrefixWaitAbortedError();
        if (this.maxWaitMs === 0 || this.#isCached(key)) return this.#ticket(key, undefined);
        const writing = this.#writing.get(key);
        const left = deadline - this.#now();
        if (!writing) return this.#ticket(key, this.#startWriting(key));
        if (left <= 0) return this.#ticket(key, undefined);
        if (!waited) onWait?.(true);
        waited = true;
        await raceWait(writing.ended, left, signal);
      }
    } finally {
      if (waited) onWait?.(false);
    }
  }

  #isCached(key: string): boolean {
    const at = this.#cached.get(key);
    if (at === undefined) return false;
    if (this.#now() - at < CACHE_LIFETIME_MS) return true;
    this.#cached.delete(key);
    return false;
  }

  #startWriting(key: string): Writing {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const writing: Writing = { ended, end };
    this.#writing.set(key, writing);
    return writing;
  }

  /** `writing`: this call writes the prefix; its siblings go once it landed or ended. */
  #ticket(key: string, writing: Writing | undefined): PrefixTicket {
    const finish = () => {
      if (!writing) return;
      if (this.#writing.get(key) === writing) this.#writing.delete(key);
      writing.end();
    };
    return {
      landed: () => {
        this.#cached.set(key, this.#now());
        finish();
      },
      done: finish,
    };
  }
}

/** The prefix every agent of a role sends alike: the model, the tools, and the system prompt's first block. */
export function prefixKey(model: string, tools: unknown[], firstSystemBlock: unknown): string {
  return createHash('sha256')
    .update(model)
    .update('\0')
    .update(toolsDigest(tools))
    .update('\0')
    .update(JSON.stringify(firstSystemBlock ?? null))
    .digest('base64url');
}

/** A number per definition object, so a list of the same definitions is known by a short key. */
const toolIds = new WeakMap<object, number>();
let nextToolId = 0;
/** The digest of the tools' JSON, by their definitions' numbers: every call hashed the same ~20 KB again. */
const digests = new Map<string, string>();
const MAX_DIGESTS = 256;

/** The digest of the tools' JSON as one array; the same for equal definitions, however they are held. */
function toolsDigest(tools: unknown[]): string {
  let key: string | undefined = '';
  for (const tool of tools) {
    if (!tool || typeof tool !== 'object') {
      key = undefined; // not a definition: nothing to know it by
      break;
    }
    let id = toolIds.get(tool);
    if (id === undefined) toolIds.set(tool, (id = nextToolId++));
    key += `${id},`;
  }
  let digest = key === undefined ? undefined : digests.get(key);
  if (digest !== undefined) return digest;
  digest = createHash('sha256')
    .update(`[${tools.map(definitionJson).join(',')}]`)
    .digest('base64url');
  if (key !== undefined) {
    // Agents come and go with the same few tool sets; a run that makes ever new ones starts over.
    if (digests.size >= MAX_DIGESTS) digests.clear();
    digests.set(key, digest);
  }
  return digest;
}

function raceWait(ended: Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new PrefixWaitAbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    void ended.then(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
