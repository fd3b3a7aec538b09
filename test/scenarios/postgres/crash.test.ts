// Crashes on a team in PostgreSQL: processes SIGKILLed mid-send, mid-claim and between recording a
// delivery and acking it, and the server itself restarted (an immediate stop: a crash and its
// recovery) while they work. Nothing is lost or doubled: every message is delivered exactly once,
// every task completed once. The server here is this test's own (it is restarted), started with
// scripts/test-postgres.sh; never the shared one.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl, startOwnServer } from '../../helpers/postgres.js';
import { REPO_ROOT } from '../../helpers/run-cli.js';
import { bundlePgFixture, type Exit, runFixture } from '../../runtime/store/postgres/fixtures/bundle.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'test-postgres.sh');
const PER_SENDER = 300;
const SENDERS = ['s1', 's2'];
const TASKS = 200;

type Line = Record<string, number | boolean>;

/** Every fixture process started, killed after the test if a failure left it running. */
const started: ChildProcess[] = [];

/** A fixture process whose stdout lines are kept, with a way to wait for one. */
function start(file: string, job: Record<string, unknown>) {
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  const { child, exited } = runFixture(file, job, (line) => {
    lines.push(JSON.parse(line) as Line);
    for (const waiter of [...waiters]) waiter();
  });
  started.push(child);
  const until = (test: (line: Line) => boolean, what: string) =>
    new Promise<Line>((resolve, reject) => {
      const check = () => {
        const found = lines.find(test);
        if (!found) return;
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
      void exited.then((exit: Exit) => reject(new Error(`the process exited (${exit.code ?? exit.signal}) before ${what}: ${exit.stderr}`)));
    });
  return { child, exited, lines, until };
}

describePostgres('crashes on a team in PostgreSQL', () => {
  let server: { url: string; dir: string } | undefined;
  let root: string;
  let store: TeamStore | undefined;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-crash-'));
    server = startOwnServer();
  });
  afterAll(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await store?.close();
    if (server) execFileSync('bash', [SCRIPT, 'stop', server.dir]);
    rmSync(root, { recursive: true, force: true });
  });

  it('kills mid-send, mid-claim, mid-ack and a server restart lose and double nothing', { timeout: 240_000 }, async () => {
    const { url } = teamUrl(server!.url, 'crash');
    store = await postgresBackend(url, new Workspace(root)).open({ hub: new EventHub(), secrets: [] });
    for (const name of ['reader', ...SENDERS]) await store.roster.add({ name, role: 'coder' });
    for (let i = 1; i <= TASKS; i++) await store.board.create({ subject: `task ${i}` }, 'lead');
    const file = await bundlePgFixture('crash-worker');
    const record = path.join(root, 'delivered.ndjson');
    const expected = PER_SENDER * SENDERS.length;

    // Reader 1 stops for good between recording a batch and acking it, and is killed there.
    const reader1 = start(file, { mode: 'read', url, cwd: root, name: 'reader', record, expected, pauseBeforeAckAt: 100 });
    const senders = SENDERS.map((from) => start(file, { mode: 'send', url, cwd: root, from, to: 'reader', count: PER_SENDER, start: 0 }));
    // The first claimer works alone until it is killed: with claims batched per process, a second one started
    // beside it could take the whole board before the first reached its 30th claim.
    const claimer1 = start(file, { mode: 'claim', url, cwd: root, owners: ['c1-a', 'c1-b'] });
    const done: number[] = [];

    await reader1.until((l) => 'paused' in l, 'pausing');
    reader1.child.kill('SIGKILL');
    await reader1.exited;
    const reader2 = start(file, { mode: 'read', url, cwd: root, name: 'reader', record, expected });

    // A sender killed while it sends: restarted from the last send it saw go through (same ids).
    await senders[0]!.until((l) => typeof l.sent === 'number' && l.sent >= 100, '100 sends');
    senders[0]!.child.kill('SIGKILL');
    await senders[0]!.exited;
    const confirmed = Math.max(...senders[0]!.lines.filter((l) => typeof l.sent === 'number').map((l) => l.sent as number));
    const sender1b = start(file, { mode: 'send', url, cwd: root, from: 's1', to: 'reader', count: PER_SENDER, start: confirmed });

    // A claimer killed while it claims: what it held goes back on the board (as a resume or a lapsed lease does), and it starts again.
    await claimer1.until((l) => typeof l.done === 'number' && claimer1.lines.filter((x) => 'done' in x).length >= 30, '30 claims');
    claimer1.child.kill('SIGKILL');
    await claimer1.exited;
    done.push(...claimer1.lines.filter((l) => typeof l.done === 'number').map((l) => l.done as number));
    for (const owner of ['c1-a', 'c1-b']) await store.board.release(owner, 'lead');
    // It starts again, and a second claimer process takes tasks beside it.
    const claimer1b = start(file, { mode: 'claim', url, cwd: root, owners: ['c1-a', 'c1-b'] });
    const claimer2 = start(file, { mode: 'claim', url, cwd: root, owners: ['c2-a', 'c2-b'] });

    // The server crashes and recovers while everyone works.
    await reader2.until((l) => typeof l.recorded === 'number' && (l.recorded as number) >= 200, '200 recorded');
    execFileSync('bash', [SCRIPT, 'crash', server!.dir]);

    const exits = await Promise.all([reader2, senders[1]!, sender1b, claimer2, claimer1b].map((p) => p.exited));
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);

    // Every message delivered exactly once.
    const delivered: string[] = [];
    for (const line of readFileSync(record, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        delivered.push(...(JSON.parse(line) as { ids: string[] }).ids);
      } catch {
        // torn by the kill: never counted
      }
    }
    const sent = SENDERS.flatMap((from) => Array.from({ length: PER_SENDER }, (_, i) => `${from}-${i}`));
    expect(delivered.length).toBe(expected);
    expect([...delivered].sort()).toEqual([...sent].sort());
    expect((await store.bus.history('reader')).map((m) => m.id).sort()).toEqual([...sent].sort());
    expect(await store.bus.unreadCount('reader')).toBe(0);

    // Every task completed, and none by two claimers.
    done.push(...[claimer2, claimer1b].flatMap((p) => p.lines.filter((l) => typeof l.done === 'number').map((l) => l.done as number)));
    expect(new Set(done).size).toBe(done.length);
    const tasks = await store.board.list();
    expect(tasks).toHaveLength(TASKS);
    for (const task of tasks) expect(task.status, `task #${task.id}`).toBe('completed');
  });
});
