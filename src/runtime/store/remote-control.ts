// Steering an agent another process runs (a worker of a team on PostgreSQL; docs/contract.md#command-line): the
// lead's console or `huddle interrupt` asks, the host that runs the agent does it. A request is a
// notification, not a record: one sent while the host's link is down is lost, and the person
// presses again (an interrupt is worth nothing later). The file backend has one process: no need.
export interface RemoteControl {
  /** Asks `host` to interrupt `name`'s turn. */
  interrupt(name: string, host: string): Promise<void>;
  /** This process: called with the name of an agent another process asks it to interrupt. */
  onInterrupt(listener: (name: string) => void): () => void;
}
