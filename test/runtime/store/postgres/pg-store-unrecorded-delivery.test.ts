// Exactly once when the event record fails: a delivery whose message_delivered event the database
// refuses is never acked. The store reports the failure (the run stops), the messages stay unread,
// and the next process (--resume) delivers them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../../src/runtime/store/postgres/pg-store.js';
import type { StoreError } from '../../../../src/runtime/store/store-errors.js';
import type { TeamStore } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

describePostgres('a delivery the event record refuses', (base) => {
  let root: string;
  let db: pg.Client;
  const stores: TeamStore[] = [];
  const trigger = `huddle_test_refuse_${process.pid}`;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-unrecorded-'));
    db = new pg.Client({ connectionString: base });
    await db.connect();
  });
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    await db.query(`DROP TRIGGER IF EXISTS ${trigger} ON huddle_events`).catch(() => undefined);
    await db.query(`DROP FUNCTION IF EXISTS ${trigger}()`).catch(() => undefined);
    await db.end();
    rmSync(root, { recursive: true, force: true });
  });

  it('is not acked: the message stays unread and is delivered by the next process', { timeout: 60_000 }, async () => {
    const { url, team } = teamUrl(base, 'unrecorded');
    const backend = postgresBackend(url, new Workspace(root));
    const hub = new EventHub();
    const store = await backend.open({ hub, secrets: [] });
    stores.push(store);
    const failures: StoreError[] = [];
    store.onFailure((error) => failures.push(error));
    await store.roster.add({ name: 'alice', role: 'coder', status: 'idle' });
    const sent = await store.bus.send({ type: 'message', from: 'lead', to: 'alice', content: 'the plan' });

    // The database refuses this team's message_delivered events from now on.
    await db.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.team = '${team}' AND NEW.body->>'type' = 'message_delivered' THEN RAISE EXCEPTION 'disk full (test)'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON huddle_events FOR EACH ROW EXECUTE FUNCTION ${trigger}()`);

    // A consumer's delivery, as the agents do it: peek, log the delivery, then ack.
    const { messages, nextOffset } = await store.bus.peek('alice');
    expect(messages.map((m) => m.id)).toEqual([sent.id]);
    hub.emit('alice', 'message_delivered', { ids: [sent.id] });
    await expect(store.bus.ack('alice', nextOffset)).rejects.toThrow(/disk full \(test\)/);
    expect(failures.map((f) => f.message)).toEqual([expect.stringMatching(/disk full \(test\)/)]);
    expect(await store.bus.unreadCount('alice')).toBe(1);

    await db.query(`DROP TRIGGER ${trigger} ON huddle_events`);
    await store.close();
    const next = await backend.open({ hub: new EventHub(), secrets: [] });
    stores.push(next);
    expect((await next.bus.take('alice')).map((m) => m.id)).toEqual([sent.id]);
    expect(await next.bus.unreadCount('alice')).toBe(0);
  });
});
