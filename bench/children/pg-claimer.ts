// Forked by bench/postgres.ts: on {go}, runs `claimers` loops on the team at argv[2]: claim the
// first task it may (claimNext), complete it, again. A loop that finds nothing claimable (the next
// tasks of the chains are still in progress elsewhere) waits for the next board change. Each
// completion is reported ({done: 1}); on {stop} it reports the ids each loop completed.
import pg from 'pg';
import { EventHub } from '../../src/runtime/events/events.js';
import { postgresBackend } from '../../src/runtime/store/postgres/pg-store.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';

const [url, cwd, countArg, prefix = 'p'] = process.argv.slice(2);
const count = Number(countArg);
const send: NonNullable<typeof process.send> = process.send?.bind(process) ?? (() => false);
if (!url || !cwd || !Number.isInteger(count) || !process.send) throw new Error('usage: fork pg-claimer.mjs <teamUrl> <cwd> <claimers> <prefix>');
const store = await postgresBackend(url, new Workspace(cwd)).open({ hub: new EventHub(), secrets: [], mode: 'join' });
const { board } = store;
let stopping = false;
const ids: number[][] = Array.from({ length: count }, () => []);
// What one claim costs this process: its CPU time and its round trips to the server (each client.query is one), from {go} to {stop}.
let roundTrips = 0;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  roundTrips++;
  return query.apply(this, args);
};
let cpuAtGo = process.cpuUsage();
let roundTripsAtGo = 0;

function nextChange(): Promise<void> {
  return new Promise<void>((resolve) => {
    const off = board.onChange(() => {
      off();
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      off();
      resolve();
    }, 50);
  });
}

// Completions are reported once per turn of the event loop, not one message each: the parent only counts them.
let unreported = 0;
function reportDone(): void {
  if (unreported++ === 0)
    setImmediate(() => {
      send({ done: unreported });
      unreported = 0;
    });
}

const loops = () =>
  Promise.all(
    ids.map(async (mine, i) => {
      const owner = `${prefix}c${i}`;
      while (!stopping) {
        const changed = nextChange(); // listening before looking: a change in between still wakes it
        const task = await board.claimNext(owner);
        if (!task) {
          await changed;
          continue;
        }
        await board.update(task.id, { status: 'completed' }, owner);
        mine.push(task.id);
        reportDone();
      }
    }),
  );

process.on('message', (message: { go?: boolean; stop?: boolean }) => {
  if (message.go) {
    cpuAtGo = process.cpuUsage();
    roundTripsAtGo = roundTrips;
    loops().catch((error: unknown) => send({ error: error instanceof Error ? error.message : String(error) }));
  } else if (message.stop) {
    stopping = true;
    const cpu = process.cpuUsage(cpuAtGo);
    const cost = { cpuMs: (cpu.user + cpu.system) / 1000, roundTrips: roundTrips - roundTripsAtGo };
    // Let the loops see it, then report.
    setTimeout(() => {
      void store.close().then(() => send({ ids, ...cost }, undefined, {}, () => process.disconnect?.()));
    }, 100);
  }
});
send({ ready: true });
