// The sandbox's network settings: on by default; `enabled: false` leaves a command no network;
// allow/deny lists send it through huddle's filtering proxy (its only way out), which lets allowed
// hosts through and answers 403 for the rest. Requests are made with bash's /dev/tcp, so no client
// program is needed; the server is a local one (127.0.0.1) on the host.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { configureSandbox } from '../../../src/runtime/sandbox/index.js';
import { hasSocat } from '../../../src/runtime/sandbox/status.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const registry = new ToolRegistry(coreTools());
let server: Server;
let port: number;
let arena: Arena;

beforeAll(async () => {
  arena = makeArena('network-');
  server = createServer((_req, res) => res.end('hello from the host\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  configureSandbox({});
  await new Promise((resolve) => server.close(resolve));
  arena.cleanup();
});

const bash = (command: string) => registry.run('bash', { command, timeout_ms: 20_000 }, makeToolContext(arena.ws));
/** An HTTP GET sent to `host:hostPort`, asking for `url` (absolute form when through the proxy). */
const get = (host: string, hostPort: number | string, url: string) =>
  bash(`exec 3<>/dev/tcp/${host}/${hostPort} && printf 'GET ${url} HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3`);

describeSandboxed('the sandbox network', () => {
  it('is on by default', async () => {
    configureSandbox({});
    expect((await get('127.0.0.1', port, '/')).content).toContain('hello from the host');
  });

  it('is off with enabled: false', async () => {
    configureSandbox({ network: { enabled: false } });
    const result = await get('127.0.0.1', port, '/');
    expect(result.content).not.toContain('hello from the host');
    expect(result.isError).toBe(true);
  });

  // socat bridges the sandbox to the proxy: CI installs it (.ci/run); locally, apt-get install socat.
  const noSocat = !hasSocat() && process.env.CI !== 'true';
  it.skipIf(noSocat)(
    `with lists, goes only through the filtering proxy, which refuses hosts off the allow-list${noSocat ? ' [skipped: apt-get install socat]' : ''}`,
    async () => {
      configureSandbox({ network: { allow: ['127.0.0.1'], deny: ['*.blocked.invalid'] } });
      const allowed = await get('127.0.0.1', '3128', `http://127.0.0.1:${port}/`);
      expect(allowed.content).toContain('hello from the host');
      const refused = await get('127.0.0.1', '3128', `http://example.invalid:${port}/`);
      expect(refused.content).toContain('403 Forbidden');
      expect(refused.content).toContain('example.invalid is not on the sandbox network allow-list');
      const denied = await get('127.0.0.1', '3128', 'http://a.blocked.invalid/');
      expect(denied.content).toContain('denied by the sandbox network settings');
      // Around the proxy there is no way out.
      expect((await get('127.0.0.1', port, '/')).content).not.toContain('hello from the host');
      expect((await bash('echo "$HTTPS_PROXY"')).content).toBe('http://127.0.0.1:3128');
    },
  );
});
