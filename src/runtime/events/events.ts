// Every event in huddle has one shape (SPEC section 7): {ts, agent, type, ...fields}.
// The runtime emits them; logs, the headless --json stream and the console subscribe.

export type EventType =
  | 'text_delta'
  | 'text'
  | 'tool_call'
  | 'tool_result'
  | 'status'
  | 'message_sent'
  | 'message_delivered'
  | 'task'
  | 'usage'
  | 'compaction'
  | 'error'
  | 'done'
  // Extensions beyond SPEC section 7 (consumers ignore types they do not know):
  | 'prompt' // a user turn entered the agent's context: {text, source}
  | 'retry' // a model call is being retried; any partial text of the failed attempt is void
  | 'warning' // something was skipped or repaired and the run goes on (a torn inbox line, say)
  | 'approval_requested' // a tool call waits for the person (ask mode): {id, tool, summary, reason, prefixes}
  | 'approval_resolved'; // {id, decision: approve|deny|always|cancelled, by?, note?}

export interface HuddleEvent {
  ts: string;
  agent: string;
  type: EventType;
  [field: string]: unknown;
}

export type EventListener = (event: HuddleEvent) => void;

/** A synchronous fan-out of events. Listeners must be cheap; heavy work belongs behind a buffer. */
export class EventHub {
  #listeners = new Set<EventListener>();

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(agent: string, type: EventType, fields: Record<string, unknown> = {}): HuddleEvent {
    const event: HuddleEvent = { ts: new Date().toISOString(), agent, type, ...fields };
    for (const listener of this.#listeners) {
      try {
        listener(event);
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
  emit(type: EventType, fields?: Record<string, unknown>): HuddleEvent;
}

export function agentEmitter(hub: EventHub, agent: string): AgentEmitter {
  return { agent, emit: (type, fields) => hub.emit(agent, type, fields) };
}
