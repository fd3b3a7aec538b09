// What of the person's work a run took away (rewind.ts lostSince), read from the run's first and last
// checkpoints: a workspace that began empty had nothing to lose, which is known without asking git
// (the git huddle starts is counted through a wrapper first on PATH); one that began with files still
// has each taken file named.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import { lostSince } from '../../../src/runtime/workspace/rewind.js';

let base: string;
let ws: string;
let gitLog: string;
const saved = { state: process.env.XDG_STATE_HOME, path: process.env.PATH };
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-lost-')));
  process.env.XDG_STATE_HOME = path.join(base, 'state');
  const bin = path.join(base, 'bin');
  mkdirSync(bin);
  gitLog = path.join(base, 'git.log');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
  process.env.PATH = `${bin}:${saved.path}`;
  ws = path.join(base, 'ws');
  mkdirSync(ws);
});
afterEach(() => {
  if (saved.state === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = saved.state;
  process.env.PATH = saved.path;
  rmSync(base, { recursive: true, force: true });
});

const gitCalls = (): string[] => {
  try {
    return readFileSync(gitLog, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const take = (store: Checkpoints) => store.take({ agent: 'lead', tool: 'bash', summary: 'x' });

describe('lostSince', () => {
  it('a workspace that began empty lost nothing, and no git lists a tree to say so', async () => {
    const store = new Checkpoints(ws);
    const start = await take(store);
    mkdirSync(path.join(ws, 'out'));
    writeFileSync(path.join(ws, 'out', 'a.txt'), 'a\n');
    const end = await take(store);
    expect(end.filesTree).not.toBe(start.filesTree);
    const before = gitCalls().length;
    expect(await lostSince(store, start, end)).toEqual({ files: [], stash: 0, refs: [] });
    expect(gitCalls().slice(before)).toEqual([]);
    await store.endHelpers();
  });

  it('a file there at the start and gone at the end is named', async () => {
    writeFileSync(path.join(ws, 'notes.txt'), 'mine\n');
    const store = new Checkpoints(ws);
    const start = await take(store);
    rmSync(path.join(ws, 'notes.txt'));
    writeFileSync(path.join(ws, 'other.txt'), 'x\n');
    const end = await take(store);
    expect((await lostSince(store, start, end)).files).toEqual(['notes.txt']);
    await store.endHelpers();
  });
});
