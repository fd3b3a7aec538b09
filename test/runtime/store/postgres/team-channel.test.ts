// The team's NOTIFY channel (team-channel.ts): changes announced after their commits go out
// together, one NOTIFY statement for everything announced within a few milliseconds (a NOTIFYing
// commit holds the server's notify lock through its flush); a payload carrying several changes is
// unpacked by the receiving process, and its own NOTIFYs are ignored.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { channelOf } from '../../../../src/runtime/store/postgres/pg-listener.js';
import { type Change, PROCESS_ORIGIN, TeamChannel } from '../../../../src/runtime/store/postgres/team-channel.js';
import { describePostgres, teamUrl } from '../../../helpers/postgres.js';

describePostgres('the team channel on PostgreSQL', (base) => {
  let listener: pg.Client;
  let pool: pg.Pool;
  beforeAll(async () => {
    listener = new pg.Client({ connectionString: base });
    await listener.connect();
    pool = new pg.Pool({ connectionString: base, max: 2 });
  });
  afterAll(async () => {
    await listener?.end();
    await pool?.end();
  });

  it('changes announced together leave as one NOTIFY, coalesced; a batch from another process is unpacked', { timeout: 30_000 }, async () => {
    const { team } = teamUrl(base, 'channel');
    const received: string[] = [];
    listener.on('notification', (message) => {
      if (message.channel === channelOf(team) && message.payload) received.push(message.payload);
    });
    await listener.query(`LISTEN ${channelOf(team)}`);
    const channel = await TeamChannel.acquire(base, team, { pingMs: 1_000, pollMs: 60_000, listen: true });
    try {
      channel.announce(pool, { k: 'b', ids: [1] });
      channel.announce(pool, { k: 'e', h: 'host-a' });
      channel.announce(pool, { k: 'b', ids: [2, 3] });
      channel.announce(pool, { k: 's', rows: [['alice', '1', 'x', 0.1, 1, 10, 5]] });
      channel.announce(pool, { k: 's', rows: [['alice', '1', 'x', 0.3, 2, 30, 9]] });
      await channel.drained();
      await expect.poll(() => received.length).toBe(1);
      const sent = JSON.parse(received[0]!) as { k: string; o: string; c: Change[] };
      expect(sent).toMatchObject({ k: '*', o: PROCESS_ORIGIN });
      expect(sent.c).toEqual([
        { k: 'b', ids: [1, 2, 3] },
        { k: 'e', h: 'host-a' },
        // The newer copy of a spend row (more calls) wins.
        { k: 's', rows: [['alice', '1', 'x', 0.3, 2, 30, 9]] },
      ]);

      // From another process: each change reaches its handlers, as remote.
      const seen: Array<[string, boolean]> = [];
      channel.on('b', (change, remote) => seen.push([`b:${JSON.stringify(change.ids)}`, remote]));
      channel.on('e', (change, remote) => seen.push([`e:${String(change.h)}`, remote]));
      const batch = JSON.stringify({
        k: '*',
        o: 'another-process',
        c: [
          { k: 'b', ids: [7] },
          { k: 'e', h: 'host-b' },
        ],
      });
      await pool.query('SELECT pg_notify($1, $2)', [channelOf(team), batch]);
      // And this process's own batch is ignored.
      await pool.query('SELECT pg_notify($1, $2)', [channelOf(team), JSON.stringify({ k: '*', o: PROCESS_ORIGIN, c: [{ k: 'b', ids: [8] }] })]);
      await pool.query('SELECT pg_notify($1, $2)', [channelOf(team), JSON.stringify({ k: 'e', o: 'another-process', h: 'last' })]);
      await expect.poll(() => seen.length).toBe(3);
      expect(seen).toEqual([
        ['b:[7]', true],
        ['e:host-b', true],
        ['e:last', true],
      ]);
    } finally {
      channel.release();
    }
  });
});
