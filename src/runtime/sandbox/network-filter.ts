// Network allow/deny lists for sandboxed commands. With a list, the command gets a network
// namespace of its own (no route out) whose loopback port 3128 socat bridges to this process's
// filtering HTTP proxy on a Unix socket; HTTP_PROXY/HTTPS_PROXY point there. The proxy allows
// CONNECT (https, and anything tunnelled the same way) and plain http to hosts the lists allow,
// judged by address (network-rules.ts), and answers 403 with the reason otherwise. Programs that
// ignore the proxy variables get no network at all, which is the safe way to fail.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { formatAddress, type IpAddress } from './network-address.js';
import { NetworkRules } from './network-rules.js';
import type { NetworkSettings } from './options.js';
import { huddleRuntimeDir, listenPrivately, removeAtExit } from './runtime-dir.js';

export const PROXY_PORT = 3128;
/** Where the proxy's socket appears inside the sandbox (its /tmp is private). */
export const PROXY_SOCKET_INSIDE = '/tmp/.huddle-network.sock';

const proxies = new Map<string, Promise<string>>();
/** The host socket of a filtering proxy for these lists (started once per distinct list). */
export function filteringProxy(network: NetworkSettings): Promise<string> {
  const key = JSON.stringify([network.allow ?? [], network.deny ?? []]);
  let socket = proxies.get(key);
  if (!socket) {
    socket = startFilteringProxy(new NetworkRules(network));
    proxies.set(key, socket);
  }
  return socket;
}

/**
 * A proxy applying `rules`. It listens in huddle's private runtime directory (owner-only, hidden
 * from sandboxes), named after this process: removed when it exits, swept by the next huddle if it
 * was killed.
 */
export async function startFilteringProxy(rules: NetworkRules): Promise<string> {
  const socketPath = path.join(huddleRuntimeDir(), `net-${process.pid}-${randomBytes(6).toString('hex')}.sock`);
  removeAtExit(socketPath);
  const server = net.createServer((client) => handle(client, rules));
  await listenPrivately(server, socketPath);
  server.unref(); // never what keeps huddle running
  return socketPath;
}

function handle(client: net.Socket, rules: NetworkRules): void {
  let head = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  const refuse = (status: string, message: string) =>
    void client.end(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message) + 1}\r\nConnection: close\r\n\r\n${message}\n`,
    );
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > 64 * 1024) client.end('HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n');
      return;
    }
    client.off('data', onData);
    client.pause();
    const [requestLine = ''] = head.subarray(0, end).toString('latin1').split('\r\n');
    const [method = '', target = ''] = requestLine.split(' ');
    const connect = method.toUpperCase() === 'CONNECT';
    const where = connect ? connectTarget(target) : requestTarget(target);
    if (!where) return refuse('400 Bad Request', 'huddle sandbox proxy: only CONNECT host:port and absolute http:// URLs');
    // Checked once, by address; the connection goes to that very address (no second lookup).
    void rules.check(where.host).then(
      (verdict) => {
        if (client.destroyed) return;
        if (!verdict.ok) return refuse('403 Forbidden', `huddle sandbox: ${verdict.reason}`);
        forward(verdict.address, where.port, connect ? head.subarray(end + 4) : head, connect);
      },
      // Refused rather than let through, and never an unhandled rejection in huddle.
      (error: unknown) => refuse('502 Bad Gateway', `huddle sandbox proxy: ${error instanceof Error ? error.message : String(error)}`),
    );
  };
  const forward = (address: IpAddress, port: number, first: Buffer, connect: boolean) => {
    const upstream = net.connect({ host: formatAddress(address), port });
    upstream.on('error', (error) => {
      if (!client.destroyed) refuse('502 Bad Gateway', `huddle sandbox proxy: ${error.message}`);
    });
    upstream.once('connect', () => {
      if (connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (first.length) upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  client.on('data', onData);
}

/** CONNECT's `host:port` or `[v6]:port`. */
function connectTarget(target: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1]!, port } : undefined;
}

/** A plain request's absolute http:// URL. */
function requestTarget(target: string): { host: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !url.hostname) return undefined;
  return { host: url.hostname, port: Number(url.port || 80) };
}

/** A TCP port on the sandbox's own loopback that leads to a Unix socket of huddle's (bound inside at `inside`). */
export interface LoopbackBridge {
  port: number;
  inside: string;
}

/** The shell prefix that starts the bridges inside the sandbox and waits until they listen. */
export function bridgeScript(socat: string, bridges: readonly LoopbackBridge[] = [{ port: PROXY_PORT, inside: PROXY_SOCKET_INSIDE }]): string {
  const start = bridges
    .map(({ port, inside }) => `${socat} TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${inside} >/dev/null 2>&1 & `)
    .join('');
  const listening = bridges
    .map(({ port }) => `grep -q ':${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp 2>/dev/null`)
    .join(' && ');
  return `${start}for _ in $(seq 200); do ${listening} && break; sleep 0.005; done; exec "$@"`;
}

export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: 'localhost,127.0.0.1,::1',
    no_proxy: 'localhost,127.0.0.1,::1',
  };
}
