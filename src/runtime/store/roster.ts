// The team roster (docs/contract.md#roster): who is on the team, with what role, model and status. The
// contract every backend keeps (store/file/file-roster.ts today). Reads are synchronous from a
// copy the backend keeps fresh; every change is atomic and announced to onChange listeners.
import type { MemberStatus } from '../vocabulary.js';

export interface Member {
  name: string;
  role: string;
  status: MemberStatus;
  model?: string;
  worktree?: string;
  created_at: string;
  updated_at: string;
  /** Why the member is in its status (e.g. what it is waiting on). */
  status_reason?: string;
  /** What made it fail. */
  error?: string;
  /** The task it is on, if any. */
  task?: number | string | null;
  [extra: string]: unknown;
}

export interface RosterConfig {
  team_name: string;
  lead: string;
  members: Member[];
  [extra: string]: unknown;
}

export interface NewMember {
  name: string;
  role: string;
  model?: string;
  worktree?: string;
  /** Defaults to `working`: a teammate counts as working from its spawn until it first goes idle. */
  status?: MemberStatus;
  [extra: string]: unknown;
}

export interface StatusExtra {
  reason?: string;
  error?: string;
  task?: number | string | null;
}

export type MemberPatch = Partial<Omit<Member, 'name' | 'created_at'>>;

export interface RosterChange {
  kind: 'add' | 'status' | 'update' | 'reload';
  /** The member concerned (absent for `reload`, which means "re-read everything"). */
  name?: string;
  member?: Member;
}

export type RosterListener = (change: RosterChange) => void;

export class RosterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RosterError';
  }
}

export interface Roster {
  readonly teamName: string;
  readonly lead: string;
  /** A snapshot of every member (copies: change them through the methods). */
  members(): Member[];
  get(name: string): Member | undefined;
  names(): string[];
  /** Re-reads the stored roster now (reads refresh on their own; this also reports a broken store). */
  refresh(): Promise<void>;
  /** Adds a member; a live member of that name is refused, a `shutdown` or `failed` one is replaced. */
  add(input: NewMember): Promise<Member>;
  /** Sets a member's status; `reason`/`error` are stored as `status_reason`/`error` (cleared if absent). */
  setStatus(name: string, status: MemberStatus, extra?: StatusExtra): Promise<Member>;
  /** Merges `patch` into a member. */
  update(name: string, patch: MemberPatch): Promise<Member>;
  /** Every change, made through this store or another on the same team (those may come as `reload`). */
  onChange(listener: RosterListener): () => void;
  /** Drops this object's listeners (the roster itself stays). */
  close(): void;
}
