// Claude Code needs a key for its model, and whatever is in its environment its own Bash tool can
// read (`env`, /proc/$PPID/environ: the sandbox's PID namespace hides huddle, not the agent's own
// CLI). So huddle's key never enters the sandbox: Claude Code gets a local endpoint
// (ANTHROPIC_BASE_URL=http://127.0.0.1:PORT) and a stand-in key of its own, and this relay, in
// huddle's process, swaps the stand-in for the real key (or bearer token) and passes the request
// and its streamed answer through, otherwise untouched, to huddle's own endpoint. A stand-in is
// good only against this relay, only while its teammate runs. The relay also listens on a Unix
// socket (in huddle's hidden runtime directory) for sandboxes with a network of their own, which
// reach it through a bridge on their loopback at the same port.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import path from 'node:path';
import { customHeaders } from '../../runtime/custom-headers.js';
import { huddleRuntimeDir, listenPrivately, removeAtExit } from '../../runtime/sandbox/runtime-dir.js';

const DEFAULT_UPSTREAM = 'https://api.anthropic.com';

/** Where the real requests go, and with what. */
export interface ModelEndpoint {
  apiKey?: string | undefined;
  authToken?: string | undefined;
  baseURL?: string | undefined;
}

interface Grant {
  upstream: URL;
  header: [string, string];
}

export interface Relay {
  port: number;
  socket: string;
}

const grants = new Map<string, Grant>();
let relay: Promise<Relay> | undefined;

/** One teammate's access to the model through the relay: its stand-in, granted while open. */
export class ModelGrant {
  readonly #token = `huddle-relay-${randomBytes(24).toString('hex')}`;
  readonly #endpoint: ModelEndpoint;
  readonly #bearer: boolean;
  #lease = 0;
  /** The relay's addresses once it listens. */
  ready: Promise<Relay> = Promise.reject(new Error('not open'));

  constructor(endpoint: ModelEndpoint) {
    this.#endpoint = endpoint;
    this.#bearer = !endpoint.apiKey && Boolean(endpoint.authToken);
    // Only marks the rejection handled: whoever awaits `ready` hears it.
    this.ready.catch(() => undefined);
  }

  /** Grants access (again); returns the lease close() takes. */
  open(): number {
    const lease = ++this.#lease;
    const upstream = new URL(this.#endpoint.baseURL || DEFAULT_UPSTREAM);
    const header: [string, string] = this.#bearer ? ['authorization', `Bearer ${this.#endpoint.authToken}`] : ['x-api-key', this.#endpoint.apiKey ?? ''];
    grants.set(this.#token, { upstream, header });
    this.ready = relay ??= startRelay();
    // Only marks the rejection handled: whoever awaits `ready` hears it.
    this.ready.catch(() => undefined);
    return lease;
  }

  /** Takes access away, unless it was granted again since `lease` (a restart). */
  async close(lease?: number): Promise<void> {
    if (lease !== undefined && lease !== this.#lease) return;
    grants.delete(this.#token);
  }

  /** The variable variables() puts the stand-in in (for a CLI configured to read it from there). */
  get keyVariable(): 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN' {
    return this.#bearer ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY';
  }

  /** The CLI's own variables: the relay as its endpoint, the stand-in as its key (or token). */
  async variables(): Promise<Record<string, string>> {
    const { port } = await this.ready;
    return { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, [this.keyVariable]: this.#token };
  }
}

async function startRelay(): Promise<Relay> {
  // Loaded with the first relay, not at start: importing node:http loads Node's fetch (undici) with it.
  const [http, https] = await Promise.all([import('node:http'), import('node:https')]);
  const handle = relayHandler(http, https);
  const tcp = http.createServer(handle);
  const unix = http.createServer(handle);
  for (const server of [tcp, unix]) {
    // A streamed answer may take many minutes; the request itself is read at once.
    server.requestTimeout = 0;
  }
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(0, '127.0.0.1', () => resolve());
  });
  const socket = path.join(huddleRuntimeDir(), `model-${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  removeAtExit(socket);
  await listenPrivately(unix, socket);
  // Never what keeps huddle running.
  tcp.unref();
  unix.unref();
  const address = tcp.address();
  return { port: typeof address === 'object' && address ? address.port : 0, socket };
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

/** The relay's request handler: a granted key's request passed on upstream with the grant's credentials. */
const relayHandler = (http: typeof import('node:http'), https: typeof import('node:https')) =>
  function handle(request: IncomingMessage, response: ServerResponse): void {
    const offered = request.headers['x-api-key'] ?? /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const grant = typeof offered === 'string' ? grants.get(offered) : undefined;
    if (!grant) {
      request.resume();
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'huddle model relay: this key is not (or no longer) granted' } }),
      );
      return;
    }
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (!HOP_BY_HOP.has(name) && name !== 'x-api-key' && name !== 'authorization' && value !== undefined) headers[name] = value;
    }
    // The gateway's headers are huddle's to add: the CLI never sees ANTHROPIC_CUSTOM_HEADERS (runtime/custom-headers.ts).
    Object.assign(headers, customHeaders());
    headers[grant.header[0]] = grant.header[1];
    const prefix = grant.upstream.pathname.replace(/\/+$/, '');
    const target = new URL(`${prefix}${request.url ?? '/'}`, grant.upstream);
    const client = target.protocol === 'https:' ? https : http;
    const upstream = client.request(target, { method: request.method, headers }, (answer) => {
      const back: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
      response.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(response);
    });
    upstream.on('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `huddle model relay: ${error.message}` } }));
    });
    // The CLI went away (an interrupt): so does its request.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  };
