// A network namespace joined to this one by a veth pair, for tests that cut a process's link: the
// process runs in the namespace (`ip netns exec`), reaches servers here through TCP proxies on the
// pair's address, and `cut()` takes the link down (nothing gets through, as with a pulled cable)
// until `restore()`. Needs root and iproute2 (`ip`); every name is unique to this run.
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import net from 'node:net';

/** Why namespaces cannot be made here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return "network namespaces need iproute2's `ip` (apt-get install iproute2)";
  }
  return undefined;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export class NetNamespace {
  readonly name: string;
  readonly hostSide: string;
  readonly nsSide: string;
  /** The address of this side of the pair: what the namespace reaches the proxies on. */
  readonly hostIp: string;
  readonly nsIp: string;
  #destroyed = false;

  private constructor(tag: string, subnet: [number, number]) {
    this.name = `huddle-test-${tag}`;
    this.hostSide = `hv${tag}a`;
    this.nsSide = `hv${tag}b`;
    this.hostIp = `10.${subnet[0]}.${subnet[1]}.1`;
    this.nsIp = `10.${subnet[0]}.${subnet[1]}.2`;
  }

  static create(): NetNamespace {
    for (let attempt = 0; ; attempt++) {
      const tag = randomInt(0, 36 ** 6)
        .toString(36)
        .padStart(6, '0');
      const ns = new NetNamespace(tag, [randomInt(200, 250), randomInt(1, 255)]);
      try {
        ns.#setUp();
        return ns;
      } catch (error) {
        ns.destroy();
        if (attempt >= 3) throw error;
      }
    }
  }

  #setUp(): void {
    ip('netns', 'add', this.name);
    ip('link', 'add', this.hostSide, 'type', 'veth', 'peer', 'name', this.nsSide);
    ip('link', 'set', this.nsSide, 'netns', this.name);
    ip('addr', 'add', `${this.hostIp}/30`, 'dev', this.hostSide);
    ip('link', 'set', this.hostSide, 'up');
    ip('netns', 'exec', this.name, 'ip', 'addr', 'add', `${this.nsIp}/30`, 'dev', this.nsSide);
    ip('netns', 'exec', this.name, 'ip', 'link', 'set', this.nsSide, 'up');
    ip('netns', 'exec', this.name, 'ip', 'link', 'set', 'lo', 'up');
  }

  /** The command prefix that runs a program in the namespace. */
  get exec(): string[] {
    return ['ip', 'netns', 'exec', this.name];
  }

  /** Takes the link down: packets between the namespace and here go nowhere. */
  cut(): void {
    ip('link', 'set', this.hostSide, 'down');
  }

  restore(): void {
    ip('link', 'set', this.hostSide, 'up');
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const args of [
      ['link', 'del', this.hostSide],
      ['netns', 'del', this.name],
    ]) {
      try {
        ip(...args);
      } catch {
        // Already gone.
      }
    }
  }
}

/** A TCP proxy listening on `host` (at `port`, else a free one), forwarding each connection to `target`; close() ends it and every connection through it. */
export function tcpProxy(host: string, target: { host: string; port: number }, port = 0): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          server.close();
          for (const socket of sockets) socket.destroy();
        },
      });
    });
  });
}
