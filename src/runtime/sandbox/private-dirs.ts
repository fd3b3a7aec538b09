// Each owner's (agent's) private TMPDIR, and the tool caches sandboxed commands use instead of the
// person's own (~/.npm and the like stay read-only). TMPDIRs live under one directory per huddle
// process, removed when it exits; caches persist across runs under ~/.cache/huddle/sandbox so that
// `npm install` need not download everything again, shared by the agents of that person.
// External agents' CLIs keep their own config and sessions (what ~/.claude, ~/.gemini, ~/.codex
// hold for the person) in a directory per workspace and teammate under ~/.cache/huddle/agents,
// kept across runs so that a resume continues the CLI's session; every sandbox hides them but
// the agent's own.
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { atExit } from '../process/at-exit.js';

let processDir: string | undefined;

/** Where every huddle process of this user keeps its agents' private dirs (hidden from every sandbox). */
export function privateDirsRoot(): string {
  return path.join(os.tmpdir(), `huddle-sandbox-${process.getuid?.() ?? 'user'}`);
}

function ownDir(): string {
  if (processDir) return processDir;
  const parent = privateDirsRoot();
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  processDir = mkdtempSync(path.join(parent, `${process.pid}-`));
  atExit(() => {
    try {
      if (processDir) rmSync(processDir, { recursive: true, force: true });
    } catch {
      // best effort: a file a command made read-only stays behind in the temp dir
    }
  });
  return processDir;
}

/** The host directory that is /tmp (and TMPDIR) inside `owner`'s sandboxed commands. */
export function privateTmp(owner: string): string {
  const dir = path.join(ownDir(), safeName(owner), 'tmp');
  if (!made.has(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    made.add(dir);
  }
  // A command may have removed it (rm -rf /tmp/* leaves it; rm -rf /tmp cannot remove a mount point).
  return dir;
}

const made = new Set<string>();
let argsCount = 0;

/** A private file (0600) holding `content`, for a command that reads and removes it (bubblewrap's options). */
export function argsFile(content: Buffer): string {
  const file = path.join(ownDir(), `args-${++argsCount}`);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}
let empty: string | undefined;
let unreadable: string | undefined;

/**
 * A copy of `program` that may be run but not read (mode 0111). A process started from a file it
 * cannot read is not dumpable: others of the same user cannot read its memory, trace it or open
 * its descriptors (proc(5), PR_SET_DUMPABLE). The sandbox shell's server runs from it.
 */
export function unreadableCopy(program: string): string {
  const file = path.join(ownDir(), 'shell');
  // Checked at each use: where TMPDIR lies inside a directory commands may write, one could have changed it.
  if (unreadable !== file || !isIntactCopy(file, program)) {
    rmSync(file, { force: true });
    copyFileSync(program, file);
    chmodSync(file, 0o111);
    unreadable = file;
  }
  return file;
}

function isIntactCopy(file: string, program: string): boolean {
  try {
    const copy = lstatSync(file);
    return copy.isFile() && (copy.mode & 0o7777) === 0o111 && copy.uid === process.getuid?.() && copy.size === statSync(program).size;
  } catch {
    return false;
  }
}

/** An empty directory nothing can write (mode 0555), to show in place of a hidden one. */
export function emptyDir(): string {
  if (!empty || !existsSync(empty)) {
    empty = path.join(ownDir(), 'empty');
    mkdirSync(empty, { recursive: true, mode: 0o555 });
  }
  return empty;
}
let cacheDir: string | undefined;

/** Where sandboxed commands keep npm, pip, cargo, go and yarn caches. */
export function sandboxCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (cacheDir && existsSync(cacheDir)) return cacheDir;
  cacheDir = findCacheDir(env);
  return cacheDir;
}

function findCacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'huddle', 'sandbox');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    const fallback = path.join(ownDir(), 'cache');
    mkdirSync(fallback, { recursive: true, mode: 0o700 });
    return fallback;
  }
}

/** Where every external agent's private config directory lives (hidden from every sandbox). */
export function agentStateRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'huddle', 'agents');
}

/**
 * The private, writable config directory of teammate `owner` of the workspace at `workspaceRoot`
 * for its CLI `kind` (made owner-only). Kept across runs; a fallback under the process's own
 * directory (gone when it exits) where the cache directory cannot be written.
 */
export function agentStateDir(workspaceRoot: string, owner: string, kind: string, env: NodeJS.ProcessEnv = process.env): string {
  const relative = path.join(workspaceKey(workspaceRoot), safeName(owner), safeName(kind));
  const root = agentStateRoot(env);
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const dir = path.join(root, relative);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    const dir = path.join(ownDir(), 'agents', relative);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
}

/** Every external agent's config directory for the workspace at `workspaceRoot` (to remove them with it). */
export function agentStateDirsOf(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(agentStateRoot(env), workspaceKey(workspaceRoot));
}

function workspaceKey(workspaceRoot: string): string {
  return createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16);
}

/** Cache variables pointing the usual tools at `cacheDir`. */
export function cacheEnv(cacheDir: string): Record<string, string> {
  return {
    npm_config_cache: path.join(cacheDir, 'npm'),
    YARN_CACHE_FOLDER: path.join(cacheDir, 'yarn'),
    npm_config_store_dir: path.join(cacheDir, 'pnpm-store'),
    PIP_CACHE_DIR: path.join(cacheDir, 'pip'),
    CARGO_HOME: path.join(cacheDir, 'cargo'),
    GOCACHE: path.join(cacheDir, 'go-build'),
    GOMODCACHE: path.join(cacheDir, 'go-mod'),
    XDG_CACHE_HOME: path.join(cacheDir, 'xdg'),
  };
}

/** The caches of the person's own tools, made writable when settings ask for them (hostCaches). */
export function hostCacheDirs(home = os.homedir()): string[] {
  return ['.npm', '.cache', '.cargo', 'go', '.yarn', '.local/share/pnpm'].map((p) => path.join(home, p));
}

function safeName(owner: string): string {
  return owner.replace(/[^A-Za-z0-9_-]/g, '_') || 'agent';
}
