// One HTTP request for the model client, made with node:http(s): a status, headers and a body read
// as bytes. Not Node's built-in fetch, nor its Headers and Response: their first use loads Node's
// bundled undici, which cost more than the rest of a headless run's start. Failures look as
// fetch's do, so connection-error.ts reads them the same way: TypeError('fetch failed') whose cause
// is the socket's error with its code, TypeError('terminated') for a connection cut in the body,
// and the signal's AbortError, before or during the body. A proxy from the environment
// (NODE_USE_ENV_PROXY) and a redirect are the built-in fetch's to follow, and go to it.
import type http from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

export interface HttpRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal | undefined;
}

export interface HttpAnswer {
  status: number;
  /** A response header's value (names in any case); undefined when absent. */
  header(name: string): string | undefined;
  /** The body as sent, decompressed; read once. A cut connection fails it with TypeError('terminated'). */
  body: AsyncIterable<Uint8Array>;
  /** Closes the connection without reading the rest of the body. */
  discard(): void;
}

/** undici's connect timeout, which the built-in fetch applies. */
const CONNECT_TIMEOUT_MS = 10_000;

export function httpRequest(url: URL, init: HttpRequestInit): Promise<HttpAnswer> {
  // Taken as Node's own modules, not imported: an import of node:http evaluates undici for its lazy
  // WebSocket export, and node:https (tls) is loaded only for an https endpoint.
  const client =
    url.protocol === 'https:' ? process.getBuiltinModule('node:https') : url.protocol === 'http:' ? process.getBuiltinModule('node:http') : undefined;
  // A proxy from the environment is the built-in fetch's to honour (node:http's agent does only from Node 24.5).
  if (!client || process.env.NODE_USE_ENV_PROXY) return viaFetch(url, init);
  const { signal } = init;
  const aborted = () => abortReason(signal);
  if (signal?.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method: init.method, headers: init.headers });
    // As the built-in fetch: a connection not made within 10 s fails (node:http would wait for the kernel, ~2 min).
    request.once('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        request.destroy(Object.assign(new Error(`connect ETIMEDOUT ${url.host}`), { code: 'ETIMEDOUT' }));
      }, CONNECT_TIMEOUT_MS);
      timer.unref();
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    const onAbort = () => {
      const reason = aborted();
      reject(reason);
      request.destroy(reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    request.once('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? aborted() : new TypeError('fetch failed', { cause: error }));
    });
    request.once('response', (response) => {
      // An error after the answer reaches the body's reader (bodyOf); a body not read has nobody to tell.
      response.on('error', () => undefined);
      signal?.removeEventListener('abort', onAbort);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        // Redirects (never the API's own) are followed as fetch follows them.
        response.resume();
        resolve(viaFetch(url, init));
        return;
      }
      // After the headers an abort ends the body the same way: its reader fails with the AbortError.
      const abortBody = () => response.destroy(aborted());
      signal?.addEventListener('abort', abortBody, { once: true });
      response.once('close', () => signal?.removeEventListener('abort', abortBody));
      const header = (name: string) => {
        const value = response.headers[name.toLowerCase()];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      resolve({ status, header, body: bodyOf(decode(response, header('content-encoding')), response), discard: () => response.destroy() });
    });
    request.end(init.body);
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * The body's chunks; a connection cut mid-body fails as fetch's does, TypeError('terminated') with the
 * socket's error as cause. A read that stops early closes the connection, a decompressor's too.
 */
async function* bodyOf(body: Readable, response: http.IncomingMessage): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch (error) {
    throw (error as Error).name === 'AbortError' ? error : new TypeError('terminated', { cause: error });
  } finally {
    if (!response.complete) response.destroy();
  }
}

/** The body as fetch hands it over: decompressed when the server compressed it. */
function decode(response: http.IncomingMessage, encoding: string | undefined): Readable {
  const codings = (encoding ?? '')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding && coding !== 'identity');
  let stream: Readable = response;
  for (const coding of codings.reverse()) {
    const inflate =
      coding === 'gzip' || coding === 'x-gzip'
        ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
        : coding === 'deflate'
          ? zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
          : coding === 'br'
            ? zlib.createBrotliDecompress()
            : undefined;
    if (!inflate) return stream;
    const source = stream;
    source.once('error', (error) => inflate.destroy(error));
    stream = source.pipe(inflate);
  }
  return stream;
}

/** The same request through the built-in fetch (a proxy, a redirect, a protocol node:http lacks). */
async function viaFetch(url: URL, init: HttpRequestInit): Promise<HttpAnswer> {
  const response = await fetch(url, { method: init.method, headers: init.headers, body: init.body ?? null, signal: init.signal ?? null });
  const body = response.body;
  return {
    status: response.status,
    header: (name) => response.headers.get(name) ?? undefined,
    body: body ? (body as unknown as AsyncIterable<Uint8Array>) : emptyBody(),
    // Closing a body nobody reads: a failure to close it has nothing left to tell.
    discard: () => void body?.cancel().catch(() => undefined),
  };
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
