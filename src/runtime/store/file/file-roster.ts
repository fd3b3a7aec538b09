// The team roster: `.team/config.json` (docs/contract.md#roster).
//
// lowdb (steno underneath) writes the file atomically (temp file + rename), so readers never see
// half a file. Every change is a read-modify-write under the file lock `<teamDir>/config.json.lock`
// and starts by re-reading the file, so two processes (or two Roster objects) never lose each
// other's updates; the changes of this process that wait for the lock together share one. Reads
// are synchronous from memory, refreshed from disk when the file changed (one stat per read), so a
// member added by another process shows up without a restart.
// The Roster objects of one process on one file share what they know (and their listeners): a
// change through one is announced to all at once; a change by another process is found by a
// watcher on the team directory (while anyone listens) or by the next read, and announced as a
// `reload`.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import * as z from 'zod';
import { MalformedFileError, readJson, writeJsonAtomic } from '../../fs/atomic-file.js';
import { DirectoryWatcher } from '../../fs/directory-watcher.js';
import type { EventHub } from '../../events/events.js';
import { makeDirectory, StoreWriteError } from '../store-errors.js';
import { withFileLock } from '../file-lock.js';
import { AGENT_NAME_PATTERN, LEAD_NAME, MEMBER_STATUSES, type MemberStatus } from '../../vocabulary.js';
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
import { assertStatus, newMemberParts, statusPatch } from '../roster-rules.js';

export interface FileRosterOptions {
  /** The team name written when the file is created (default: the workspace directory's name). */
  teamName?: string;
  /** The lead's role and model, written when the file is created. */
  leadRole?: string;
  leadModel?: string;
  events?: EventHub;
}

/** config.json exists but is not a roster. Never overwritten: a person has to look at it. */
export class MalformedRosterError extends MalformedFileError {
  constructor(file: string, detail: string) {
    super(file, detail);
    this.name = 'MalformedRosterError';
    this.message =
      `${file} is not a valid team roster (${detail}); fix it by hand, or move it aside ` + `(or start with --fresh, which archives it) to begin a new team`;
  }
}

const memberSchema = z.looseObject({
  name: z.string().regex(AGENT_NAME_PATTERN, 'not an agent name'),
  role: z.string(),
  status: z.enum(MEMBER_STATUSES),
  model: z.string().optional(),
  worktree: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});

const configSchema = z.looseObject({
  team_name: z.string(),
  lead: z.string(),
  members: z.array(memberSchema),
});

interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** What every FileRoster of this process on one config.json shares. */
interface SharedRoster {
  data: RosterConfig;
  stamp: FileStamp | undefined;
  listeners: Set<RosterListener>;
  watcher: DirectoryWatcher | undefined;
  warnedStamp: string | undefined;
  /** Writes of this process in flight: the file changing under them is not another process's change. */
  writing: number;
  /** Changes waiting for the lock, to be applied together when it is taken (see #mutate). */
  batch: PendingChange[] | undefined;
}

/** A change of the roster waiting for its turn, and how its caller hears the outcome. */
interface PendingChange {
  change: (data: RosterConfig) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const shared = new Map<string, SharedRoster>();

export class FileRoster implements Roster {
  readonly file: string;
  readonly teamDir: string;
  #lockFile: string;
  #db: Low<RosterConfig | null>;
  #shared: SharedRoster;
  #events: EventHub | undefined;
  #myListeners = new Set<RosterListener>();

  private constructor(teamDir: string, data: RosterConfig, events: EventHub | undefined) {
    this.teamDir = path.resolve(teamDir);
    this.file = path.join(this.teamDir, 'config.json');
    this.#lockFile = this.file; // withFileLock locks `<file>.lock`, i.e. config.json.lock
    this.#db = new Low<RosterConfig | null>(new PrivateJsonFile<RosterConfig | null>(this.file), null);
    let state = shared.get(this.file);
    if (!state)
      shared.set(
        this.file,
        (state = { data, stamp: undefined, listeners: new Set(), watcher: undefined, warnedStamp: undefined, writing: 0, batch: undefined }),
      );
    this.#shared = state;
    this.#events = events;
  }

  /** Opens the roster in `teamDir`, creating config.json (with the lead as a member) if missing. */
  static async open(teamDir: string, options: FileRosterOptions = {}): Promise<FileRoster> {
    makeDirectory(teamDir);
    const now = new Date().toISOString();
    const teamName = options.teamName ?? (path.basename(path.dirname(path.resolve(teamDir))) || 'team');
    const initial: RosterConfig = {
      team_name: teamName,
      lead: LEAD_NAME,
      members: [
        {
          name: LEAD_NAME,
          role: options.leadRole ?? 'lead',
          status: 'idle',
          ...(options.leadModel ? { model: options.leadModel } : {}),
          created_at: now,
          updated_at: now,
        },
      ],
    };
    const roster = new FileRoster(teamDir, structuredClone(initial), options.events);
    await roster.#create(initial);
    return roster;
  }

  get teamName(): string {
    return this.#current().team_name;
  }

  get lead(): string {
    return this.#current().lead;
  }

  /** A snapshot of every member (copies: edit through the methods). */
  members(): Member[] {
    return this.#current().members.map((member) => ({ ...member }));
  }

  get(name: string): Member | undefined {
    const member = this.#current().members.find((candidate) => candidate.name === name);
    return member ? { ...member } : undefined;
  }

  names(): string[] {
    return this.#current().members.map((member) => member.name);
  }

  /** Re-reads config.json now (reads already refresh when the file changed; this also throws). */
  async refresh(): Promise<void> {
    await this.#load();
  }

  /** Adds a member. A live member of that name is refused; a `shutdown` or `failed` one is replaced. */
  async add(input: NewMember): Promise<Member> {
    const { name, role, status, extra } = newMemberParts(input);
    const member = await this.#mutate((data) => {
      const now = new Date().toISOString();
      const fresh: Member = { ...extra, name, role, status, created_at: now, updated_at: now };
      const index = data.members.findIndex((candidate) => candidate.name === name);
      if (index >= 0) {
        const existing = data.members[index]!;
        if (existing.status !== 'shutdown' && existing.status !== 'failed') {
          throw new RosterError(`a teammate named '${name}' already exists (status: ${existing.status}); pick another name or shut it down first`);
        }
        data.members[index] = fresh;
      } else {
        data.members.push(fresh);
      }
      return fresh;
    });
    this.#notify({ kind: 'add', name, member: { ...member } });
    this.#emitStatus(member);
    return member;
  }

  /** Sets a member's status; `reason`/`error` are stored as `status_reason`/`error` (cleared if absent). */
  async setStatus(name: string, status: MemberStatus, extra: StatusExtra = {}): Promise<Member> {
    return this.#apply(name, statusPatch(status, extra), true);
  }

  /** Merges `patch` into a member (a `status` in it is validated and announced like setStatus). */
  async update(name: string, patch: MemberPatch): Promise<Member> {
    if (patch.status !== undefined) assertStatus(patch.status);
    return this.#apply(name, patch, false);
  }

  /** Calls `listener` after every change made through any Roster of this process, and when another process's change was found. */
  onChange(listener: RosterListener): () => void {
    this.#myListeners.add(listener);
    this.#shared.listeners.add(listener);
    this.#syncWatcher();
    return () => {
      this.#myListeners.delete(listener);
      this.#shared.listeners.delete(listener);
      this.#syncWatcher();
    };
  }

  /** Drops this object's listeners; the watcher stops when no Roster of the process listens. */
  close(): void {
    for (const listener of this.#myListeners) this.#shared.listeners.delete(listener);
    this.#myListeners.clear();
    this.#syncWatcher();
  }

  // ---- internals -------------------------------------------------------------------------

  async #apply(name: string, patch: MemberPatch, clearMissing: boolean): Promise<Member> {
    const { before, after } = await this.#mutate((data) => {
      const member = data.members.find((candidate) => candidate.name === name);
      if (!member) {
        throw new RosterError(`no teammate named '${name}'; known names: ${data.members.map((m) => m.name).join(', ')}`);
      }
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
      return { before: previous, after: { ...member } };
    });
    const statusChanged = before.status !== after.status || before.status_reason !== after.status_reason || before.error !== after.error;
    this.#notify({ kind: statusChanged ? 'status' : 'update', name, member: { ...after } });
    if (statusChanged) this.#emitStatus(after);
    return after;
  }

  #emitStatus(member: Member): void {
    this.#events?.emit(member.name, 'status', {
      status: member.status,
      role: member.role,
      ...(member.status_reason !== undefined ? { reason: member.status_reason } : {}),
      ...(member.error !== undefined ? { error: member.error } : {}),
      ...(member.task !== undefined ? { task: member.task } : {}),
    });
  }

  /** Watches the team directory for config.json written by another process, while anyone listens. */
  #syncWatcher(): void {
    const state = this.#shared;
    if (state.listeners.size === 0) {
      state.watcher?.close();
      state.watcher = undefined;
      return;
    }
    state.watcher ??= new DirectoryWatcher(this.teamDir, {
      accept: (name) => name === 'config.json',
      onChange: () => void this.#current(),
      debounceMs: 15,
      pollMs: 1_000,
    });
  }

  #notify(change: RosterChange): void {
    for (const listener of [...this.#shared.listeners]) {
      try {
        listener(change);
      } catch {
        // A broken listener must not break the roster.
      }
    }
  }

  /**
   * Runs `change` on freshly read data under the lock, then writes the result. The changes of this
   * process that wait for the lock together (a team's status writes queue behind one another) are
   * applied in one read-modify-write when it is taken, each in the order it was asked and on a copy,
   * so one that throws is left out and fails alone: one new file and one lock taking for the lot,
   * where each change made its own.
   */
  #mutate<T>(change: (data: RosterConfig) => T): Promise<T> {
    const state = this.#shared;
    return new Promise<T>((resolve, reject) => {
      const pending: PendingChange = { change, resolve: resolve as (value: unknown) => void, reject };
      if (state.batch) {
        state.batch.push(pending);
        return;
      }
      const batch = [pending];
      state.batch = batch;
      const applied = withFileLock(this.#lockFile, async () => {
        // Taken: later changes wait for the next batch.
        if (state.batch === batch) state.batch = undefined;
        const data = await this.#readFile();
        if (!data) throw new RosterError(`${this.file} disappeared; reopen the team (huddle --resume or --fresh)`);
        let current = data;
        const outcomes = batch.map((one) => {
          const draft = structuredClone(current);
          try {
            const value = one.change(draft);
            current = draft;
            return { ok: true as const, value };
          } catch (error) {
            return { ok: false as const, error };
          }
        });
        if (outcomes.some((outcome) => outcome.ok)) await this.#write(current);
        return outcomes;
      });
      applied.then(
        (outcomes) => outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error))),
        (error: unknown) => {
          if (state.batch === batch) state.batch = undefined;
          for (const one of batch) one.reject(error);
        },
      );
    });
  }

  async #write(data: RosterConfig): Promise<void> {
    this.#db.data = data;
    this.#shared.writing += 1;
    try {
      await this.#db.write();
      this.#remember(data);
    } catch (error) {
      throw StoreWriteError.from(error, this.file);
    } finally {
      this.#shared.writing -= 1;
    }
  }

  /** Writes `initial` unless config.json exists; either way loads what is there. */
  async #create(initial: RosterConfig): Promise<void> {
    await withFileLock(this.#lockFile, async () => {
      const data = await this.#readFile();
      if (data) {
        this.#remember(data);
        return;
      }
      await this.#write(initial);
    });
  }

  /** Reads config.json through lowdb. Null when missing; MalformedRosterError when broken. */
  async #readFile(): Promise<RosterConfig | null> {
    this.#db.data = null;
    try {
      await this.#db.read();
    } catch (error) {
      if (error instanceof SyntaxError) throw new MalformedRosterError(this.file, `not valid JSON: ${error.message}`);
      throw error;
    }
    if (this.#db.data === null) {
      // lowdb reads `null`, `false`, `0` and a missing file alike; only the last is "no roster yet".
      if (existsSync(this.file)) throw new MalformedRosterError(this.file, 'not a JSON object');
      return null;
    }
    return validate(this.file, this.#db.data);
  }

  async #load(): Promise<void> {
    const data = await this.#readFile();
    if (data) {
      this.#remember(data);
      this.#notify({ kind: 'reload' });
    }
  }

  #remember(data: RosterConfig): void {
    this.#shared.data = structuredClone(data);
    this.#shared.stamp = stampOf(this.file);
  }

  /** The in-memory roster, first refreshed from disk when the file changed since we last saw it. */
  #current(): RosterConfig {
    const state = this.#shared;
    if (state.writing > 0) return state.data; // our own write lands; #remember records it
    const stamp = stampOf(this.file);
    if (!stamp || sameStamp(stamp, state.stamp)) return state.data;
    try {
      const data = validate(this.file, readJson<unknown>(this.file));
      state.data = data;
      state.stamp = stamp;
      this.#notify({ kind: 'reload' });
    } catch (error) {
      // Keep serving the last good roster to readers; changes (and open) report the error.
      const key = `${stamp.ino}:${stamp.size}:${stamp.mtimeMs}`;
      if (state.warnedStamp !== key) {
        state.warnedStamp = key;
        this.#events?.emit(LEAD_NAME, 'warning', { message: (error as Error).message, file: this.file });
      }
    }
    return state.data;
  }
}

function validate(file: string, value: unknown): RosterConfig {
  if (value === undefined) throw new RosterError(`${file} is missing`);
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.length ? issue.path.join('.') : 'top level'}: ${issue.message}`)
      .join('; ');
    throw new MalformedRosterError(file, detail);
  }
  return parsed.data as RosterConfig;
}

function stampOf(file: string): FileStamp | undefined {
  try {
    const stats = statSync(file);
    return { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
  } catch {
    return undefined;
  }
}

function sameStamp(a: FileStamp, b: FileStamp | undefined): boolean {
  return !!b && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** lowdb's JSONFile, but written owner-only (0600, whatever the umask) through writeJsonAtomic: the roster is the person's. */
class PrivateJsonFile<T> implements Adapter<T> {
  readonly #reader: JSONFile<T>;
  constructor(readonly file: string) {
    this.#reader = new JSONFile<T>(file);
  }
  read(): Promise<T | null> {
    return this.#reader.read();
  }
  write(data: T): Promise<void> {
    return writeJsonAtomic(this.file, data);
  }
}
