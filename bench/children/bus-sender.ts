// Forked by bench/bus.ts (bundled by scripts/bench.mjs): on each {go}, stamps the time and sends
// one message to 'parent' through its own FileBus over the same inbox directory.
import { FileBus } from '../../src/runtime/store/file/file-bus.js';

const inbox = process.argv[2];
const send: NonNullable<typeof process.send> = process.send?.bind(process) ?? (() => false);
if (!inbox || !process.send) throw new Error('usage: fork bus-sender.mjs <inboxDir> with an IPC channel');
const bus = new FileBus(inbox, { knownNames: () => ['parent', 'child'] });
const reply = (message: object) => send(message);

process.on('message', (message: { go?: number; quit?: boolean }) => {
  if (message.quit) {
    bus.close();
    process.disconnect?.();
    return;
  }
  const sentAt = process.hrtime.bigint();
  bus.send({ from: 'child', to: 'parent', content: String(sentAt) }).then(
    () => reply({ sent: message.go }),
    (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
  );
});
reply({ ready: true });
