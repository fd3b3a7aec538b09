// Network allow/deny lists for sandboxed commands. With a list, the command gets a network
// namespace of its own (no route out) whose loopback port 3128 socat bridges to this process's
// filtering HTTP proxy on a Unix socket; HTTP_PROXY/HTTPS_PROXY point there. The proxy allows
// CONNECT (https, and anything tunnelled the same way) and plain http to hosts the lists allow,
// and answers 403 with the reason otherwise. Programs that ignore the proxy variables get no
// network at all, which is the safe way to fail.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import type { NetworkSettings } from './options.js';
import { huddleRuntimeDir, listenPrivately, removeAtExit } from './runtime-dir.js';

export const PROXY_PORT = 3128;
/** Where the proxy's socket appears inside the sandbox (its /tmp is private). */
export const PROXY_SOCKET_INSIDE = '/tmp/.huddle-network.sock';

/** `example.com` matches itself; `*.example.com` its subdomains; `*` everything. */
export function hostMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  const p = pattern.trim().toLowerCase();
  if (p === '*') return true;
  if (p.startsWith('*.')) return h.endsWith(p.slice(1));
  return h === p;
}

/** Undefined when the host may be reached; otherwise why not. */
export function hostRefusal(host: string, network: NetworkSettings): string | undefined {
  const deny = network.deny ?? [];
  const allow = network.allow ?? [];
  const denied = deny.find((p) => hostMatches(host, p));
  if (denied) return `${host} is denied by the sandbox network settings (${denied})`;
  if (allow.length && !allow.some((p) => hostMatches(host, p))) return `${host} is not on the sandbox network allow-list (${allow.join(', ')})`;
  return undefined;
}

const proxies = new Map<string, Promise<string>>();

/** The host socket of a filtering proxy for these lists (started once per distinct list). */
export function filteringProxy(network: NetworkSettings): Promise<string> {
  const key = JSON.stringify([network.allow ?? [], network.deny ?? []]);
  let socket = proxies.get(key);
  if (!socket) {
    socket = startProxy(network);
    proxies.set(key, socket);
  }
  return socket;
}

/**
 * The proxy listens in huddle's private runtime directory (owner-only, hidden from sandboxes),
 * named after this process: removed when it exits, swept by the next huddle if it was killed.
 */
async function startProxy(network: NetworkSettings): Promise<string> {
  const socketPath = path.join(huddleRuntimeDir(), `net-${process.pid}-${randomBytes(6).toString('hex')}.sock`);
  removeAtExit(socketPath);
  const server = net.createServer((client) => handle(client, network));
  await listenPrivately(server, socketPath);
  server.unref(); // never what keeps huddle running
  return socketPath;
}

function handle(client: net.Socket, network: NetworkSettings): void {
  let head = Buffer.alloc(0);
  client.on('error', () => client.destroy());
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
    let host: string;
    let port: number;
    if (method.toUpperCase() === 'CONNECT') {
      const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
      if (!match) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      host = match[1]!;
      port = Number(match[2]);
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return void client.end('HTTP/1.1 400 Bad Request\r\n\r\nhuddle sandbox proxy: only absolute http:// URLs and CONNECT\n');
      }
      host = url.hostname.replace(/^\[|\]$/g, '');
      port = Number(url.port || 80);
    }
    const refusal = hostRefusal(host, network);
    if (refusal) {
      const body = `huddle sandbox: ${refusal}\n`;
      return void client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    const upstream = net.connect(port, host);
    upstream.on('error', (error) => {
      if (!client.destroyed) client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\nhuddle sandbox proxy: ${error.message}\n`);
    });
    upstream.once('connect', () => {
      if (method.toUpperCase() === 'CONNECT') {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length) upstream.write(rest);
      } else {
        upstream.write(head);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  client.on('data', onData);
}

/** A TCP port on the sandbox's own loopback that leads to a Unix socket of huddle's (bound inside at `inside`). */
export interface LoopbackBridge {
  port: number;
  inside: string;
}

/** The shell prefix that starts the bridges inside the sandbox and waits until they listen. */
export function bridgeScript(socat: string, bridges: readonly LoopbackBridge[] = [{ port: PROXY_PORT, inside: PROXY_SOCKET_INSIDE }]): string {
  const start = bridges.map(({ port, inside }) => `${socat} TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${inside} >/dev/null 2>&1 & `).join('');
  const listening = bridges.map(({ port }) => `grep -q ':${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp 2>/dev/null`).join(' && ');
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
