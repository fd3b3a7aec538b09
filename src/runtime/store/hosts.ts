// Where teammates run, for a team whose store is shared by several processes (the PostgreSQL
// backend; docs/contract.md#command-line, `huddle worker`). Each process that opens the team is a host holding a
// lease it renews; a worker host offers slots; the lead's spawns go to a worker with a free slot
// (or run in the lead's own process when none is connected). A host whose lease lapses loses its
// teammates (marked failed, their tasks released, the lead told) and may write nothing more.
// The file backend has no hosts: everything runs in the one process.
import type { StoreError } from './store-errors.js';

/** What a worker needs to start a teammate the lead spawned. */
export interface PlacementSpec {
  name: string;
  role: string;
  model: string;
  prompt: string;
  planModeRequired: boolean;
  /** The permission mode the lead gave it (plan, ask, auto). */
  permissionMode: string;
}

export interface Placement extends PlacementSpec {
  id: string;
  /** The host that runs it (a roster member's `host`). */
  host: string;
  /** The host as a person reads it (its checkout and machine). */
  hostLabel: string;
}

/** What became of a stop on a worker (TeamHosts.stop). */
export type StopOutcome = 'stopped' | 'cancelled' | 'asked' | false;

export interface TeamHosts {
  /** This process's host id: the roster's `host` of what runs here. */
  readonly self: string;
  /** A slot on a live worker with one free, reserved for `spec`; undefined when no worker has one (run it here). */
  reserve(spec: PlacementSpec): Promise<Placement | undefined>;
  /**
   * Hands a reserved placement to its worker (once the roster has the member). False when the
   * reservation was gone by then (cancelled as stale, or its worker lapsed and was swept): no
   * worker will run it.
   */
  dispatch(placementId: string): Promise<boolean>;
  /** Gives a reserved slot back (the spawn was refused). */
  cancel(placementId: string): Promise<void>;
  /** True when `host` is another process that holds a live lease. */
  isLiveElsewhere(host: unknown): boolean;
  /** Asks every worker to stop the teammates it runs for the team (the team finished). */
  recall(reason: string): Promise<void>;
  /**
   * Asks the worker that runs teammate `name` to stop it now: `stopped` once its slot is free (the
   * teammate ended, or its worker was swept), `cancelled` when its worker had not taken it yet (it
   * never ran there), `asked` when the worker had not stopped it after a few leases (it still may; the
   * slot is counted until then). False when no worker runs it.
   */
  stop(name: string, reason: string): Promise<StopOutcome>;
  /**
   * Worker: offers `slots` slots; `start` runs each placement handed to this host (one at a time,
   * in order) and resolves once its teammate finished. Resolves once serving.
   */
  serve(slots: number, start: (placement: Placement, stop: AbortSignal) => Promise<void>): Promise<void>;
  /** Called once when this host's lease lapsed: nothing it writes is accepted any more. */
  onLost(listener: (error: StoreError) => void): () => void;
}
