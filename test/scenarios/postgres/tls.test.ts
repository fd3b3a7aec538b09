// A team on a PostgreSQL server that speaks TLS, as managed servers do (docs/postgresql-managed.md#tls):
// the team URL's sslmode, sslrootcert and uselibpqcompat reach every connection huddle makes
// (the pool, the listener, the lease's), verified against the CA named; a server whose
// certificate that CA did not sign is refused in one line that says what to do. The server and
// its certificate authority are this test's own (made with openssl), never the shared server.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl, startOwnServer } from '../../helpers/postgres.js';
import { REPO_ROOT } from '../../helpers/run-cli.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'test-postgres.sh');

/** A certificate authority (ca.pem) and a server certificate it signed for localhost and 127.0.0.1; and another CA. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=huddle test CA');
  openssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=another CA');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
}

describePostgres('a team on PostgreSQL over TLS', () => {
  let server: { url: string; dir: string } | undefined;
  let root: string;
  let certs: string;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-tls-'));
    server = startOwnServer();
    const { url, dir } = server;
    certs = path.join(root, 'certs');
    execFileSync('mkdir', ['-p', certs]);
    makeCertificates(certs);
    // The server reads its key as its own user (postgres, when the tests run as root), mode 0600.
    const key = path.join(dir, 'server.key');
    const crt = path.join(dir, 'server.crt');
    execFileSync('cp', [path.join(certs, 'server.key'), key]);
    execFileSync('cp', [path.join(certs, 'server.crt'), crt]);
    execFileSync('chmod', ['600', key]);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(key, uid, -1);
      chownSync(crt, uid, -1);
    }
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`ALTER SYSTEM SET ssl_cert_file = '${crt}'`);
      await admin.query(`ALTER SYSTEM SET ssl_key_file = '${key}'`);
      await admin.query('ALTER SYSTEM SET ssl = on');
      await admin.query('SELECT pg_reload_conf()');
    } finally {
      await admin.end();
    }
  });
  afterAll(() => {
    if (server) execFileSync('bash', [SCRIPT, 'stop', server.dir]);
    rmSync(root, { recursive: true, force: true });
  });

  /** The server's URL on `host`, with the given query parameters. */
  const on = (host: string, params: Record<string, string>): string => {
    const url = new URL(server!.url);
    url.hostname = host;
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.href;
  };

  it('verify-full against the CA named in sslrootcert: every connection of the team is encrypted', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(on('localhost', { sslmode: 'verify-full', sslrootcert: path.join(certs, 'ca.pem') }), 'tls');
    // A short lease: its connection is made at the first renewal.
    const store = await postgresBackend(url, new Workspace(root), { leaseMs: 1_500 }).open({ hub: new EventHub(), secrets: [] });
    try {
      await store.board.create({ subject: 'over TLS' }, 'lead');
      expect((await store.board.list()).map((t) => t.subject)).toEqual(['over TLS']);
      const admin = new pg.Client({ connectionString: server!.url });
      await admin.connect();
      try {
        const read = async () =>
          (
            await admin.query<{ application_name: string; ssl: boolean }>(
              `SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name LIKE 'huddle%'`,
            )
          ).rows;
        let rows = await read();
        while (!rows.some((r) => r.application_name === 'huddle-lease')) {
          await sleep(50);
          rows = await read();
        }
        // The pool, the listener and the lease's connection, all over TLS.
        expect(new Set(rows.map((r) => r.application_name))).toEqual(new Set(['huddle', 'huddle-listen', 'huddle-lease']));
        for (const row of rows) expect(row.ssl, row.application_name).toBe(true);
      } finally {
        await admin.end();
      }
    } finally {
      await store.close();
    }
  });

  it('a certificate the named CA did not sign is refused in one line saying what to do', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(on('localhost', { sslmode: 'verify-full', sslrootcert: path.join(certs, 'other.pem') }), 'tls');
    const error = await postgresBackend(url, new Workspace(root))
      .open({ hub: new EventHub(), secrets: [] })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(error?.name).toBe('StoreUnavailableError');
    expect(error?.message).not.toContain('\n');
    expect(error?.message).toMatch(/certificate.*sslrootcert/);
  });

  it(
    "sslmode=require verifies in node-postgres (a self-signed chain is refused); uselibpqcompat=true makes it libpq's: encrypted, not verified",
    { timeout: 60_000 },
    async () => {
      const strict = await postgresBackend(teamUrl(on('127.0.0.1', { sslmode: 'require' }), 'tls').url, new Workspace(root))
        .open({ hub: new EventHub(), secrets: [] })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(strict?.message).toMatch(/certificate/);
      const store = await postgresBackend(teamUrl(on('127.0.0.1', { sslmode: 'require', uselibpqcompat: 'true' }), 'tls').url, new Workspace(root)).open({
        hub: new EventHub(),
        secrets: [],
      });
      try {
        await store.board.create({ subject: 'encrypted' }, 'lead');
        expect(await store.board.list()).toHaveLength(1);
      } finally {
        await store.close();
      }
    },
  );
});
