// What of the person's work a run took away (rewind.ts lostSince), read from the run's first and last
// checkpoints: a workspace that began empty had nothing to lose, which is known without asking git
// (the git huddle starts is counted through a wrapper first on PATH); one that began with files still
// has each taken file named.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useGitCountingWorkspace } from '../../helpers/git-counting-workspace.js';
import { Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import { lostSince } from '../../../src/runtime/workspace/rewind.js';

const fixture = useGitCountingWorkspace('huddle-lost-');
let ws: string;
beforeEach(() => {
  ({ ws } = fixture);
});

const gitCalls = () => fixture.gitCalls();
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
