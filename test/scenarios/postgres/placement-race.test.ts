// A spawn placed on a worker whose reservation is gone by the time the worker is told: a sweep
// cancelled it as stale (reserved for over a minute), or the worker lapsed and was swept between
// the reservation and the dispatch (its placements marked lost). No worker will take it, so the
// lead's process runs the teammate itself (its spawn says so), instead of leaving a member
// `working` forever that nobody runs. The gap is forced through a seam on the lead's store: right
// after the real reservation, the test moves the placement on in the database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Team } from '../../../src/agents/lifecycle/team.js';
import { resolveConfig } from '../../../src/runtime/config.js';
import { EventHub } from '../../../src/runtime/events/events.js';
import { ModelClient, modelClientOptions } from '../../../src/runtime/model/model-client.js';
import type { Placement, TeamHosts } from '../../../src/runtime/store/hosts.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { when } from '../../runtime/store/contract/harness.js';
import { TEST_API_KEY } from '../../helpers/team-harness.js';
import { TeamSession } from '../../../src/session/team-session.js';

/** `store` with its hosts' reserve followed by `after` (the placement just reserved); `recalls` gets each recall under way. */
function withSeam(store: TeamStore, after: (placement: Placement) => Promise<void>, recalls: Array<Promise<void>> = []): TeamStore {
  const real = store.hosts!;
  const bound = <T>(target: object, key: string | symbol): T => {
    const value = Reflect.get(target, key, target) as unknown;
    return (typeof value === 'function' ? value.bind(target) : value) as T;
  };
  const hosts = new Proxy(real, {
    get: (target, key) =>
      key === 'reserve'
        ? async (...args: Parameters<TeamHosts['reserve']>) => {
            const placement = await target.reserve(...args);
            if (placement) await after(placement);
            return placement;
          }
        : key === 'recall'
          ? (...args: Parameters<TeamHosts['recall']>) => {
              const recall = target.recall(...args);
              recalls.push(recall);
              return recall;
            }
          : bound(target, key),
  });
  return new Proxy(store, { get: (target, key) => (key === 'hosts' ? hosts : bound(target, key)) });
}

describePostgres('a placement whose reservation went before its dispatch', (base) => {
  let fake: FakeApi;
  let root: string;
  let db: pg.Client;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-placement-race-'));
    db = new pg.Client({ connectionString: base });
    await db.connect();
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await db.end();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** A team on its own schema: a worker serving one slot (what it is asked to run goes to `started`) and the lead's store. */
  async function teamWithWorker(name: string) {
    const { url, team } = teamUrl(base, name);
    const leadRoot = mkdtempSync(path.join(root, 'lead-'));
    const worker = await postgresBackend(url, new Workspace(mkdtempSync(path.join(root, 'worker-')))).open({ hub: new EventHub(), secrets: [], mode: 'join' });
    cleanups.push(() => worker.close());
    const started: string[] = [];
    await worker.hosts!.serve(1, async (placement) => void started.push(placement.name));
    const hub = new EventHub();
    const workspace = new Workspace(leadRoot);
    const leadStore = await postgresBackend(url, workspace).open({ hub, secrets: [TEST_API_KEY] });
    cleanups.push(() => leadStore.close());
    return { team, leadRoot, started, hub, workspace, leadStore };
  }

  for (const [how, state] of [
    ['cancelled as stale', 'cancelled'],
    ['lost with its lapsed worker', 'lost'],
  ] as const) {
    it(`${how}: the lead's process runs the teammate, and the roster says so`, { timeout: 60_000 }, async () => {
      // A worker with a free slot: the lead's spawn reserves it. It must never be asked to run anything.
      const { team, leadRoot, started, hub, workspace, leadStore } = await teamWithWorker('race');
      const forced: string[] = [];
      const store = withSeam(leadStore, async (placement) => {
        const { rowCount } = await db.query('UPDATE huddle_placements SET state = $3 WHERE team = $1 AND id = $2 AND state = $4', [
          team,
          placement.id,
          state,
          'reserved',
        ]);
        forced.push(`${placement.id}:${rowCount}`);
      });
      const config = resolveConfig(
        { cwd: leadRoot },
        { ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off', HUDDLE_MAX_RETRIES: '2', HUDDLE_RETRY_BASE_MS: '10' },
      );
      const teamObj = await Team.open({ config, workspace, hub, store, backend: new ModelClient(modelClientOptions(config)) });
      cleanups.push(() => teamObj.close('test over'));
      const name = `zed${state}`;
      fake.script(name, replyText('On it.'));

      const said = await teamObj.spawn({ name, role: 'coder', prompt: 'Write the notes.' }, 'lead');
      expect(forced).toHaveLength(1);
      expect(forced[0]).toMatch(/:1$/);
      expect(said).toMatch(new RegExp(`^spawned ${name} \\(coder, [^)]+\\) in the lead's process: worker \\S+ let its slot go before it could take it`));

      // It runs here: the roster puts it on the lead's host, its model call comes, it rests when done.
      expect(teamObj.teammates.has(name)).toBe(true);
      expect(leadStore.roster.get(name)?.host).toBe(leadStore.hosts!.self);
      await when(
        (check) => leadStore.roster.onChange(check),
        () => (leadStore.roster.get(name)?.status === 'idle' ? true : undefined),
      );
      expect(fake.requests.filter((request) => request.agent === name)).toHaveLength(1);
      const placements = await db.query<{ state: string }>('SELECT state FROM huddle_placements WHERE team = $1', [team]);
      expect(placements.rows.map((row) => row.state)).toEqual([state]);
      expect(started).toEqual([]);
    });
  }
  it('a team finished while a spawn is being placed: its placement is recalled, not left to run on the worker', { timeout: 60_000 }, async () => {
    const { team, leadRoot, hub, workspace, leadStore } = await teamWithWorker('closing');
    const config = resolveConfig(
      { cwd: leadRoot },
      { ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off', HUDDLE_MAX_RETRIES: '2', HUDDLE_RETRY_BASE_MS: '10' },
    );
    // The run ends right after the worker's slot is reserved and before the worker is told: the moment a
    // recall made first would miss (the row is neither pending nor running yet).
    let session: TeamSession | undefined;
    let closing: Promise<void> | undefined;
    const recalls: Array<Promise<void>> = [];
    const store = withSeam(
      leadStore,
      async () => {
        closing = session!.close({ reason: 'the run is over' });
        // A close that recalls first has sent its recall by now: let it land before the spawn goes on.
        await Promise.all(recalls);
      },
      recalls,
    );
    const teamObj = await Team.open({ config, workspace, hub, store, backend: new ModelClient(modelClientOptions(config)) });
    session = new TeamSession({ team: teamObj, store, hub, workspace, config, secrets: [TEST_API_KEY], decision: 'new' });
    fake.script('yan', replyText('On it.'));

    const said = await teamObj.spawn({ name: 'yan', role: 'coder', prompt: 'Write the notes.' }, 'lead');
    expect(said).toMatch(/^spawned yan \(coder, [^)]+\) on worker /);
    await closing;

    const placements = await db.query<{ state: string }>('SELECT state FROM huddle_placements WHERE team = $1', [team]);
    expect(placements.rows).toHaveLength(1);
    // Cancelled before the worker took it, or being stopped by it: never left pending or running for a finished team.
    expect(['cancelled', 'stopping', 'stopped', 'done']).toContain(placements.rows[0]!.state);
    await expect(teamObj.spawn({ name: 'zoe', role: 'coder', prompt: 'Write more notes.' }, 'lead')).rejects.toThrow(/the team is closing/);
  });
});
