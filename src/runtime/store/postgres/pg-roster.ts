// The team roster in PostgreSQL (docs/contract.md#roster): one row per member, in the order they joined.
// Reads are synchronous, from a copy this process keeps: its own writes update it at once (every
// roster of the team in this process shares the copy, as the file backend's do), other hosts'
// changes arrive by NOTIFY and are read back, and a reconnect of the listener re-reads it all.
// A member added without a `host` is placed on this process's host (docs/contract.md#command-line: the roster
// records where each teammate runs).
import type { MemberStatus } from '../../vocabulary.js';
import { LEAD_NAME } from '../../vocabulary.js';
import {
  type Member,
  type MemberPatch,
  type NewMember,
  type Roster,
  type RosterChange,
  type RosterConfig,
  RosterError,
  type RosterListener,
  type StatusExtra,
} from '../roster.js';
import { type PgContext, write } from './pg-context.js';
import { toJsonb } from './pg-json.js';
import { assertStatus, newMemberParts, statusPatch } from '../roster-rules.js';

/** What every roster of one team in this process shares. */
interface SharedRoster {
  teamName: string;
  lead: string;
  members: Map<string, { position: number; member: Member }>;
  listeners: Set<RosterListener>;
  /** Changes of this process committed: a re-read begun before one of them must not undo it. */
  generation: number;
  unsubscribe: () => void;
}

const SHARED_KEY = 'roster';

export class PgRoster implements Roster {
  readonly #ctx: PgContext;
  readonly #shared: SharedRoster;
  readonly #myListeners = new Set<RosterListener>();

  private constructor(ctx: PgContext, shared: SharedRoster) {
    this.#ctx = ctx;
    this.#shared = shared;
  }

  /** The team's roster, with the lead (created, with the team, when the team is new). */
  static async open(ctx: PgContext, options: { teamName: string }): Promise<PgRoster> {
    const { channel, team } = ctx;
    let shared = channel.shared.get(SHARED_KEY) as SharedRoster | undefined;
    if (!shared) {
      await write(ctx, async (client) => {
        await client.query('INSERT INTO huddle_teams (team, team_name, lead) VALUES ($1, $2, $3) ON CONFLICT (team) DO NOTHING', [
          team,
          options.teamName,
          LEAD_NAME,
        ]);
        const now = new Date().toISOString();
        const lead: Member = { name: LEAD_NAME, role: 'lead', status: 'idle', created_at: now, updated_at: now };
        await client.query('INSERT INTO huddle_members (team, name, position, data) VALUES ($1, $2, 1, $3) ON CONFLICT (team, name) DO NOTHING', [
          team,
          LEAD_NAME,
          JSON.stringify(lead),
        ]);
      });
      shared = { teamName: options.teamName, lead: LEAD_NAME, members: new Map(), listeners: new Set(), generation: 0, unsubscribe: () => undefined };
      channel.shared.set(SHARED_KEY, shared);
      const state = shared;
      const offChange = channel.on('r', (change, remote) => {
        if (!remote) return;
        // Announced after the commit and coalesced (team-channel.ts): the names of the members written.
        const names = Array.isArray(change.names) ? change.names : [change.name];
        for (const name of names) if (typeof name === 'string') void PgRoster.#reloadMember(ctx, state, name);
      });
      const offResync = channel.onResync(() => void PgRoster.#reloadAll(ctx, state, true));
      state.unsubscribe = () => {
        offChange();
        offResync();
      };
      await PgRoster.#reloadAll(ctx, state, false);
    }
    return new PgRoster(ctx, shared);
  }

  get teamName(): string {
    return this.#shared.teamName;
  }

  get lead(): string {
    return this.#shared.lead;
  }

  members(): Member[] {
    return ordered(this.#shared).map((member) => ({ ...member }));
  }

  get(name: string): Member | undefined {
    const entry = this.#shared.members.get(name);
    return entry ? { ...entry.member } : undefined;
  }

  names(): string[] {
    return ordered(this.#shared).map((member) => member.name);
  }

  async refresh(): Promise<void> {
    await PgRoster.#reloadAll(this.#ctx, this.#shared, true);
  }

  /** The names as stored now (the bus checks a recipient it does not know yet here). */
  async freshNames(): Promise<string[]> {
    await this.refresh();
    return this.names();
  }

  async add(input: NewMember): Promise<Member> {
    const { name, role, status, extra } = newMemberParts(input);
    const { team, channel } = this.#ctx;
    const stored = await write(
      this.#ctx,
      async (client) => {
        // The team row orders concurrent adds (positions are given out under it).
        await client.query('SELECT 1 FROM huddle_teams WHERE team = $1 FOR UPDATE', [team]);
        const now = new Date().toISOString();
        const fresh: Member = { host: this.#ctx.host, ...extra, name, role, status, created_at: now, updated_at: now };
        const existing = await client.query<{ position: string; data: Member }>('SELECT position, data FROM huddle_members WHERE team = $1 AND name = $2', [
          team,
          name,
        ]);
        let position: number;
        if (existing.rows.length) {
          const current = existing.rows[0]!.data;
          if (current.status !== 'shutdown' && current.status !== 'failed') {
            throw new RosterError(`a teammate named '${name}' already exists (status: ${current.status}); pick another name or shut it down first`);
          }
          position = Number(existing.rows[0]!.position);
          await client.query('UPDATE huddle_members SET data = $3 WHERE team = $1 AND name = $2', [team, name, toJsonb(fresh)]);
        } else {
          const { rows } = await client.query<{ next: string }>('SELECT coalesce(max(position), 0) + 1 AS next FROM huddle_members WHERE team = $1', [team]);
          position = Number(rows[0]!.next);
          await client.query('INSERT INTO huddle_members (team, name, position, data) VALUES ($1, $2, $3, $4)', [team, name, position, toJsonb(fresh)]);
        }
        return { position, member: fresh };
      },
      { once: true },
    );
    channel.announce(this.#ctx.db, { k: 'r', names: [name] });
    this.#remember(stored.position, stored.member);
    this.#notify({ kind: 'add', name, member: { ...stored.member } });
    this.#emitStatus(stored.member);
    return { ...stored.member };
  }

  async setStatus(name: string, status: MemberStatus, extra: StatusExtra = {}): Promise<Member> {
    return this.#apply(name, statusPatch(status, extra), true);
  }

  async update(name: string, patch: MemberPatch): Promise<Member> {
    if (patch.status !== undefined) assertStatus(patch.status);
    return this.#apply(name, patch, false);
  }

  onChange(listener: RosterListener): () => void {
    this.#myListeners.add(listener);
    this.#shared.listeners.add(listener);
    return () => {
      this.#myListeners.delete(listener);
      this.#shared.listeners.delete(listener);
    };
  }

  close(): void {
    for (const listener of this.#myListeners) this.#shared.listeners.delete(listener);
    this.#myListeners.clear();
  }

  // ---- internals -------------------------------------------------------------------------

  async #apply(name: string, patch: MemberPatch, clearMissing: boolean): Promise<Member> {
    const { team, channel } = this.#ctx;
    const { before, after, position } = await write(this.#ctx, async (client) => {
      const { rows } = await client.query<{ position: string; data: Member }>(
        'SELECT position, data FROM huddle_members WHERE team = $1 AND name = $2 FOR UPDATE',
        [team, name],
      );
      if (rows.length === 0) {
        const names = await client.query<{ name: string }>('SELECT name FROM huddle_members WHERE team = $1 ORDER BY position', [team]);
        throw new RosterError(`no teammate named '${name}'; known names: ${names.rows.map((row) => row.name).join(', ')}`);
      }
      const member = rows[0]!.data;
      const previous = { ...member };
      for (const [key, value] of Object.entries(patch)) {
        if (key === 'name' || key === 'created_at') continue;
        if (value === undefined) {
          if (clearMissing) delete member[key];
        } else {
          member[key] = value;
        }
      }
      member.updated_at = new Date().toISOString();
      await client.query('UPDATE huddle_members SET data = $3 WHERE team = $1 AND name = $2', [team, name, toJsonb(member)]);
      return { before: previous, after: member, position: Number(rows[0]!.position) };
    });
    channel.announce(this.#ctx.db, { k: 'r', names: [name] });
    this.#remember(position, after);
    const statusChanged = before.status !== after.status || before.status_reason !== after.status_reason || before.error !== after.error;
    this.#notify({ kind: statusChanged ? 'status' : 'update', name, member: { ...after } });
    if (statusChanged) this.#emitStatus(after);
    return { ...after };
  }

  #remember(position: number, member: Member): void {
    this.#shared.generation += 1;
    this.#shared.members.set(member.name, { position, member: { ...member } });
  }

  #notify(change: RosterChange): void {
    notify(this.#shared, change);
  }

  #emitStatus(member: Member): void {
    this.#ctx.hub.emit(member.name, 'status', {
      status: member.status,
      role: member.role,
      ...(member.status_reason !== undefined ? { reason: member.status_reason } : {}),
      ...(member.error !== undefined ? { error: member.error } : {}),
      ...(member.task !== undefined ? { task: member.task } : {}),
    });
  }

  /** Re-reads one member another host changed, and tells the listeners how it changed. */
  static async #reloadMember(ctx: PgContext, shared: SharedRoster, name: string): Promise<void> {
    const generation = shared.generation;
    let rows: Array<{ position: string; data: Member }>;
    try {
      ({ rows } = await ctx.db.query<{ position: string; data: Member }>('SELECT position, data FROM huddle_members WHERE team = $1 AND name = $2', [
        ctx.team,
        name,
      ]));
    } catch {
      return; // the next change or resync reads it
    }
    if (rows.length === 0 || generation !== shared.generation) {
      if (generation !== shared.generation) void PgRoster.#reloadMember(ctx, shared, name);
      return;
    }
    const member = rows[0]!.data;
    const before = shared.members.get(name)?.member;
    shared.members.set(name, { position: Number(rows[0]!.position), member });
    const kind = !before
      ? 'add'
      : before.status !== member.status || before.status_reason !== member.status_reason || before.error !== member.error
        ? 'status'
        : 'update';
    notify(shared, { kind, name, member: { ...member } });
  }

  /** Re-reads the whole roster (at open, and when the listener reconnected). */
  static async #reloadAll(ctx: PgContext, shared: SharedRoster, announce: boolean): Promise<void> {
    for (;;) {
      const generation = shared.generation;
      const [team, members] = await Promise.all([
        ctx.db.query<{ team_name: string; lead: string }>('SELECT team_name, lead FROM huddle_teams WHERE team = $1', [ctx.team]),
        ctx.db.query<{ position: string; data: Member }>('SELECT position, data FROM huddle_members WHERE team = $1 ORDER BY position', [ctx.team]),
      ]);
      if (generation !== shared.generation) continue; // a change of ours landed meanwhile: read again
      if (team.rows[0]) {
        shared.teamName = team.rows[0].team_name;
        shared.lead = team.rows[0].lead;
      }
      shared.members = new Map(members.rows.map((row) => [row.data.name, { position: Number(row.position), member: row.data }]));
      break;
    }
    if (announce) notify(shared, { kind: 'reload' });
  }
}

function ordered(shared: SharedRoster): Member[] {
  return [...shared.members.values()].sort((a, b) => a.position - b.position).map((entry) => entry.member);
}

function notify(shared: SharedRoster, change: RosterChange): void {
  for (const listener of [...shared.listeners]) {
    try {
      listener(change);
    } catch {
      // A broken listener must not break the roster.
    }
  }
}

/** Drops the roster copy of a team this process no longer has open. */
export function forgetRoster(ctx: PgContext): void {
  const shared = ctx.channel.shared.get(SHARED_KEY) as SharedRoster | undefined;
  shared?.unsubscribe();
  ctx.channel.shared.delete(SHARED_KEY);
}
