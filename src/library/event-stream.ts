// A session's events as an async iterator: buffered from the moment it is made, ended when the team
// closes (or the loop breaks). node:events' on() does the buffering and the ending.
import { EventEmitter, on } from 'node:events';
import type { EventHub } from '../runtime/events/events.js';
import type { HuddleEvent } from '../runtime/events/event-types.js';

const EVENT = 'event';
const CLOSE = 'close';

export class EventStream {
  readonly #emitter = new EventEmitter();
  #closed = false;

  constructor(hub: EventHub) {
    // Many iterators at once are normal (one per watcher); none is a leak.
    this.#emitter.setMaxListeners(0);
    hub.subscribe((event) => this.#emitter.emit(EVENT, event));
  }

  /** Every event from this call on (subscribed now, not at the first next()) until the team closes. */
  events(): AsyncGenerator<HuddleEvent, void, undefined> {
    if (this.#closed) return unwrap(undefined);
    return unwrap(on(this.#emitter, EVENT, { close: [CLOSE] }));
  }

  close(): void {
    this.#closed = true;
    this.#emitter.emit(CLOSE);
  }
}

async function* unwrap(source: AsyncIterableIterator<unknown[]> | undefined): AsyncGenerator<HuddleEvent, void, undefined> {
  if (!source) return;
  for await (const [event] of source) yield event as HuddleEvent;
}
