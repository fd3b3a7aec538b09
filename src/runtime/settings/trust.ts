// Settings that widen what runs unasked are the person's, not the repository's (docs/trust.md).
// A workspace file (.team/settings.json, .team/settings.local.json, .mcp.json, .team/allow.json)
// that turns the sandbox off, adds hooks or MCP servers, opens the network, allow-lists commands…
// has those entries applied only once the person has trusted that file's exact content: a record
// outside the workspace (beside the user's settings, mode 0600) keyed by the workspace's real path,
// the file, and the sha256 of its content. A changed file asks again. Narrowing entries (deny
// lists, budgets, lower limits) apply at once; the user's own file and flags are trusted as they are.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { huddleConfigDir } from '../fs/huddle-dirs.js';
import { formatPath } from './errors.js';
import { isPlainObject } from './layers.js';

/** Key paths that widen trust, as `formatPath` writes them (`sandbox.enabled`, `mcpServers.evil`). */
export function wideningKeys(values: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  const object = (value: unknown) => (isPlainObject(value) ? value : {});
  const nonEmpty = (value: unknown) => (Array.isArray(value) ? value.length > 0 : isPlainObject(value) ? Object.keys(value).length > 0 : value !== undefined);
  const sandbox = object(values.sandbox);
  if (sandbox.enabled === false) out.push(['sandbox', 'enabled']);
  if (nonEmpty(object(sandbox.network).allow)) out.push(['sandbox', 'network', 'allow']);
  if (nonEmpty(sandbox.writablePaths)) out.push(['sandbox', 'writablePaths']);
  if (nonEmpty(sandbox.caches)) out.push(['sandbox', 'caches']);
  if (nonEmpty(object(values.permissions).allow)) out.push(['permissions', 'allow']);
  if (values.permissionMode === 'auto') out.push(['permissionMode']);
  // Variables set for every command (PATH, LD_PRELOAD, a model endpoint) change what runs.
  if (nonEmpty(values.env)) out.push(['env']);
  for (const [event, matchers] of Object.entries(object(values.hooks))) if (nonEmpty(matchers)) out.push(['hooks', event]);
  for (const name of Object.keys(object(values.mcpServers))) out.push(['mcpServers', name]);
  for (const kind of Object.keys(object(values.agents))) out.push(['agents', kind]);
  for (const [role, override] of Object.entries(object(values.roles))) {
    const o = object(override);
    if (o.permissionMode === 'auto') out.push(['roles', role, 'permissionMode']);
    if (o.agent !== undefined && o.agent !== 'huddle') out.push(['roles', role, 'agent']);
  }
  // The team's state (messages, transcripts' work) sent to a database the file names.
  if (values.team !== undefined) out.push(['team']);
  // Plans approved on huddle's clock, read by nobody: the person's choice, never the repository's.
  if (object(values.plans).approver === 'auto-after') out.push(['plans', 'approver']);
  if (values.planApproval === 'auto-after') out.push(['planApproval']);
  // The team's news (plans, failures) posted to a URL the file names.
  if (object(values.notifications).webhook !== undefined) out.push(['notifications', 'webhook']);
  return out;
}

/** `values` without the entries at `paths` (emptied parents dropped). */
export function withoutKeys(values: Record<string, unknown>, paths: string[][]): Record<string, unknown> {
  const copy = structuredClone(values);
  for (const keyPath of paths) {
    const parents: Record<string, unknown>[] = [copy];
    for (const key of keyPath.slice(0, -1)) {
      const next = parents.at(-1)![key];
      if (!isPlainObject(next)) break;
      parents.push(next);
    }
    if (parents.length !== keyPath.length) continue;
    delete parents.at(-1)![keyPath.at(-1)!];
    for (let i = parents.length - 1; i > 0; i--) if (!Object.keys(parents[i]!).length) delete parents[i - 1]![keyPath[i - 1]!];
  }
  return copy;
}

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface TrustRecord {
  /** The workspace's real path. */
  workspace: string;
  /** The file as settings name it: `.team/settings.json`, `.mcp.json`. */
  file: string;
  sha256: string;
  /** What it widens, for `huddle trust --list`. */
  settings: string[];
  trustedAt: string;
}

/** A workspace file whose widening entries wait for the person (they are left out meanwhile). */
export interface UntrustedFile {
  file: string;
  path: string;
  sha256: string;
  settings: string[];
}

/** Where trust is recorded: beside the user's settings (kept out of agents' reach when a workspace holds it). */
export function trustStorePath(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  return path.join(huddleConfigDir(env, home), 'trusted.json');
}

export class TrustStore {
  constructor(readonly file: string) {}

  static at(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): TrustStore {
    return new TrustStore(trustStorePath(env, home));
  }

  /** Every record; a missing or unreadable store trusts nothing. */
  read(): TrustRecord[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    try {
      const parsed = JSON.parse(text) as { trusted?: unknown };
      return Array.isArray(parsed.trusted) ? (parsed.trusted as TrustRecord[]).filter((r) => r && typeof r.sha256 === 'string') : [];
    } catch {
      return [];
    }
  }

  isTrusted(workspace: string, file: string, sha256: string): boolean {
    return this.read().some((r) => r.workspace === workspace && r.file === file && r.sha256 === sha256);
  }

  /** Trusts these files' current content; an older record of the same file is replaced. */
  record(workspace: string, files: Array<Pick<UntrustedFile, 'file' | 'sha256' | 'settings'>>): void {
    if (!files.length) return;
    const kept = this.read().filter((r) => !(r.workspace === workspace && files.some((f) => f.file === r.file)));
    const now = new Date().toISOString();
    this.#write([...kept, ...files.map((f) => ({ workspace, file: f.file, sha256: f.sha256, settings: f.settings, trustedAt: now }))]);
  }

  /** Forgets this workspace's records (all of them, or one file's); returns how many went. */
  revoke(workspace: string, file?: string): number {
    const all = this.read();
    const kept = all.filter((r) => !(r.workspace === workspace && (file === undefined || r.file === file)));
    if (kept.length !== all.length) this.#write(kept);
    return all.length - kept.length;
  }

  #write(records: TrustRecord[]): void {
    const dir = path.dirname(this.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = path.join(dir, `.trusted.json.${randomBytes(6).toString('hex')}.tmp`);
    writeFileSync(temp, `${JSON.stringify({ trusted: records }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }
}

/** `hooks.PreToolUse, mcpServers.evil` for messages. */
export function describeKeys(paths: string[][]): string[] {
  return paths.map((p) => formatPath(p));
}
