// bubblewrap's probe is remembered between starts (src/runtime/sandbox/probe-record.ts): a second
// huddle on the same bwrap, boot and user-namespace settings starts no probe; a changed bwrap is
// probed again, and a sandbox that did not work is never remembered. The bwrap on PATH is a
// wrapper that logs each run and then runs the real one (or fails, to play a machine without
// namespaces).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';
import { describeSandboxed } from '../../helpers/sandbox-arena.js';

let dir: string;
let bin: string;
let log: string;
let env: Record<string, string>;

function wrapper(body: string): void {
  writeFileSync(path.join(bin, 'bwrap'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\n${body}\n`);
  chmodSync(path.join(bin, 'bwrap'), 0o755);
}

function runs(): string[] {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hp-'));
  bin = path.join(dir, 'bin');
  log = path.join(dir, 'bwrap.log');
  env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, XDG_RUNTIME_DIR: dir };
  mkdirSync(bin);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describeSandboxed('the sandbox probe, remembered between starts', () => {
  it('a second start on the same bwrap runs no probe and says the same; a changed bwrap is probed again', async () => {
    wrapper('exec /usr/bin/bwrap "$@"');
    const first = await runCli(['--version'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('sandbox: bubblewrap');
    const probes = runs().length;
    expect(probes).toBeGreaterThan(0);

    const second = await runCli(['--version'], { env });
    expect(second.stdout).toBe(first.stdout);
    expect(runs()).toHaveLength(probes);

    // Another bwrap at the same path (an upgrade): its own probe.
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(bin, 'bwrap'), later, later);
    const third = await runCli(['--version'], { env });
    expect(third.stdout).toBe(first.stdout);
    expect(runs().length).toBeGreaterThan(probes);
  });

  it('a sandbox that did not work is not remembered: the next start probes again', async () => {
    wrapper('echo "bwrap: No permissions to create new namespace" >&2; exit 1');
    const first = await runCli(['--version'], { env });
    expect(first.stdout).toContain('sandbox: off');
    const probes = runs().length;
    expect(probes).toBeGreaterThan(0);
    const second = await runCli(['--version'], { env });
    expect(second.stdout).toContain('sandbox: off');
    expect(runs().length).toBeGreaterThan(probes);
  });

  it('a record written for other conditions (another bwrap, another boot) is not believed', async () => {
    wrapper('echo "bwrap: No permissions to create new namespace" >&2; exit 1');
    const record = path.join(dir, 'huddle', 'sandbox-probe.json');
    mkdirSync(path.dirname(record), { recursive: true, mode: 0o700 });
    writeFileSync(record, JSON.stringify({ conditions: '["/usr/bin/bwrap"]', version: '0.9.0', userns: true }), { mode: 0o600 });
    const run = await runCli(['--version'], { env });
    expect(run.stdout).toContain('sandbox: off');
    expect(runs().length).toBeGreaterThan(0);
  });
});
