// A team through PgBouncer in transaction mode (docs/postgresql-managed.md#poolers): with
// `postgres.pooler: "transaction"` huddle sends no startup parameters, no named prepared statements
// and no LISTEN, and two processes' stores still see each other's changes (by polling): claims are
// each given once, messages wake the waiting recipient. Without the setting, the refusal is one
// line that names it. PgBouncer is Debian's package (`apt-get install pgbouncer`; .ci/run installs it),
// started here on a free port in front of the tests' server, with a pool small enough that one
// client's transactions land on different server connections.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) => existsSync(file));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describePostgres('a team through PgBouncer in transaction mode', (base) => {
  if (!PGBOUNCER) {
    if (process.env.CI === 'true') it('needs pgbouncer (apt-get install pgbouncer)', () => expect.fail('pgbouncer is not installed'));
    else describe.skip('(skipped: pgbouncer is not installed; apt-get install pgbouncer)', () => undefined);
    return;
  }
  let dir: string;
  let bouncer: ChildProcess | undefined;
  let via: string;
  const stores: TeamStore[] = [];
  const workspaces: string[] = [];
  const workspace = () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'huddle-pgbouncer-ws-'));
    workspaces.push(ws);
    return ws;
  };
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'huddle-pgbouncer-'));
    const server = new URL(base);
    const port = await freePort();
    writeFileSync(path.join(dir, 'users.txt'), `"${decodeURIComponent(server.username) || 'postgres'}" ""\n`);
    writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${server.hostname} port=${server.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        'default_pool_size = 3',
        'max_client_conn = 200',
        `logfile = ${path.join(dir, 'pgbouncer.log')}`,
        '',
      ].join('\n'),
    );
    // PgBouncer will not run as root: as the tests' server does, it runs as postgres then.
    const root = process.getuid?.() === 0;
    if (root) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, file), uid, -1);
    }
    const command = root ? ['runuser', '-u', 'postgres', '--', PGBOUNCER, path.join(dir, 'pgbouncer.ini')] : [PGBOUNCER, path.join(dir, 'pgbouncer.ini')];
    bouncer = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
    via = `postgres://${server.username || 'postgres'}@127.0.0.1:${port}${server.pathname}`;
    // Up once it answers.
    for (let attempt = 0; ; attempt++) {
      const client = new pg.Client({ connectionString: via });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        break;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (attempt > 100 || bouncer.exitCode !== null) throw new Error(`pgbouncer did not start: ${(error as Error).message}`);
        await sleep(100);
      }
    }
  });
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    bouncer?.kill('SIGTERM');
    for (const ws of [dir, ...workspaces]) rmSync(ws, { recursive: true, force: true });
  });

  it("two processes' stores share the board and the bus through it: each claim once, each message wakes its reader", { timeout: 120_000 }, async () => {
    const { url } = teamUrl(via, 'bouncer');
    const ws = workspace();
    // Two "processes": the second's URL differs (its own pool and channel, as in another process).
    const other = new URL(url);
    other.searchParams.set('application_name', 'huddle');
    const lead = await postgresBackend(url, new Workspace(ws), { pooler: 'transaction', pollMs: 300 }).open({ hub: new EventHub(), secrets: [] });
    stores.push(lead);
    const worker = await postgresBackend(other.href, new Workspace(ws), { pooler: 'transaction', pollMs: 300 }).open({
      hub: new EventHub(),
      secrets: [],
      mode: 'join',
    });
    stores.push(worker);
    await lead.roster.add({ name: 'ada', role: 'coder' });
    await lead.roster.add({ name: 'bo', role: 'coder' });
    for (let i = 1; i <= 12; i++) await lead.board.create({ subject: `task ${i}` }, 'lead');

    // Both claim at once, many transactions through three server connections.
    const claimed: number[] = [];
    const claimAll = async (store: TeamStore, owner: string) => {
      for (;;) {
        const task = await store.board.claimNext(owner);
        if (!task) return;
        claimed.push(task.id);
        await store.board.update(task.id, { status: 'completed' }, owner);
      }
    };
    await Promise.all([claimAll(lead, 'ada'), claimAll(worker, 'bo')]);
    expect([...claimed].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));

    // A message from one process wakes a wait in the other (no NOTIFY: the poll finds it).
    const woken = worker.bus.waitForMessage('bo');
    await lead.bus.send({ type: 'message', from: 'lead', to: 'bo', content: 'through the pooler' });
    await woken;
    expect((await worker.bus.peek('bo')).messages.map((m) => m.content)).toEqual(['through the pooler']);
  });

  it('without postgres.pooler, the refusal is one line that names the setting', { timeout: 60_000 }, async () => {
    // (A URL of its own: not the pool the test above opened with the setting.)
    const { url } = teamUrl(`${via}?application_name=huddle-unset`, 'bouncer');
    const ws = workspace();
    const error = await postgresBackend(url, new Workspace(ws))
      .open({ hub: new EventHub(), secrets: [] })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(error?.message).not.toContain('\n');
    expect(error?.message, error?.message).toMatch(/startup parameter.*postgres\.pooler/);
  });
});
