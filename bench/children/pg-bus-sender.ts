// Forked by bench/postgres.ts: joins the team at argv[2] (a team URL) and, on each {go}, stamps
// the time and sends one message to 'parent' through the PostgreSQL bus.
import { EventHub } from '../../src/runtime/events/events.js';
import { postgresBackend } from '../../src/runtime/store/postgres/pg-store.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';

const [url, cwd] = process.argv.slice(2);
const send: NonNullable<typeof process.send> = process.send?.bind(process) ?? (() => false);
if (!url || !cwd || !process.send) throw new Error('usage: fork pg-bus-sender.mjs <teamUrl> <cwd> with an IPC channel');
const store = await postgresBackend(url, new Workspace(cwd)).open({ hub: new EventHub(), secrets: [], mode: 'join' });

process.on('message', (message: { go?: number; quit?: boolean }) => {
  if (message.quit) {
    void store.close().then(() => process.disconnect?.());
    return;
  }
  const sentAt = process.hrtime.bigint();
  store.bus.send({ from: 'child', to: 'parent', content: String(sentAt) }).then(
    () => send({ sent: message.go }),
    (error: unknown) => send({ error: error instanceof Error ? error.message : String(error) }),
  );
});
send({ ready: true });
