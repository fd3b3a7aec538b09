// The contract suites (test/store/contract/*.ts) are written against the storage interfaces only
// (src/runtime/store/*.ts), parameterised by a factory that opens a fresh team on some backend.
// Each backend runs them from its own test file (file-backend.contract.test.ts,
// postgres-backend.contract.test.ts). No file paths here: what a suite checks, every backend must do.
import { EventHub, type HuddleEvent } from '../../../../src/runtime/events/events.js';
import type { StoreBackend, TeamStore } from '../../../../src/runtime/store/team-store.js';

/** A string the stores must never write anywhere (it stands for the API key). */
export const SECRET = 'sk-contract-secret-0123456789abcdef';

export interface Instance {
  store: TeamStore;
  hub: EventHub;
  /** Every event emitted on this instance's hub, in order. */
  events: HuddleEvent[];
}

export interface ContractTeam extends Instance {
  backend: StoreBackend;
  /**
   * Another instance on the same team, standing for another process or host: its own hub, opened
   * to work for the team (`join`) rather than to run it.
   */
  join(): Promise<Instance>;
  /** Closes every instance opened here and removes the team. */
  dispose(): Promise<void>;
}

export interface StoreFactory {
  /** The backend's name, for the suite titles. */
  name: string;
  /** A fresh, empty team (its store opened to run it, with SECRET as the secret). */
  fresh(): Promise<ContractTeam>;
}

/**
 * A fresh team on `backend` as every factory opens it: a store to run it, more to join it, all
 * closed (and `cleanup` run) on dispose.
 */
export async function openContractTeam(backend: StoreBackend, cleanup: () => void): Promise<ContractTeam> {
  const opened: TeamStore[] = [];
  const open = async (mode: 'run' | 'join'): Promise<Instance> => {
    const hub = new EventHub();
    const events = collect(hub);
    const store = await backend.open({ hub, secrets: [SECRET], mode });
    opened.push(store);
    return { store, hub, events };
  };
  const first = await open('run');
  return {
    ...first,
    backend,
    join: () => open('join'),
    async dispose() {
      for (const store of opened) await store.close();
      cleanup();
    },
  };
}

export function collect(hub: EventHub): HuddleEvent[] {
  const events: HuddleEvent[] = [];
  hub.subscribe((event) => events.push(event));
  return events;
}

/** Resolves with the first value `probe` gives that is not undefined, checking it each time `subscribe` calls back. */
export function when<T>(subscribe: (check: () => void) => () => void, probe: () => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    let done = false;
    let unsubscribe: (() => void) | undefined;
    const check = () => {
      if (done) return;
      const value = probe();
      if (value === undefined) return;
      done = true;
      unsubscribe?.();
      resolve(value);
    };
    unsubscribe = subscribe(check);
    check();
    if (done) unsubscribe();
  });
}
