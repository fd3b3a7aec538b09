// User-supplied regular expressions run off the main thread, with a time limit. JavaScript's regex
// engine backtracks: `(a+)+$` on 'a'×42+'!' runs for hours, and on the main thread that freezes
// huddle (its screen, its timers, even SIGTERM's handler). A worker that takes too long is
// terminated, which stops the match at once. Chosen over a linear-time engine: re2 needs a
// native build, ripgrep a download; JavaScript syntax stays what the tools describe.
import { Worker } from 'node:worker_threads';

export const DEFAULT_REGEX_TIMEOUT_MS = 10_000;

export class RegexTimeoutError extends Error {
  constructor(pattern: string, ms: number) {
    super(
      `the pattern /${pattern}/ ran for more than ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`} and was stopped; it probably backtracks ` +
        'without end (nested quantifiers like (a+)+); simplify it or narrow the path',
    );
    this.name = 'RegexTimeoutError';
  }
}

export interface LineMatch {
  file: string;
  line: number;
  text: string;
}

// Runs in the worker (eval'd as a CommonJS script): tests every line of every file it is sent.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ pattern, flags, files, max }) => {
  let re;
  try { re = new RegExp(pattern, flags); } catch (e) { parentPort.postMessage({ error: String(e && e.message) }); return; }
  const matches = [];
  for (const { file, text } of files) {
    const lines = text.split('\\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
      re.lastIndex = 0;
      if (!re.test(line)) continue;
      matches.push({ file, line: i + 1, text: line });
      if (matches.length > max) { parentPort.postMessage({ matches }); return; }
    }
  }
  parentPort.postMessage({ matches });
});
`;

/** A worker for one search; send batches of files, then close(). */
export class RegexSearch {
  readonly #worker: Worker;
  readonly #deadline: number;
  readonly #pattern: string;
  readonly #timeoutMs: number;

  constructor(pattern: string, timeoutMs = regexTimeoutMs()) {
    this.#pattern = pattern;
    this.#timeoutMs = timeoutMs;
    this.#deadline = Date.now() + timeoutMs;
    this.#worker = new Worker(WORKER_SOURCE, { eval: true });
    this.#worker.unref();
  }

  /** The matching lines of these files (at most `max` + 1, to tell that there were more). */
  match(files: Array<{ file: string; text: string }>, max: number): Promise<LineMatch[]> {
    return new Promise((resolve, reject) => {
      const remaining = this.#deadline - Date.now();
      const timer = setTimeout(
        () => {
          cleanup();
          void this.#worker.terminate();
          reject(new RegexTimeoutError(this.#pattern, this.#timeoutMs));
        },
        Math.max(0, remaining),
      );
      const onMessage = (reply: { matches?: LineMatch[]; error?: string }) => {
        cleanup();
        if (reply.error !== undefined) reject(new Error(`invalid regular expression: ${reply.error}`));
        else resolve(reply.matches ?? []);
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.#worker.off('message', onMessage);
        this.#worker.off('error', onError);
      };
      this.#worker.on('message', onMessage);
      this.#worker.on('error', onError);
      this.#worker.postMessage({ pattern: this.#pattern, flags: '', files, max });
    });
  }

  close(): void {
    void this.#worker.terminate();
  }
}

function regexTimeoutMs(): number {
  const raw = Number(process.env.HUDDLE_REGEX_TIMEOUT_MS);
  return Number.isInteger(raw) && raw > 0 ? raw : DEFAULT_REGEX_TIMEOUT_MS;
}

/** For other user-supplied patterns (hook matchers, filters): `test` on a few strings, time-limited. */
export async function safeRegexTest(pattern: string, inputs: string[], timeoutMs = 1_000): Promise<boolean[]> {
  const search = new RegexSearch(pattern, timeoutMs);
  try {
    const found = await search.match(
      inputs.map((text, i) => ({ file: String(i), text: text.replace(/\n/g, ' ') })),
      inputs.length,
    );
    const hits = new Set(found.map((m) => Number(m.file)));
    return inputs.map((_, i) => hits.has(i));
  } finally {
    search.close();
  }
}
