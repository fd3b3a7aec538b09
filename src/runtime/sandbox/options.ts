// What a sandboxed command may do, as options: per call (where it works, what it may write, plan
// mode) and per process (the team's settings: network lists, widened paths). The settings file's
// `sandbox` section maps onto SandboxSettings; until it exists, configureSandbox() takes them.
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '../process/spawn.js';
import type { SandboxStatus } from './status.js';

export interface NetworkSettings {
  /** false: no network at all (a private network namespace). Default true. */
  enabled?: boolean;
  /** Host patterns commands may reach (`example.com`, `*.example.com`); empty or absent: any host not denied. */
  allow?: string[];
  /** Host patterns commands may never reach; they win over `allow`. */
  deny?: string[];
}

export interface SandboxSettings {
  network?: NetworkSettings;
  /** More directories commands may write (absolute or `~/…`), e.g. a shared build cache. */
  writable?: string[];
  /** More paths commands may not read (absolute or `~/…`), beyond the built-in secret locations. */
  hidden?: string[];
  /** Use the person's own tool caches (~/.npm, ~/.cache/pip, ~/.cargo, ~/go) instead of huddle's own. */
  hostCaches?: boolean;
}

export type SandboxMode = 'write' | 'read-only';

/** One command's sandbox. */
export interface SandboxRequest {
  /** The working directory (must be readable inside). */
  cwd: string;
  /** Directories the command may write, besides its private TMPDIR. Ignored in read-only mode. */
  writable: readonly string[];
  /** Paths inside `writable` that stay read-only (huddle's team state, the repository's config and hooks). */
  readOnly?: readonly string[];
  /** Directories the command must be able to read even where the private /tmp covers them (the main repository's objects, for a teammate's clone). */
  readable?: readonly string[];
  /** read-only: plan mode, nothing written anywhere (a throwaway /tmp for the call). */
  mode: SandboxMode;
  /** Whether there is a sandbox, as the caller's session read it (a tool call's context); default: the process's. */
  status?: SandboxStatus;
  /** Whose private TMPDIR and caches these are (an agent name); commands of one owner share them. */
  owner: string;
  /** The environment (already free of huddle's secrets); TMPDIR and cache variables are added. */
  env: Record<string, string>;
  /** Overrides the process-wide network settings for this command. */
  network?: NetworkSettings;
  /**
   * The program's own private directories under agentStateRoot() (an external agent's CLI config),
   * writable even in read-only mode; every other agent's stays hidden.
   */
  state?: readonly string[];
  /** A Unix socket of huddle's to show inside (an external agent's own channel), at `agentSocketPath(host)`. */
  socket?: string;
  /**
   * A port on 127.0.0.1 the program must reach (huddle's model relay), and the Unix socket of
   * huddle's behind it: bridged in when the sandbox has a network of its own (needs socat).
   */
  loopback?: { port: number; socket: string };
  /** The program's stderr into its stdout (one pipe keeps the order of their lines); bubblewrap's own stays on stderr. */
  mergeStderr?: boolean;
  /**
   * The program is the sandbox's PID 1 (bwrap --as-pid-1): no init of bwrap's inside, and signals from
   * inside it cannot end the program (a kept-open sandbox's shell, sandbox-shell.ts).
   */
  asInit?: boolean;
  /** Host files shown read-only at a path inside (under /dev, which the sandbox makes afresh). */
  files?: ReadonlyArray<{ host: string; inside: string }>;
}

let settings: SandboxSettings = {};

/** The team's sandbox settings for every later command of this process. */
export function configureSandbox(next: SandboxSettings): void {
  settings = { ...next };
}

export function sandboxSettings(): SandboxSettings {
  return settings;
}

/** `~/x` and relative paths made absolute. */
export function expandPath(p: string, home = os.homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return path.resolve(p);
}

export { HIDDEN_ENV } from '../process/spawn.js';

/** huddle's own environment without its secrets: the base for every command it starts. */
export function childEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return childEnvironment({}, base);
}
