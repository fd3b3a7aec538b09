// The fetch huddle gives the model SDK: the same request and the same Response, made with node:http
// instead of Node's built-in fetch. The built-in fetch compiles undici's HTTP parser (WebAssembly)
// and builds its dispatcher on the first call, which cost a headless run more CPU than its whole
// module graph took to load; node:http's parser is already in Node. What the SDK sees is what
// fetch would give it: a Response (status, headers, a web stream body), a TypeError('fetch failed')
// whose cause is the socket's error with its code (connection-error.ts reads it), the signal's
// AbortError when aborted, before or during the body. A request this does not cover (a body other
// than text or bytes, an unknown protocol) and a redirect go to the built-in fetch, which does.
import type http from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** Statuses whose Response has no body (the constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** undici's connect timeout, which the built-in fetch applies. */
const CONNECT_TIMEOUT_MS = 10_000;

export function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  // Taken as Node's own modules, not imported: an import of node:http evaluates undici for its lazy
  // WebSocket export, and node:https (tls) is loaded only for an https endpoint.
  const client =
    url.protocol === 'https:' ? process.getBuiltinModule('node:https') : url.protocol === 'http:' ? process.getBuiltinModule('node:http') : undefined;
  if (
    !client ||
    // A proxy from the environment is the built-in fetch's to honour (node:http's agent does only from Node 24.5).
    process.env.NODE_USE_ENV_PROXY ||
    !(input instanceof URL || typeof input === 'string') ||
    !(body == null || typeof body === 'string' || body instanceof Uint8Array)
  ) {
    return fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  const aborted = () => (signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'));
  if (signal?.aborted) return Promise.reject(aborted());
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method: init.method ?? 'GET', headers });
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
      try {
        respond(response);
      } catch (error) {
        // A status the Response cannot hold (outside 200-599) fails the call as fetch fails one: never uncaught.
        response.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    const respond = (response: http.IncomingMessage) => {
      // An error after the answer reaches the body's stream (webStream); a body not read has nobody to tell.
      response.on('error', () => undefined);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location && init.redirect !== 'manual') {
        // Redirects (never the API's own) are followed as fetch follows them.
        signal?.removeEventListener('abort', onAbort);
        response.resume();
        resolve(fetch(input, init));
        return;
      }
      const answer = new Headers();
      for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) answer.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
      // After the headers an abort ends the body the same way: its stream fails with the AbortError.
      signal?.removeEventListener('abort', onAbort);
      const abortBody = () => response.destroy(aborted());
      signal?.addEventListener('abort', abortBody, { once: true });
      response.once('close', () => signal?.removeEventListener('abort', abortBody));
      if (NULL_BODY.has(status) || init.method === 'HEAD') {
        response.resume();
        resolve(new Response(null, { status, statusText: response.statusMessage ?? '', headers: answer }));
        return;
      }
      const decoded = decode(response, answer.get('content-encoding'));
      resolve(new Response(webStream(decoded, response), { status, statusText: response.statusMessage ?? '', headers: answer }));
    };
    request.end(body ?? undefined);
  });
}

/**
 * The body as a web stream, read as the SDK pulls it. A connection cut mid-body fails it as fetch's
 * does, TypeError('terminated') with the socket's error as cause; an abort, with the AbortError.
 */
function webStream(body: Readable, response: http.IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      body.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.once('end', () => controller.close());
      body.once('error', (error) => controller.error(error.name === 'AbortError' ? error : new TypeError('terminated', { cause: error })));
    },
    pull() {
      body.resume();
    },
    cancel() {
      body.destroy();
      response.destroy();
    },
  });
}

/** The body as fetch hands it over: decompressed when the server compressed it. */
function decode(response: http.IncomingMessage, encoding: string | null): Readable {
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
