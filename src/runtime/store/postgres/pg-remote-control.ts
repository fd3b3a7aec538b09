// Interrupts across hosts (store/remote-control.ts) over the team's NOTIFY channel: the request
// names the host that runs the agent; only that host acts on it.
import type { RemoteControl } from '../remote-control.js';
import { type PgContext, write } from './pg-context.js';

export class PgRemoteControl implements RemoteControl {
  readonly #ctx: PgContext;

  constructor(ctx: PgContext) {
    this.#ctx = ctx;
  }

  async interrupt(name: string, host: string): Promise<void> {
    await write(this.#ctx, (client) => this.#ctx.channel.publish(client, { k: 'x', host, name }));
  }

  onInterrupt(listener: (name: string) => void): () => void {
    return this.#ctx.channel.on('x', (change, remote) => {
      if (remote && change.host === this.#ctx.host && typeof change.name === 'string') listener(change.name);
    });
  }
}
