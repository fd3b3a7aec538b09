// The sandbox's network rules hold by address, not by spelling: with `deny: ["localhost"]` no way of
// writing this machine's loopback (127.1, 2130706433, 0x7f000001, [::ffff:127.0.0.1], 0.0.0.0,
// localhost., a name /etc/hosts maps there…) reaches a server on 127.0.0.1/[::1] of the host, whether
// through the proxy's CONNECT, an absolute-form GET, curl, node or bash's /dev/tcp; with
// `network.enabled: false` nothing reaches it at all; and the host's abstract Unix sockets stay out
// of reach of a sandbox with a network of its own. The victim servers listen on loopback only.
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { configureSandbox } from '../../../src/runtime/sandbox/index.js';
import { hasSocat } from '../../../src/runtime/sandbox/status.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const MARKER = 'hello from the host';
const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'network-probe.sh');

/** Every spelling of this machine's loopback tried; the v6 ones only where the host has ::1. */
const V4_SPELLINGS = [
  'localhost',
  'LOCALHOST',
  'localhost.',
  'LocalHost.',
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '2130706433',
  '0x7f000001',
  '0x7f.1',
  '0x7f.0.0.1',
  '0177.0.0.1',
  '0177.1',
  '127.000.000.001',
  '0.0.0.0',
  '0',
  '127.0.0.1.',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[::127.0.0.1]',
];
const V6_SPELLINGS = ['[::1]', '[0:0:0:0:0:0:0:1]', '[0000::0001]', '[::]', '[::1%lo]', 'ip6-localhost', 'ip6-loopback'];

const registry = new ToolRegistry(coreTools());
let arena: Arena;
let port: number;
const servers: Server[] = [];
let hasV6 = true;
/** Names of this machine that resolve to loopback (its hostname, /etc/hosts entries), if any. */
const hostNames: string[] = [];

function listen(host: string, wanted: number): Promise<Server> {
  const server = createServer((_req, res) => res.end(`${MARKER}\n`));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, host, () => resolve(server));
  });
}

beforeAll(async () => {
  arena = makeArena('network-addresses-');
  const v4 = await listen('127.0.0.1', 0);
  servers.push(v4);
  port = (v4.address() as AddressInfo).port;
  try {
    servers.push(await listen('::1', port));
  } catch {
    hasV6 = false;
  }
  for (const name of [os.hostname()]) {
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length && addresses.every((a) => a.address.startsWith('127.') || a.address === '::1')) hostNames.push(name);
  }
});
afterAll(async () => {
  configureSandbox({});
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  arena.cleanup();
});

const bash = (command: string) => registry.run('bash', { command, timeout_ms: 120_000 }, makeToolContext(arena.ws));

/** Runs every probe for `spellings` in the sandbox: which got through, and how many were tried. */
async function probe(spellings: readonly string[]): Promise<{ reached: string[]; tried: number }> {
  const quoted = spellings.map((s) => `'${s}'`).join(' ');
  const result = await bash(`bash ${PROBE} '${MARKER}' ${port} ${quoted}`);
  const lines = result.content.split('\n');
  return {
    reached: lines
      .filter((l) => l.startsWith('REACHED '))
      .map((l) => l.slice(8))
      .sort(),
    tried: lines.filter((l) => l.startsWith('TRIED ')).length,
  };
}

const spellings = () => [...V4_SPELLINGS, ...(hasV6 ? V6_SPELLINGS : []), ...hostNames];
const noSocat = !hasSocat() && process.env.CI !== 'true';
const socatNote = noSocat ? ' [skipped: apt-get install socat]' : '';

describeSandboxed('the sandbox network by address', () => {
  it.skipIf(noSocat)(
    `the probes do reach the host through the proxy when the lists let them${socatNote}`,
    async () => {
      configureSandbox({ network: { deny: ['*.invalid'] } });
      const { reached } = await probe(['127.0.0.1', '127.1', '[::ffff:127.0.0.1]', ...(hasV6 ? ['[::1]'] : [])]);
      for (const method of ['bash-connect', 'bash-get', 'node-connect', 'curl-connect']) {
        expect(reached).toContain(`${method} 127.0.0.1`);
        expect(reached).toContain(`${method} [::ffff:127.0.0.1]`);
        if (hasV6) expect(reached).toContain(`${method} [::1]`);
      }
      // Around the proxy there is no way out: bash's own /dev/tcp reaches the sandbox's loopback only.
      expect(reached.filter((r) => r.startsWith('bash-direct') || r.startsWith('node-direct'))).toEqual([]);
    },
    180_000,
  );

  it.skipIf(noSocat)(
    `deny: ["localhost"] holds for every spelling of loopback, by every way in${socatNote}`,
    async () => {
      configureSandbox({ network: { deny: ['localhost'] } });
      const all = spellings();
      const { reached, tried } = await probe(all);
      expect(tried).toBe(all.length * 8);
      expect(reached).toEqual([]);
    },
    180_000,
  );

  it.skipIf(noSocat)(
    `an allow-list without loopback on it holds the same way${socatNote}`,
    async () => {
      configureSandbox({ network: { allow: ['registry.npmjs.org', '*.example.com'] } });
      const { reached } = await probe(spellings());
      expect(reached).toEqual([]);
    },
    180_000,
  );

  it('network.enabled: false: no spelling reaches the host by any way', async () => {
    configureSandbox({ network: { enabled: false } });
    const all = spellings();
    const { reached, tried } = await probe(all);
    expect(tried).toBe(all.length * 8);
    expect(reached).toEqual([]);
  }, 180_000);

  it.skipIf(!hasSocat())(
    "the host's abstract Unix sockets are out of reach with the network off or with lists",
    async () => {
      const name = `huddle-test-${randomBytes(6).toString('hex')}`;
      const abstract = net.createServer((socket) => socket.end(`${MARKER}\n`));
      await new Promise<void>((resolve) => abstract.listen(`\0${name}`, resolve));
      try {
        const reach = () => bash(`timeout 10 socat -u ABSTRACT-CONNECT:${name} - 2>&1; true`);
        // Where the sandbox shares the host's network (on, no lists) the socket is there: the probe works.
        configureSandbox({});
        expect((await reach()).content).toContain(MARKER);
        configureSandbox({ network: { enabled: false } });
        expect((await reach()).content).not.toContain(MARKER);
        configureSandbox({ network: { deny: ['localhost'] } });
        expect((await reach()).content).not.toContain(MARKER);
        configureSandbox({ network: { allow: ['*.example.com'] } });
        expect((await reach()).content).not.toContain(MARKER);
      } finally {
        await new Promise((resolve) => abstract.close(resolve));
      }
    },
    120_000,
  );
});
