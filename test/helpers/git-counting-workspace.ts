// A workspace for the checkpoint tests that count git: a throwaway state directory (where the checkpoint
// shadows go), an empty workspace beside it, and every git huddle starts logged through a wrapper first
// on PATH, then run as the real one.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';

export interface GitCountingWorkspace {
  /** The test's own directory: state/, bin/, git.log and ws/ are in it. */
  readonly base: string;
  /** The workspace, empty at the start of each test. */
  readonly ws: string;
  /** The git command lines huddle ran since the test began. */
  gitCalls(): string[];
}

/** For a test file: a fresh workspace per test, its git counted; everything is restored and removed after. */
export function useGitCountingWorkspace(prefix: string): GitCountingWorkspace {
  let base = '';
  const saved = { state: process.env.XDG_STATE_HOME, path: process.env.PATH };
  beforeEach(() => {
    base = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
    process.env.XDG_STATE_HOME = path.join(base, 'state');
    const bin = path.join(base, 'bin');
    mkdirSync(bin);
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${path.join(base, 'git.log')}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
    process.env.PATH = `${bin}:${saved.path}`;
    mkdirSync(path.join(base, 'ws'));
  });
  afterEach(() => {
    if (saved.state === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved.state;
    process.env.PATH = saved.path;
    rmSync(base, { recursive: true, force: true });
  });
  return {
    get base() {
      return base;
    },
    get ws() {
      return path.join(base, 'ws');
    },
    gitCalls() {
      try {
        return readFileSync(path.join(base, 'git.log'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}
