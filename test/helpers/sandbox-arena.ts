// What every sandbox test stands on: whether there is a sandbox (a test that needs one FAILS under
// CI=true without it, and is skipped locally with what to install), and an arena: a throwaway
// victim directory beside a workspace. The arena lives under node_modules/.cache, not /tmp, so
// that the victim is visible (read-only) inside the sandbox rather than hidden by its private /tmp.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxStatus } from '../../src/runtime/sandbox/index.js';
import { REPO_ROOT } from './run-cli.js';

export const INSTALL_HINT = 'apt-get install bubblewrap';

/** describe() for tests that need the sandbox: fails under CI=true without it, skips locally. */
export function describeSandboxed(name: string, body: () => void): void {
  const status = sandboxStatus();
  // The sandbox gives commands a private /tmp: a checkout under /tmp hides the arena and the
  // repository's own node from them, and every test here would fail for that reason alone.
  if (status.available && underTmp(REPO_ROOT)) {
    describe(name, () => {
      it('needs the checkout outside /tmp', () => {
        throw new Error(
          `the checkout ${REPO_ROOT} is under /tmp, which the sandbox replaces with a private one: clone it elsewhere (under $HOME, say) to run the sandbox tests`,
        );
      });
    });
    return;
  }
  if (status.available) {
    describe(name, body);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it(`needs bubblewrap (${INSTALL_HINT})`, () => {
        throw new Error(`CI=true and there is no sandbox: ${status.reason}; ${INSTALL_HINT} (.ci/run does)`);
      });
    });
    return;
  }
  describe.skip(`${name} [skipped: no sandbox here (${status.reason}); ${INSTALL_HINT}]`, body);
}

function underTmp(dir: string): boolean {
  const real = realpathSync(dir);
  return real === '/tmp' || real.startsWith('/tmp/');
}

export interface Arena {
  base: string;
  victim: string;
  ws: string;
  /** Every file and directory of the victim: path → kind, mode and bytes. */
  snapshot(dir?: string): Map<string, string>;
  cleanup(): void;
}

export function makeArena(prefix = 'arena-'): Arena {
  const parent = path.join(REPO_ROOT, 'node_modules', '.cache', 'huddle-sandbox-tests');
  mkdirSync(parent, { recursive: true });
  const base = realpathSync(mkdtempSync(path.join(parent, prefix)));
  const victim = path.join(base, 'victim');
  const ws = path.join(base, 'ws');
  mkdirSync(path.join(victim, 'nested', 'deeper'), { recursive: true });
  mkdirSync(ws);
  writeFileSync(path.join(victim, 'keep.txt'), 'victim: every byte must stay\n');
  writeFileSync(path.join(victim, 'secret.txt'), 'VICTIM SECRET 42\n');
  writeFileSync(path.join(victim, 'nested', 'deeper', 'data.bin'), Buffer.from([0, 1, 2, 3, 254, 255]));
  writeFileSync(path.join(victim, 'script.sh'), '#!/bin/sh\necho victim\n');
  chmodSync(path.join(victim, 'script.sh'), 0o755);
  return {
    base,
    victim,
    ws,
    snapshot: (dir = victim) => snapshotTree(dir),
    cleanup: () => {
      // A test that chmod'ed things away must not leave them behind.
      try {
        chmodTree(base);
      } catch {
        // nothing to restore
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export function snapshotTree(dir: string, skip: (relative: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = path.join(current, name);
      const relative = path.relative(dir, full);
      if (skip(relative)) continue;
      const info = lstatSync(full);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isDirectory()) {
        out.set(relative, `dir ${mode}`);
        walk(full);
      } else if (info.isSymbolicLink()) out.set(relative, `link ${readlinkSync(full)}`);
      else out.set(relative, `file ${mode} ${info.nlink} ${readFileSync(full).toString('base64')}`);
    }
  };
  walk(dir);
  return out;
}

function chmodTree(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const info = lstatSync(full);
    if (info.isDirectory()) chmodTree(full);
    else if (info.isFile()) chmodSync(full, 0o644);
  }
}

/** Expects two snapshots to be the same, naming what differs. */
export function expectSame(after: Map<string, string>, before: Map<string, string>, what: string): void {
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k));
  expect(changed, `${what} changed: ${changed.join(', ')}`).toEqual([]);
}

/**
 * A node one-liner for the socket tests: connect to the socket `.team/control.json` names (or
 * `socket`), send one request, print ANSWERED and the answer, or REFUSED and why.
 */
export function socketProbe(request: object, socket?: string): string {
  const target = socket ? JSON.stringify(socket) : "JSON.parse(require('fs').readFileSync('.team/control.json','utf8')).socket";
  const script =
    `const net=require('net');let p;try{p=${target}}catch(e){console.log('REFUSED no pointer',e.code);process.exit(0)}` +
    `const c=net.connect(p);c.on('connect',()=>c.write(JSON.stringify(${JSON.stringify(request)})+'\\n'));` +
    `c.on('data',d=>{console.log('ANSWERED',String(d));process.exit(0)});c.on('error',e=>{console.log('REFUSED',e.code);process.exit(0)})`;
  return `${JSON.stringify(process.execPath)} -e ${shellQuote(script)}`;
}

/** `text` as one single-quoted shell word. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
