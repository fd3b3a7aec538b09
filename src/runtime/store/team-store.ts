// Where a team's shared state lives: one object holding every store of the team (bus, board,
// roster, spend, approvals, allow-list, event record). A backend opens it; the session, the
// agents and the faces use only these interfaces. Files in the workspace are the embedded default
// (store/file/); nothing outside a backend touches `.team/` or `.tasks/` state files.
import type { EventHub } from '../events/events.js';
import type { AllowList } from './allow-list.js';
import type { Approvals } from './approvals.js';
import type { Board } from './board.js';
import type { Bus } from './bus.js';
import type { EventStore } from './event-store.js';
import type { TeamHosts } from './hosts.js';
import type { RemoteControl } from './remote-control.js';
import type { Roster } from './roster.js';
import type { SpendLedger } from './spend-ledger.js';
import { StoreError } from './store-errors.js';

export { StoreError, StoreUnavailableError, StoreWriteError } from './store-errors.js';

export interface TeamStore {
  readonly teamName: string;
  readonly bus: Bus;
  readonly board: Board;
  readonly roster: Roster;
  readonly spend: SpendLedger;
  readonly approvals: Approvals;
  readonly allowList: AllowList;
  readonly events: EventStore;
  /** Where teammates run, when the team is shared by several processes (PostgreSQL); absent: all run here. */
  readonly hosts?: TeamHosts;
  /** Steering agents other processes run (PostgreSQL); absent: every agent runs here. */
  readonly remote?: RemoteControl;
  /** The first failure that keeps the store from holding the team's state (a full disk, say), if any. */
  readonly failure: StoreError | undefined;
  /** Called once on such a failure: the run cannot go on and should end (exit 1), saying `error.message`. */
  onFailure(listener: (error: StoreError) => void): () => void;
  /** Flushes and releases everything (watchers, connections, the team lock); the team is still there for a resume. */
  close(reason?: string): Promise<void>;
}

export interface OpenStoreOptions {
  /** Events of this process: what the stores emit goes here, and the event record subscribes to it. */
  hub: EventHub;
  /** Strings never to write anywhere (the API key). */
  secrets: string[];
  /**
   * `run` (the default): this process runs the team (a console, a headless run) and holds it: a
   * second run is refused with TeamBusyError. `join`: this process works for a team another one
   * runs (huddle's MCP server for an external agent, a worker host) and takes no such hold.
   */
  mode?: 'run' | 'join';
}

/** A place a team can live: the workspace's files, or a database shared by several hosts (store/postgres/). */
export interface StoreBackend {
  /** For messages: where the team lives (`.team/ in /home/me/app`). */
  describe(): string;
  /** Members of a team left there that are not shut down (docs/contract.md#command-line: an unfinished team). TeamBusyError while another process runs it. */
  unfinishedMembers(): Promise<string[]>;
  /** Moves the team left there aside (`--fresh`); returns where it went, or undefined when there was none. TeamBusyError while another process runs it. */
  archive(): Promise<string | undefined>;
  /** Opens the team (creating it when there is none). TeamBusyError, or StoreUnavailableError saying which place and why (read-only, full disk, a broken state file). */
  open(options: OpenStoreOptions): Promise<TeamStore>;
}

/**
 * Another live huddle process holds the team (docs/contract.md#command-line): a second run must not touch it.
 * Every face turns this into one line and exit code 2.
 */
export class TeamBusyError extends StoreError {
  constructor(
    readonly holder: { pid: number; host?: string; since?: string },
    where: string,
  ) {
    super(
      `another huddle (pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}${holder.since ? `, since ${holder.since}` : ''}) ` +
        `is running the team in ${where}; use that one (huddle status / huddle send), or stop it first`,
    );
    this.name = 'TeamBusyError';
  }
}
