// scripts/test-postgres.sh, the throwaway server of CI and of these tests, when it cannot start
// one: it says why (initdb's output, or the server's log), exits non-zero, leaves no directory
// behind, and `run` never runs its command without a server. PostgreSQL's own binaries are
// replaced by stubs that fail (first in PATH); no server is needed.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'test-postgres.sh');

describe('scripts/test-postgres.sh when the server cannot be started', () => {
  let root: string;
  let stubs: string;
  let temp: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-script-'));
    // As root the script runs PostgreSQL's binaries as `postgres`: the stubs must be reachable by it.
    chmodSync(root, 0o755);
    stubs = path.join(root, 'bin');
    temp = path.join(root, 'tmp');
    for (const dir of [stubs, temp]) {
      mkdirSync(dir);
      chmodSync(dir, 0o777);
    }
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const stub = (name: string, body: string) => writeFileSync(path.join(stubs, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  const run = (...args: string[]) =>
    spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${stubs}:${process.env.PATH ?? ''}`, TMPDIR: temp } });

  it('initdb fails: its output, exit 1, no directory left; `run` does not run its command', () => {
    stub('initdb', 'echo "initdb: the stub says no" >&2; exit 1');
    stub('pg_ctl', 'exit 1');
    const started = run('start');
    expect(started.status).toBe(1);
    expect(started.stdout).toBe('');
    expect(started.stderr).toMatch(/initdb: the stub says no/);
    expect(readdirSync(temp)).toEqual([]);

    const ran = run('run', 'sh', '-c', 'echo the command ran');
    expect(ran.status).not.toBe(0);
    expect(ran.stdout).not.toMatch(/the command ran/);
    expect(ran.stderr).toMatch(/initdb: the stub says no/);
    expect(ran.stderr).not.toMatch(/unbound variable/);
    expect(readdirSync(temp)).toEqual([]);
  });

  it('the server does not start: its log, exit 1, no directory left; `run` does not run its command', () => {
    stub('initdb', 'while [ $# -gt 0 ]; do if [ "$1" = -D ]; then mkdir -p "$2"; fi; shift; done');
    // pg_ctl start writes its log and fails; stop finds nothing to stop.
    stub(
      'pg_ctl',
      'log=; while [ $# -gt 0 ]; do case "$1" in -l) log=$2 ;; start) [ -n "$log" ] && echo "FATAL: the stub server refuses" >>"$log"; exit 1 ;; esac; shift; done; exit 0',
    );
    for (const args of [['start'], ['run', 'sh', '-c', 'echo the command ran']]) {
      const result = run(...args);
      expect(result.status, args.join(' ')).not.toBe(0);
      expect(result.stdout).not.toMatch(/the command ran|HUDDLE_TEST_PG_URL/);
      expect(result.stderr).toMatch(/the server did not start; its log:\n(FATAL: the stub server refuses\n)+/);
      expect(result.stderr).not.toMatch(/unbound variable/);
      expect(readdirSync(temp)).toEqual([]);
    }
  });
});
