// A model call that never got an HTTP answer, in words a person can act on: which host and port
// it tried (the API's, or ANTHROPIC_BASE_URL's) and why it failed, read from the error's `cause`
// chain (Node's fetch puts the socket's code there: ECONNREFUSED, ENOTFOUND, a TLS code…).
// The SDK's own timeout is told by the caller (model-client.ts has the SDK loaded): importing its class here
// would load the SDK at every face's start (docs/architecture.md#import-rules, what a face loads at start).

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** `host:port` of the base URL, the port made explicit. */
export function endpointOf(baseURL: string | undefined): string {
  try {
    const url = new URL(baseURL || DEFAULT_BASE_URL);
    const port = url.port || (url.protocol === 'http:' ? '80' : '443');
    return `${url.hostname}:${port}`;
  } catch {
    return baseURL ?? DEFAULT_BASE_URL;
  }
}

/** The first `code` in the error's cause chain (undici nests the socket error one or two levels down). */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The messages of the error's cause chain, one per line. */
function causeMessage(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === 'object'; depth++) {
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string') messages.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return messages.join('\n');
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** Why the connection failed, in a few words and with the code (`refused (ECONNREFUSED)`); `timedOut`: the SDK's own timeout. */
export function connectionCause(error: unknown, timedOut = false): string {
  if (timedOut) return 'timed out';
  const code = causeCode(error);
  if (!code) return error instanceof Error && error.message ? error.message : 'unknown cause';
  if (code === 'ECONNREFUSED') return 'refused (ECONNREFUSED): nothing listens there';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the name did not resolve (DNS, ${code})`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return `the connection was cut (${code})`;
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return `timed out (${code})`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `no route to the host (${code})`;
  if (TLS_CODE.test(code)) return `TLS failed (${code})`;
  // node:https reports OpenSSL's failure as EPROTO, its reason only in the message ("…:SSL routines:…:wrong version number").
  const ssl = code === 'EPROTO' ? /SSL routines:[^:]*:([^\n:]+)/.exec(causeMessage(error))?.[1] : undefined;
  if (ssl) return `TLS failed (EPROTO: ${ssl.trim()})`;
  return code;
}

/** `connection to api.anthropic.com:443 failed: refused (ECONNREFUSED): nothing listens there`. */
export function describeConnectionError(error: unknown, baseURL: string | undefined, timedOut = false): string {
  return `connection to ${endpointOf(baseURL)} failed: ${connectionCause(error, timedOut)}`;
}
