// The filtering proxy connects to the address it checked, never to the name again: a resolver that
// answers one thing to the check and another to a second lookup (DNS rebinding) gains nothing. Here
// the proxy's resolver says `localhost` is 127.0.0.2 (allowed), while the system's says 127.0.0.1
// (denied, where the victim listens): a proxy that handed the name to connect() would reach it.
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAddress } from '../../../src/runtime/sandbox/network-address.js';
import { startFilteringProxy } from '../../../src/runtime/sandbox/network-filter.js';
import { NetworkRules, type Resolver } from '../../../src/runtime/sandbox/network-rules.js';

const MARKER = 'hello from the host';
let victim: Server;
let port: number;

beforeAll(async () => {
  victim = createServer((_req, res) => res.end(`${MARKER}\n`));
  await new Promise<void>((resolve) => victim.listen(0, '127.0.0.1', resolve));
  port = (victim.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => victim.close(resolve));
});

/** Sends `request` to the proxy's socket and returns all it answers. */
function ask(socket: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = net.connect(socket);
    let answer = '';
    client.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    client.on('error', reject);
    client.on('close', () => resolve(answer));
    client.write(request);
  });
}

describe('the filtering proxy', () => {
  it('connects to the address it checked (one lookup; DNS rebinding gains nothing)', async () => {
    const asked: string[] = [];
    const resolver: Resolver = {
      async resolve(name) {
        asked.push(name);
        return [parseAddress('127.0.0.2')!];
      },
      interfaceAddresses: () => [],
    };
    const socket = await startFilteringProxy(new NetworkRules({ allow: ['*'], deny: ['127.0.0.1/32'] }, resolver));
    const get = `GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    const tunnelled = await ask(socket, `CONNECT localhost:${port} HTTP/1.1\r\n\r\n${get}`);
    expect(tunnelled).not.toContain(MARKER);
    expect(tunnelled).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*127\.0\.0\.2/);
    const plain = await ask(socket, `GET http://localhost:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(plain).not.toContain(MARKER);
    expect(asked).toEqual(['localhost', 'localhost']);
    // The address itself is refused, with the reason.
    const denied = await ask(socket, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    expect(denied).toContain('403 Forbidden');
    expect(denied).toContain('huddle sandbox: 127.0.0.1 is denied by the sandbox network settings (127.0.0.1/32)');
  });

  it('passes what the rules allow, at the checked address', async () => {
    const resolver: Resolver = { resolve: async () => [parseAddress('127.0.0.1')!], interfaceAddresses: () => [] };
    const socket = await startFilteringProxy(new NetworkRules({ allow: ['localhost'] }, resolver));
    const answer = await ask(socket, `CONNECT localhost:${port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\n/);
    expect(answer).toContain(MARKER);
  });

  it('deny localhost holds for what the URL standard folds into it (percent-encoding, full-width, other dots, UTF-8)', async () => {
    const socket = await startFilteringProxy(new NetworkRules({ deny: ['localhost'] }));
    for (const host of ['%6c%6f%63%61%6c%68%6f%73%74', '127.0.0.1%2e', 'ｌｏｃａｌｈｏｓｔ', '127。0。0。1', '①②⑦.0.0.1', 'user@127.1']) {
      const answer = await ask(socket, `GET http://${host}:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer, host).not.toContain(MARKER);
      expect(answer, host).toMatch(/^HTTP\/1\.1 (403 Forbidden|400 Bad Request)\r\n/);
    }
    for (const host of ['ｌｏｃａｌｈｏｓｔ', '127。0。0。1', 'localhost%00', '127.0.0.1%2e']) {
      const answer = await ask(socket, `CONNECT ${host}:${port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer, host).not.toContain(MARKER);
    }
  });

  it('refuses what is no CONNECT target or http URL', async () => {
    const socket = await startFilteringProxy(new NetworkRules({ allow: ['*'] }));
    for (const request of [
      `CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n`,
      `CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n`,
      `GET /relative HTTP/1.1\r\n\r\n`,
      `GET ftp://127.0.0.1:${port}/ HTTP/1.1\r\n\r\n`,
    ]) {
      expect(await ask(socket, request), request).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    }
  });
});
