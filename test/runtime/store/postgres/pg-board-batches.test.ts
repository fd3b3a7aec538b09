// Claims and status changes that the agents of one process make at the same time go in one
// PostgreSQL transaction (docs/postgresql-managed.md#commits-and-the-disk), and nothing the board promises
// gives way for it (docs/contract.md#tasks): each claimer gets its own task by the rules (an assigned
// task only to its owner, a blocked one to no one), a change the rules refuse fails alone, a host
// whose lease is gone writes nothing, and a batch whose answer was lost is found done by its
// retry, never done twice.
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import type { PgEventStore } from '../../../../src/runtime/store/postgres/pg-events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

type Query = (...args: unknown[]) => unknown;
const proto = pg.Client.prototype as unknown as { query: Query };
const original = proto.query;

/**
 * Counts the transactions (BEGINs) and round trips `work` makes (client.query calls in its async
 * context: not the event record's flushes or the lease's renewals meanwhile), PREPAREs (once per connection) aside.
 */
async function counted<T>(work: () => Promise<T>): Promise<{ value: T; transactions: number; trips: number }> {
  const context = new AsyncLocalStorage<true>();
  let transactions = 0;
  let trips = 0;
  // Over whatever a test already put in place (a failing read, say).
  const inner = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (context.getStore() && !text.startsWith('PREPARE ')) {
      trips++;
      if (text.startsWith('BEGIN')) transactions++;
    }
    return inner.apply(this, args);
  };
  try {
    return { value: await context.run(true, work), transactions, trips };
  } finally {
    proto.query = inner;
  }
}

/** Every query whose text is `text` fails with `error` (as a read can: a statement timeout, the store closing). */
function failQuery(text: string, error: Error): void {
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    if (args[0] === text) return Promise.reject(error);
    return original.apply(this, args);
  };
}

/**
 * The next message matching `commits` (by default, one that writes tasks and commits: …; COMMIT)
 * reaches the server, and its answer is lost: the client hears its connection drop.
 */
function loseNextCommitAnswer(commits = /"created":(true|false).*; COMMIT$/s): { lost: () => number } {
  let lost = 0;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : '';
    const result = original.apply(this, args);
    if (lost > 0 || !commits.test(text) || !(result instanceof Promise)) return result;
    lost++;
    return result.then(() => {
      throw new Error('Connection terminated unexpectedly');
    });
  };
  return { lost: () => lost };
}

describePostgres('batched claims and changes on PostgreSQL', (base) => {
  let root: string;
  const stores: TeamStore[] = [];
  let client: pg.Client;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-batches-'));
    client = new pg.Client({ connectionString: base });
    await client.connect();
  });
  afterEach(() => {
    proto.query = original;
  });
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    await client.end().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  const open = async (url: string, hub = new EventHub()) => {
    const store = await postgresBackend(url, new Workspace(root)).open({ hub, secrets: [], mode: 'join' });
    stores.push(store);
    return store;
  };
  const rowsOf = async (team: string) =>
    (
      await client.query<{ id: string; status: string; owner: string | null }>('SELECT id, status, owner FROM huddle_tasks WHERE team = $1 ORDER BY id', [team])
    ).rows.map((row) => ({ id: Number(row.id), status: row.status, owner: row.owner }));

  it('eight claims made at once take eight different tasks in one transaction, each by the rules', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-claims');
    const store = await open(url);
    await store.board.create({ subject: 'for c7 only', owner: 'c7' }, 'lead'); // #1
    await store.board.create({ subject: 'for dee only', owner: 'dee' }, 'lead'); // #2
    await store.board.create({ subject: 'first' }, 'lead'); // #3
    await store.board.create({ subject: 'waits for #3', blockedBy: [3] }, 'lead'); // #4
    for (let i = 5; i <= 12; i++) await store.board.create({ subject: `free ${i}` }, 'lead');
    await store.board.claimNext('warm'); // statements prepared on a connection; takes #3
    await (store.events as PgEventStore).settled();
    const claimers = Array.from({ length: 8 }, (_, i) => `c${i}`);
    const { value: tasks, transactions, trips } = await counted(() => Promise.all(claimers.map((owner) => store.board.claimNext(owner))));
    expect(transactions).toBe(1);
    expect(trips).toBe(2); // BEGIN with the first look, then the writes with COMMIT
    // c7 gets the task assigned to it; the others the free ones in order; #2 (dee's) and #4 (blocked) no one.
    expect(tasks.map((task) => task?.id)).toEqual([5, 6, 7, 8, 9, 10, 11, 1]);
    expect(tasks.every((task, i) => task?.owner === claimers[i] && task?.status === 'in_progress')).toBe(true);
    const rows = await rowsOf(team);
    expect(rows.filter((row) => row.status === 'in_progress').map((row) => row.owner)).toEqual(['c7', 'warm', ...claimers.slice(0, 7)]);
    expect(rows.find((row) => row.id === 2)).toEqual({ id: 2, status: 'pending', owner: 'dee' });
    expect(rows.find((row) => row.id === 4)).toEqual({ id: 4, status: 'pending', owner: null });
    // One task is left for anyone (#12): of two claimers at once one gets it, the other looks again by
    // itself (a transaction that took a task never waits for rows others hold) and hears "nothing".
    const last = await counted(() => Promise.all([store.board.claimNext('x'), store.board.claimNext('y')]));
    expect(last.transactions).toBe(2);
    expect(last.value.map((task) => task?.id)).toEqual([12, undefined]);
  });

  it('a claim of the batch is not held up while another claimer of it waits for a row someone else holds', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-wait');
    const store = await open(url);
    await store.board.create({ subject: 'free' }, 'lead'); // #1
    await store.board.create({ subject: 'held' }, 'lead'); // #2
    // Another session holds #2 (as a claimer that may yet refuse it would).
    const holder = new pg.Client({ connectionString: base });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM huddle_tasks WHERE team = $1 AND id = 2 FOR UPDATE', [team]);
      const ann = store.board.claimNext('ann');
      const bob = store.board.claimNext('bob');
      // ann's claim commits while bob waits for #2 (in a transaction of his own, holding no task).
      expect(await ann).toMatchObject({ id: 1, owner: 'ann' });
      expect((await rowsOf(team))[0]).toEqual({ id: 1, status: 'in_progress', owner: 'ann' });
      await holder.query('COMMIT');
      expect(await bob).toMatchObject({ id: 2, owner: 'bob' });
    } finally {
      await holder.end().catch(() => undefined);
    }
  });

  it('a claim batch that took a task does not wait for the next row while holding it, even in its waiting pass', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-hold');
    const store = await open(url);
    await store.board.create({ subject: 'for a', owner: 'a' }, 'lead'); // #1
    await store.board.create({ subject: 'for a too', owner: 'a' }, 'lead'); // #2
    await store.board.create({ subject: 'free' }, 'lead'); // #3
    // Other sessions (claimers elsewhere, say) hold every row: x #1 and #2, y #3.
    const x = new pg.Client({ connectionString: base });
    const y = new pg.Client({ connectionString: base });
    await x.connect();
    await y.connect();
    const pidOf = async (session: pg.Client) => Number((await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    const [xPid, yPid] = [await pidOf(x), await pidOf(y)];
    /** Resolves once a session of the store waits for a row `pid` holds. */
    const waitingFor = async (pid: number) => {
      for (;;) {
        const { rows } = await client.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND pid NOT IN ($2, $3)`, [pid, xPid, yPid]);
        if (rows.length) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const deadlocks = async () =>
      Number((await client.query<{ n: string }>(`SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.n);
    const before = await deadlocks();
    try {
      await x.query('BEGIN');
      await x.query('SELECT 1 FROM huddle_tasks WHERE team = $1 AND id IN (1, 2) FOR UPDATE', [team]);
      await y.query('BEGIN');
      await y.query('SELECT 1 FROM huddle_tasks WHERE team = $1 AND id = 3 FOR UPDATE', [team]);
      const claims = Promise.all([store.board.claimNext('a'), store.board.claimNext('b')]);
      // Nothing to skip to: the batch's waiting pass waits for #1.
      await waitingFor(xPid);
      // #1 and #2 come free: a takes #1, #2 (a's too) is refused to b; the batch asked for as many rows as it had claimers.
      await x.query('COMMIT');
      // Someone waits for #3: b, in a transaction of its own once a's claim of #1 committed (the batch must not wait holding #1).
      await waitingFor(yPid);
      expect((await rowsOf(team))[0]).toEqual({ id: 1, status: 'in_progress', owner: 'a' });
      // y, another claimer whose next row is #1, gets it at once: no one holds it while waiting for y.
      const yTook = await y.query('SELECT 1 FROM huddle_tasks WHERE team = $1 AND id = 1 FOR UPDATE', [team]).then(
        () => 'took #1',
        (error: Error) => error.message,
      );
      await y.query('ROLLBACK');
      const tasks = await claims;
      expect(yTook).toBe('took #1');
      expect(tasks.map((task) => [task?.id, task?.owner])).toEqual([
        [1, 'a'],
        [3, 'b'],
      ]);
      expect(await deadlocks()).toBe(before);
    } finally {
      await x.end().catch(() => undefined);
      await y.end().catch(() => undefined);
    }
  });

  it('an update of an unknown task is its caller’s error alone, even when naming the existing tasks fails', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-unknown');
    const hub = new EventHub();
    const store = await open(url, hub);
    await store.board.create({ subject: 'one' }, 'lead'); // #1
    await store.board.create({ subject: 'two' }, 'lead'); // #2
    await store.board.claimNext('ann');
    await store.board.claimNext('cy');
    await (store.events as PgEventStore).settled();
    const heard: string[] = [];
    hub.subscribe((event) => {
      if (event.type === 'task') heard.push(`${event.agent}:${event.action}:#${event.task.id}`);
    });
    const listened: string[] = [];
    store.board.onChange((change) => {
      if (change.source === 'local') listened.push(`${change.agent}:${change.action}:#${change.task.id}`);
    });
    // The read that names the existing tasks for bob's message fails (here a statement timeout, as it
    // could be the store closing or a link down too long): ann's and cy's completions committed all the same.
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    failQuery('SELECT id FROM huddle_tasks WHERE team = $1 ORDER BY id', timeout);
    const { value: settled, transactions } = await counted(() =>
      Promise.allSettled([
        store.board.update(1, { status: 'completed' }, 'ann'),
        store.board.update(99, { status: 'completed' }, 'bob'),
        store.board.update(2, { status: 'completed' }, 'cy'),
      ]),
    );
    expect(transactions).toBe(1);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBe(timeout);
    expect(heard).toEqual(['ann:completed:#1', 'cy:completed:#2']);
    expect(listened).toEqual(['ann:completed:#1', 'cy:completed:#2']);
    expect((await rowsOf(team)).map((row) => row.status)).toEqual(['completed', 'completed']);
    // With the read working, bob hears which tasks there are.
    proto.query = original;
    await expect(store.board.update(99, { status: 'completed' }, 'bob')).rejects.toThrow('no task #99; existing tasks: 1, 2');
  });

  it('completions made at once commit in one transaction; one the rules refuse fails alone', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-done');
    const hub = new EventHub();
    const store = await open(url, hub);
    for (let i = 1; i <= 3; i++) await store.board.create({ subject: `task ${i}` }, 'lead');
    await store.board.create({ subject: 'after 1', blockedBy: [1] }, 'lead'); // #4
    for (const owner of ['ann', 'bob', 'cy']) await store.board.claimNext(owner);
    await (store.events as PgEventStore).settled();
    hub.emit('ann', 'text', { text: 'ann done' });
    const { value: settled, transactions } = await counted(() =>
      Promise.allSettled([
        store.board.update(1, { status: 'completed' }, 'ann'),
        store.board.update(2, { status: 'completed' }, 'mallory'), // not mallory's task
        store.board.update(3, { status: 'completed' }, 'cy'),
      ]),
    );
    expect(transactions).toBe(1);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason.message).toMatch(/#2/);
    expect(await rowsOf(team)).toEqual([
      { id: 1, status: 'completed', owner: 'ann' },
      { id: 2, status: 'in_progress', owner: 'bob' },
      { id: 3, status: 'completed', owner: 'cy' },
      { id: 4, status: 'pending', owner: null },
    ]);
    expect(await store.board.get(4)).toMatchObject({ blockedBy: [] }); // ann's completion unblocked it
    await (store.events as PgEventStore).settled();
    const { rows } = await client.query<{ agent: string; kind: string }>(
      `SELECT agent, CASE WHEN body->>'type' = 'task' THEN 'task:' || (body->>'action') ELSE body->>'type' END AS kind
         FROM huddle_events WHERE team = $1 AND agent IN ('ann', 'bob', 'cy', 'mallory') ORDER BY seq`,
      [team],
    );
    const kinds = (agent: string) => rows.filter((row) => row.agent === agent).map((row) => row.kind);
    expect(kinds('ann')).toEqual(['task:claimed', 'text', 'task:completed', 'task:updated']); // updated: #4, unblocked
    expect(kinds('cy')).toEqual(['task:claimed', 'task:completed']);
    expect(kinds('mallory')).toEqual([]);
  });

  it('a change that writes a row another change of the batch writes goes in the next, and both hold', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(base, 'batch-overlap');
    const store = await open(url);
    await store.board.create({ subject: 'first' }, 'lead'); // #1
    await store.board.create({ subject: 'second', blockedBy: [1] }, 'lead'); // #2
    await store.board.claimNext('ann');
    // ann's completion unblocks #2, the lead assigns #2 at the same time: two transactions, neither lost.
    const { value, transactions } = await counted(() =>
      Promise.all([store.board.update(1, { status: 'completed' }, 'ann'), store.board.update(2, { owner: 'bob' }, 'lead')]),
    );
    expect(transactions).toBe(2);
    expect(value[0]).toMatchObject({ id: 1, status: 'completed' });
    expect(await store.board.get(2)).toMatchObject({ status: 'pending', owner: 'bob', blockedBy: [] });
  });

  it('a batch from a host whose lease is gone writes nothing, and every caller hears it', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-fence');
    const store = await open(url);
    for (let i = 1; i <= 5; i++) await store.board.create({ subject: `task ${i}` }, 'lead');
    await store.board.claimNext('ann'); // #1
    await store.board.claimNext('bob'); // #2
    const before = await rowsOf(team);
    // Another process took the team over: this host's epoch is no longer the one it holds.
    await client.query(`UPDATE huddle_hosts SET epoch = epoch + 1 WHERE team = $1`, [team]);
    const claims = await Promise.allSettled([store.board.claimNext('cy'), store.board.claimNext('dee')]);
    const completions = await Promise.allSettled([
      store.board.update(1, { status: 'completed' }, 'ann'),
      store.board.update(2, { status: 'completed' }, 'bob'),
    ]);
    for (const outcome of [...claims, ...completions]) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(/lost its lease/);
    }
    expect(await rowsOf(team)).toEqual(before);
  });

  it('a batch of claims whose answer was lost is found done by its retry: each claimer gets its one task', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-lost-claims');
    const store = await open(url);
    for (let i = 1; i <= 6; i++) await store.board.create({ subject: `task ${i}` }, 'lead');
    await store.board.claimNext('warm'); // #1
    const losing = loseNextCommitAnswer();
    const tasks = await Promise.all(['ann', 'bob', 'cy'].map((owner) => store.board.claimNext(owner)));
    expect(losing.lost()).toBe(1);
    expect(tasks.map((task) => [task?.id, task?.owner])).toEqual([
      [2, 'ann'],
      [3, 'bob'],
      [4, 'cy'],
    ]);
    // Claimed once: #5 and #6 were not taken by a second attempt.
    expect((await rowsOf(team)).filter((row) => row.status === 'in_progress').map((row) => row.owner)).toEqual(['warm', 'ann', 'bob', 'cy']);
  });

  it('a batch of completions whose answer was lost is found done by its retry, its events stored once', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'batch-lost-done');
    const store = await open(url);
    for (let i = 1; i <= 3; i++) await store.board.create({ subject: `task ${i}` }, 'lead');
    await store.board.create({ subject: 'after 2', blockedBy: [2] }, 'lead'); // #4
    for (const owner of ['ann', 'bob', 'cy']) await store.board.claimNext(owner);
    await (store.events as PgEventStore).settled();
    const losing = loseNextCommitAnswer();
    const done = await Promise.all([
      store.board.update(1, { status: 'completed' }, 'ann'),
      store.board.update(2, { status: 'completed' }, 'bob'),
      store.board.update(3, { status: 'completed' }, 'cy'),
    ]);
    expect(losing.lost()).toBe(1);
    expect(done.map((task) => [task.id, task.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'completed'],
    ]);
    expect(await store.board.get(4)).toMatchObject({ status: 'pending', blockedBy: [] });
    await (store.events as PgEventStore).settled();
    const { rows } = await client.query<{ agent: string; n: string }>(
      `SELECT agent, count(*) AS n FROM huddle_events WHERE team = $1 AND body->>'type' = 'task' AND body->>'action' = 'completed' GROUP BY agent ORDER BY agent`,
      [team],
    );
    expect(rows.map((row) => [row.agent, Number(row.n)])).toEqual([
      ['ann', 1],
      ['bob', 1],
      ['cy', 1],
    ]);
  });

  it('a refused change whose answer was lost is refused again by its retry, the events it carried stored once', { timeout: 60_000 }, async () => {
    // A refused change writes no task row, so its retry cannot find the first attempt by its token
    // and runs again: the agent's earlier events it carried may be stored already (pg-events.ts).
    const { url, team } = teamUrl(base, 'batch-lost-refused');
    const hub = new EventHub();
    const store = await open(url, hub);
    await store.board.create({ subject: 'bob’s' }, 'lead');
    await store.board.claimNext('bob');
    await (store.events as PgEventStore).settled();
    hub.emit('mallory', 'text', { text: 'finishing bob’s task' });
    // The message that stores mallory's events and commits.
    const losing = loseNextCommitAnswer(/"uid":"[^"]*","agent":"mallory".*; COMMIT$/s);
    await expect(store.board.update(1, { status: 'completed' }, 'mallory')).rejects.toThrow(/#1/);
    expect(losing.lost()).toBe(1);
    await (store.events as PgEventStore).settled();
    const { rows } = await client.query<{ type: string }>(`SELECT body->>'type' AS type FROM huddle_events WHERE team = $1 AND agent = 'mallory'`, [team]);
    expect(rows.map((row) => row.type)).toEqual(['text']);
    expect(await rowsOf(team)).toEqual([{ id: 1, status: 'in_progress', owner: 'bob' }]);
  });
});
