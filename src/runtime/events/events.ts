// Every event in huddle has one shape (docs/contract.md#events): {ts, agent, type, ...fields}, typed per
// type in event-types.ts. The runtime and the agents emit them; logs, the headless --json stream,
// the console, budgets and the watchdog subscribe and narrow by `type`.
import type { EventFields, EventOf, EventType, HuddleEvent } from './event-types.js';

export type { EventFields, EventOf, EventType, HuddleEvent } from './event-types.js';
export { EVENT_TYPES, PROMPT_SOURCES, isEventType, type PromptSource } from './event-types.js';

export type EventListener = (event: HuddleEvent) => void;

/**
 * An event as a plain record (what a log line parses to): for code that reads fields without
 * narrowing by `type` first, such as tests filtering a stream. Huddle's own code narrows.
 */
export type EventRecord = { ts: string; agent: string; type: EventType; [field: string]: unknown };

/** A synchronous fan-out of events. Listeners must be cheap; heavy work belongs behind a buffer. */
export class EventHub {
  #listeners = new Set<EventListener>();

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit<T extends EventType>(agent: string, type: T, fields: EventFields[T]): EventOf<T> {
    const event = { ts: new Date().toISOString(), agent, type, ...fields } as EventOf<T>;
    for (const listener of this.#listeners) {
      try {
        listener(event as HuddleEvent);
      } catch {
        // A broken listener must never break the agent that emitted the event.
      }
    }
    return event;
  }
}

/** A handle bound to one agent, so loops and tools need not repeat their name. */
export interface AgentEmitter {
  readonly agent: string;
  emit<T extends EventType>(type: T, fields: EventFields[T]): EventOf<T>;
}

export function agentEmitter(hub: EventHub, agent: string): AgentEmitter {
  return { agent, emit: (type, fields) => hub.emit(agent, type, fields) };
}

/**
 * The same emitter, and every event it emits also handed to `tap` (after the hub's listeners):
 * how an agent's loop sees each event of its own that changes its transcript.
 */
export function tappedEmitter(emitter: AgentEmitter, tap: (event: HuddleEvent) => void): AgentEmitter {
  return {
    agent: emitter.agent,
    emit: (type, fields) => {
      const event = emitter.emit(type, fields);
      tap(event as HuddleEvent);
      return event;
    },
  };
}
