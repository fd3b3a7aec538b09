// Stopping a teammate that runs on a worker (hosts.stop, `/shutdown NAME --now`) always comes back: a
// placement its worker had not taken yet is cancelled at once; one whose run ended but whose `done` was
// never written is found done by its worker when told to stop it; and a worker that does not stop it in
// time leaves the stop `asked` after a deadline rather than waiting forever. Real PostgreSQL, two stores
// (two hosts) in this process; the rows are read and forced through a connection of the test's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import type { PlacementSpec } from '../../../../src/runtime/store/hosts.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

const LEASE_MS = 1_000;
// Both hosts are in this process, which hears none of its own notifications: each reads again on its poll.
const POLL_MS = 100;

function spec(name: string): PlacementSpec {
  return { name, role: 'coder', model: 'claude-test', prompt: 'Write the notes.', planModeRequired: false, permissionMode: 'auto' };
}

describePostgres('stopping a teammate on a worker', (base) => {
  let root: string;
  let db: pg.Client;
  let stores: TeamStore[] = [];
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-hosts-stop-'));
    db = new pg.Client({ connectionString: base });
    await db.connect();
  });
  afterEach(async () => {
    for (const store of stores.splice(0).reverse()) await store.close();
  });
  afterAll(async () => {
    await db.end();
    rmSync(root, { recursive: true, force: true });
  });

  async function openTeam(): Promise<{ team: string; lead: TeamStore; worker: TeamStore }> {
    const { url, team } = teamUrl(base, 'stop');
    const lead = await postgresBackend(url, new Workspace(mkdtempSync(path.join(root, 'lead-'))), { leaseMs: LEASE_MS, pollMs: POLL_MS }).open({
      hub: new EventHub(),
      secrets: [],
    });
    stores.push(lead);
    const worker = await postgresBackend(url, new Workspace(mkdtempSync(path.join(root, 'worker-'))), { leaseMs: LEASE_MS, pollMs: POLL_MS }).open({
      hub: new EventHub(),
      secrets: [],
      mode: 'join',
    });
    stores.push(worker);
    return { team, lead, worker };
  }

  async function state(team: string, id: string): Promise<string | undefined> {
    return (await db.query<{ state: string }>('SELECT state FROM huddle_placements WHERE team = $1 AND id = $2', [team, id])).rows[0]?.state;
  }

  /** Resolves once `check` holds, looking again each time the database may have changed. */
  async function until(check: () => Promise<boolean>): Promise<void> {
    while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  it('cancels a placement its worker has not taken yet, and a recall does the same', { timeout: 30_000 }, async () => {
    const { team, lead, worker } = await openTeam();
    // A live worker with a slot that has not taken its placements yet (it offers slots, it does not serve them).
    await db.query('UPDATE huddle_hosts SET slots = 2 WHERE team = $1 AND host = $2', [team, worker.hosts!.self]);
    const first = (await lead.hosts!.reserve(spec('zed')))!;
    const second = (await lead.hosts!.reserve(spec('amy')))!;
    expect([first.host, second.host]).toEqual([worker.hosts!.self, worker.hosts!.self]);
    expect(await lead.hosts!.dispatch(first.id)).toBe(true);
    expect(await lead.hosts!.dispatch(second.id)).toBe(true);

    expect(await lead.hosts!.stop('zed', 'stopped by the person')).toBe('cancelled');
    expect(await state(team, first.id)).toBe('cancelled');
    await lead.hosts!.recall('the team finished');
    expect(await state(team, second.id)).toBe('cancelled');
  });

  it('finds done a placement whose run ended but whose done was never written', { timeout: 30_000 }, async () => {
    const { team, lead, worker } = await openTeam();
    const ran: string[] = [];
    await worker.hosts!.serve(1, async (placement) => void ran.push(placement.name));
    const placement = (await lead.hosts!.reserve(spec('zed')))!;
    expect(await lead.hosts!.dispatch(placement.id)).toBe(true);
    await until(async () => (await state(team, placement.id)) === 'done');
    expect(ran).toEqual(['zed']);
    // As if the worker's `done` had not reached the database (it is written once, best effort).
    await db.query(`UPDATE huddle_placements SET state = 'running' WHERE team = $1 AND id = $2`, [team, placement.id]);

    expect(await lead.hosts!.stop('zed', 'stopped by the person')).toBe('stopped');
    expect(await state(team, placement.id)).toBe('done');
  });

  it('gives up waiting after its deadline when the worker does not stop the teammate', { timeout: 30_000 }, async () => {
    const { team, lead, worker } = await openTeam();
    const stops: string[] = [];
    // A teammate that does not end when told (its signal is heard, and ignored).
    await worker.hosts!.serve(1, (placement, stop) => {
      stop.addEventListener('abort', () => stops.push(placement.name));
      return new Promise<void>(() => undefined);
    });
    const placement = (await lead.hosts!.reserve(spec('zed')))!;
    expect(await lead.hosts!.dispatch(placement.id)).toBe(true);
    await until(async () => (await state(team, placement.id)) === 'running');

    expect(await lead.hosts!.stop('zed', 'stopped by the person')).toBe('asked');
    // Its worker was told (and is still at it).
    await until(async () => stops.length > 0);
    expect(stops).toEqual(['zed']);
    // Still its worker's to end: the slot is counted until it does (or the worker is swept).
    expect(await state(team, placement.id)).toBe('stopping');
  });
});
