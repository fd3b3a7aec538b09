// The git data a command in a workspace must be able to write (`git commit` writes objects, refs,
// the index, logs): the repository's git dir and common dir, which lie outside the workspace when
// the workspace is a subdirectory of its repository or a linked worktree. Its `config` and `hooks`
// stay read-only: what they hold runs later outside the sandbox (huddle's own git calls, the
// person's), so an agent must not plant commands there.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pinRepository } from '../git/host-git.js';

export interface GitData {
  /** Directories `git commit` writes. */
  writable: string[];
  /** Inside them, what must not change. */
  readOnly: string[];
}

const cache = new Map<string, GitData>();

export function gitDataFor(root: string): GitData {
  let found = cache.get(root);
  if (!found) {
    found = probe(root);
    cache.set(root, found);
  }
  return found;
}

function probe(root: string): GitData {
  // The repository as pinned when the session opened: a `commondir` planted later moves nothing.
  const pin = pinRepository(root);
  if (!pin) return { writable: [], readOnly: [] };
  const dirs = [...new Set([pin.gitDir, pin.commonDir])];
  const readOnly: string[] = [];
  for (const dir of dirs) {
    for (const name of ['config', 'config.worktree', 'hooks']) {
      const p = path.join(dir, name);
      if (existsSync(p)) readOnly.push(p);
    }
  }
  return { writable: dirs, readOnly };
}
