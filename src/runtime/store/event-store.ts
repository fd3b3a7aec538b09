// Every event of every agent, kept as the team's record (docs/contract.md#events): resume rebuilds
// transcripts from it, a person reads it, the run record sums it up. The contract every backend
// keeps (store/file/event-log.ts today: `.team/logs/<agent>/session-<stamp>.ndjson`). Events
// reach it from the EventHub the store was opened with: every event emitted there is recorded.

/** One logged event, as read back (docs/contract.md#events). */
export interface LoggedEvent {
  type: string;
  [field: string]: unknown;
}

export interface EventStore {
  /** The agents that have logged events, in any session. */
  agents(): Promise<string[]>;
  /** Every event of `agent`, oldest first, across sessions; an entry cut by a crash is skipped. */
  read(agent: string): Promise<LoggedEvent[]>;
  /**
   * Keeps a whole conversation replaced by a compaction (secrets scrubbed); returns where it went,
   * as a person would look for it (`.team/logs/alice/transcript-….json` in the file backend).
   * Throws a StoreError when it cannot be kept.
   */
  saveTranscript(agent: string, record: Record<string, unknown>): Promise<string>;
  /** A transcript kept by saveTranscript, by the location it returned (undefined: no such transcript). */
  readTranscript(location: string): Promise<Record<string, unknown> | undefined>;
  /** Keeps a run record (runtime/record; secrets scrubbed): `.team/logs/run-<stamp>.json`. Returns where. */
  saveRunRecord(record: Record<string, unknown>): Promise<string>;
  /** Stops recording. */
  close(): void;
}
