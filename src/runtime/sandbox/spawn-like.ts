// The sandbox as the SpawnLike seam (process/spawn.ts) that hooks, verify commands and stdio MCP
// servers are started through: each runs confined like the agent's bash, writing only the
// workspace it runs in (its cwd) and a private TMPDIR, unable to see huddle's own process.
import type { SpawnOptions } from 'node:child_process';
import { childEnvironment, type SpawnLike } from '../process/spawn.js';
import { sandboxedSpawn } from './spawn.js';

export interface SandboxSpawnOptions {
  /** Where a program started in `cwd` may write, and what stays read-only there (the workspace's sandbox roots). */
  rootsFor(cwd: string): { writable: readonly string[]; readOnly?: readonly string[]; readable?: readonly string[] };
  /** Whose private TMPDIR and caches these programs share. */
  owner?: string;
}

export function sandboxSpawnLike({ rootsFor, owner = 'huddle' }: SandboxSpawnOptions): SpawnLike {
  return async (command: string, args: readonly string[], options: SpawnOptions) => {
    const cwd = String(options.cwd ?? process.cwd());
    const roots = rootsFor(cwd);
    const { child } = await sandboxedSpawn([command, ...args], {
      cwd,
      writable: roots.writable,
      ...(roots.readOnly ? { readOnly: roots.readOnly } : {}),
      ...(roots.readable ? { readable: roots.readable } : {}),
      mode: 'write',
      owner,
      env: options.env ? definedOnly(options.env) : childEnvironment(),
      stdio: stdioOf(options.stdio),
      detached: options.detached ?? false,
    });
    return child;
  };
}

/** spawn()'s env without its undefined values. */
export function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}

type Kind = 'ignore' | 'pipe' | 'inherit';
/** spawn()'s stdio option as the sandbox's three kinds. */
export function stdioOf(stdio: SpawnOptions['stdio']): readonly [Kind, Kind, Kind] {
  if (stdio === 'ignore' || stdio === 'inherit' || stdio === 'pipe') return [stdio, stdio, stdio];
  if (Array.isArray(stdio)) {
    const kind = (value: unknown): Kind => (value === 'ignore' || value === 'inherit' ? value : 'pipe');
    return [kind(stdio[0]), kind(stdio[1]), kind(stdio[2])];
  }
  return ['pipe', 'pipe', 'pipe'];
}
