// One request, one answer, over a Unix socket: a JSON line each way. huddle's control socket and
// the per-agent channels of external teammates speak it; callers say what a dead socket, a
// silent one and a cut connection mean to their reader.
import { connect, type Socket } from 'node:net';

export interface SocketRequestOptions {
  /** Ends the wait with `cancelled` when aborted. */
  signal?: AbortSignal;
  /** Gives up after this long (with `timedOut`). */
  timeoutMs?: number;
  /** Nobody listens there (ENOENT, ECONNREFUSED): the process is gone or closing. */
  gone: () => Error;
  /** The other side closed without an answer. */
  closed: () => Error;
  timedOut?: () => Error;
}

export function socketRequest<T>(socket: string, request: unknown, options: SocketRequestOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    const connection = connect({ path: socket });
    let buffer = '';
    let settled = false;
    const finish = (outcome: T | Error) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      connection.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = options.timeoutMs
      ? setTimeout(() => finish(options.timedOut?.() ?? new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs)
      : undefined;
    const onAbort = () => finish(new Error('cancelled'));
    if (options.signal?.aborted) return finish(new Error('cancelled'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(`${JSON.stringify(request)}\n`));
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish(JSON.parse(buffer.slice(0, end)) as T);
      } catch {
        finish(new Error('huddle answered with something that is not JSON'));
      }
    });
    connection.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ENOENT' || error.code === 'ECONNREFUSED' ? options.gone() : error));
    connection.on('close', () => finish(options.closed()));
  });
}

/**
 * The serving side: reads one JSON line from `connection` and hands it to `request`, or says what
 * is wrong with it to `refuse` (too large, not JSON). Later data is ignored: one request each.
 */
export function readOneRequest(connection: Socket, maxBytes: number, request: (value: unknown) => void, refuse: (error: string) => void): void {
  connection.setEncoding('utf8');
  let buffer = '';
  let answered = false;
  connection.on('data', (chunk: string) => {
    if (answered) return;
    buffer += chunk;
    if (buffer.length > maxBytes) {
      answered = true;
      return refuse('request too large');
    }
    const end = buffer.indexOf('\n');
    if (end < 0) return;
    answered = true;
    let value: unknown;
    try {
      value = JSON.parse(buffer.slice(0, end));
    } catch {
      return refuse('the request is not JSON');
    }
    request(value);
  });
}
