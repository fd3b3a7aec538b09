// The git data a command in a workspace must be able to write (`git commit` writes objects, refs,
// the index, logs): the repository's git dir and common dir, which lie outside the workspace when
// the workspace is a subdirectory of its repository or a linked worktree. Its `config` and `hooks`
// stay read-only: what they hold runs later outside the sandbox (huddle's own git calls, the
// person's), so an agent must not plant commands there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

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
  const result = spawnSync('git', ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 10_000,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  if (result.status !== 0) return { writable: [], readOnly: [] };
  const dirs = [...new Set(result.stdout.split('\n').map((l) => l.trim()).filter(Boolean))];
  const readOnly: string[] = [];
  for (const dir of dirs) {
    for (const name of ['config', 'config.worktree', 'hooks']) {
      const p = path.join(dir, name);
      if (existsSync(p)) readOnly.push(p);
    }
  }
  return { writable: dirs, readOnly };
}
