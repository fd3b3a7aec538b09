// The person's keys live in a directory of their own under huddle's runtime directory, so that the
// runtime directory every start lists holds sockets only; keys an older huddle left in it move there
// once and stay valid.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

let base: string;
let runtime: string;
let team: string;
const saved = process.env.XDG_RUNTIME_DIR;
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-runtime-dir-')));
  process.env.XDG_RUNTIME_DIR = path.join(base, 'run');
  mkdirSync(process.env.XDG_RUNTIME_DIR, { mode: 0o700 });
  runtime = path.join(process.env.XDG_RUNTIME_DIR, 'huddle');
  team = path.join(base, 'ws', '.team');
  mkdirSync(team, { recursive: true });
  // runtime-dir.ts remembers the directory it made: each test starts as a fresh process would.
  vi.resetModules();
});
afterEach(() => {
  if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = saved;
  rmSync(base, { recursive: true, force: true });
});

const keyNameOf = (teamDir: string) => `person-${createHash('sha256').update(teamDir).digest('hex').slice(0, 16)}.key`;
const personFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('person-'));

describe("the person's keys", () => {
  it('are kept in keys/, not in the runtime directory itself', async () => {
    const keyName = keyNameOf(team);
    const { mintPersonKey, whyNotPerson } = await import('../../../src/session/person-key.js');
    mintPersonKey(team);
    expect(whyNotPerson(team)).toBeUndefined();
    expect(personFiles(runtime)).toEqual([]);
    expect(readdirSync(path.join(runtime, 'keys'))).toEqual([keyName]);
  });

  it("an older huddle's key in the runtime directory moves to keys/ at start and still proves the person", async () => {
    const keyName = keyNameOf(team);
    mkdirSync(runtime, { mode: 0o700 });
    const key = 'a'.repeat(64);
    writeFileSync(path.join(runtime, keyName), `${key}\n`, { mode: 0o600 });
    writeFileSync(path.join(runtime, 'person-0123456789abcdef.key'), 'other\n', { mode: 0o600 });
    writeFileSync(path.join(team, 'person-key.sha256'), `${createHash('sha256').update(key).digest('hex')}\n`);
    const { huddleRuntimeDir } = await import('../../../src/runtime/sandbox/runtime-dir.js');
    expect(huddleRuntimeDir()).toBe(runtime);
    expect(personFiles(runtime)).toEqual([]);
    expect(readdirSync(path.join(runtime, 'keys')).sort()).toEqual(['person-0123456789abcdef.key', keyName].sort());
    const { mintPersonKey, whyNotPerson } = await import('../../../src/session/person-key.js');
    expect(whyNotPerson(team)).toBeUndefined();
    mintPersonKey(team);
    expect(readFileSync(path.join(runtime, 'keys', keyName), 'utf8')).toBe(`${key}\n`);
    expect(existsSync(path.join(runtime, keyName))).toBe(false);
  });

  it('where both places hold a key, the newer stays: an older huddle run since minted the one its team holds', async () => {
    const keyName = keyNameOf(team);
    mkdirSync(path.join(runtime, 'keys'), { recursive: true, mode: 0o700 });
    const stale = path.join(runtime, 'keys', keyName);
    writeFileSync(stale, 'stale\n', { mode: 0o600 });
    utimesSync(stale, new Date(1_000_000), new Date(1_000_000));
    const key = 'b'.repeat(64);
    writeFileSync(path.join(runtime, keyName), `${key}\n`, { mode: 0o600 });
    writeFileSync(path.join(team, 'person-key.sha256'), `${createHash('sha256').update(key).digest('hex')}\n`);
    const older = path.join(runtime, 'person-0123456789abcdef.key');
    writeFileSync(older, 'older\n', { mode: 0o600 });
    utimesSync(older, new Date(1_000_000), new Date(1_000_000));
    writeFileSync(path.join(runtime, 'keys', 'person-0123456789abcdef.key'), 'newer\n', { mode: 0o600 });
    const { huddleRuntimeDir } = await import('../../../src/runtime/sandbox/runtime-dir.js');
    huddleRuntimeDir();
    expect(personFiles(runtime)).toEqual([]);
    expect(readFileSync(stale, 'utf8')).toBe(`${key}\n`);
    expect(readFileSync(path.join(runtime, 'keys', 'person-0123456789abcdef.key'), 'utf8')).toBe('newer\n');
    const { whyNotPerson } = await import('../../../src/session/person-key.js');
    expect(whyNotPerson(team)).toBeUndefined();
  });

  it('a file where keys/ belongs leaves the old keys in place and the start goes on', async () => {
    mkdirSync(runtime, { mode: 0o700 });
    writeFileSync(path.join(runtime, 'keys'), 'not a directory\n');
    writeFileSync(path.join(runtime, 'person-0123456789abcdef.key'), 'old\n', { mode: 0o600 });
    const { huddleRuntimeDir } = await import('../../../src/runtime/sandbox/runtime-dir.js');
    expect(huddleRuntimeDir()).toBe(runtime);
    expect(personFiles(runtime)).toEqual(['person-0123456789abcdef.key']);
  });
});
