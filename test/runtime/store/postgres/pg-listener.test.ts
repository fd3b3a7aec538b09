// The LISTEN connection (pg-listener.ts): a subscription whose first connection fails keeps no
// handler behind (it would otherwise hear the channel once the server is back, for a subscriber
// that was told it failed), and a process whose listener retries through an outage can still exit.
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { channelOf, Listener } from '../../../../src/runtime/store/postgres/pg-listener.js';
import { tcpProxy } from '../../../helpers/netns.js';
import { describePostgres } from '../../../helpers/postgres.js';
import { bundlePgFixture, runFixture } from './fixtures/bundle.js';

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describePostgres('the LISTEN connection', (base) => {
  // The server behind the proxies (read in the tests: without a server the suite is only listed).
  const target = () => ({ host: new URL(base).hostname, port: Number(new URL(base).port || 5432) });
  const closers: Array<() => void> = [];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const close of closers) close();
  });

  it('a subscription whose connection failed keeps no handler: the channel, heard later, never reaches it', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const url = new URL(base);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const channel = channelOf(`listener-${randomUUID()}`);
    const failedHeard: string[] = [];
    await expect(
      Listener.for(url.href, 200).subscribe(channel, { notify: (p) => failedHeard.push(`notify ${p}`), resync: () => failedHeard.push('resync') }),
    ).rejects.toThrow();

    // The server becomes reachable there; another subscriber listens and hears a notification.
    const proxy = await tcpProxy('127.0.0.1', target(), port);
    closers.push(proxy.close);
    let heard: (payload: string) => void = () => undefined;
    const got = new Promise<string>((resolve) => (heard = resolve));
    const unsubscribe = await Listener.for(url.href, 200).subscribe(channel, { notify: (payload) => heard(payload), resync: () => undefined });
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query('SELECT pg_notify($1, $2)', [channel, 'hello']);
      expect(await got).toBe('hello');
    } finally {
      await admin.end();
      unsubscribe();
    }
    expect(failedHeard).toEqual([]);
  });

  it('a process whose listener retries through an outage still exits when it has nothing else to do', { timeout: 60_000 }, async () => {
    const proxy = await tcpProxy('127.0.0.1', target());
    closers.push(proxy.close);
    const url = new URL(base);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const file = await bundlePgFixture('listener-outage');
    let ready: () => void = () => undefined;
    const listening = new Promise<void>((resolve) => (ready = resolve));
    const { child, exited } = runFixture(file, { url: url.href, channel: channelOf(`outage-${randomUUID()}`) }, (line) => {
      if ((JSON.parse(line) as { listening?: boolean }).listening) ready();
    });
    children.push(child);
    await Promise.race([listening, exited.then((exit) => Promise.reject(new Error(`the fixture exited early: ${exit.stderr}`)))]);
    // The outage: the link goes and nothing answers there any more; the listener keeps retrying.
    proxy.close();
    const exit = await exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stderr).toMatch(/^exiting after 0 resyncs\n$/);
  });
});
