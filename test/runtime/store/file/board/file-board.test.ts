import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundleFixture } from '../fixtures/bundle.js';
import { MalformedFileError } from '../../../../../src/runtime/fs/atomic-file.js';
import { formatIds, FileBoard } from '../../../../../src/runtime/store/file/board/file-board.js';
import { boardCacheFor } from '../../../../../src/runtime/store/file/board/board-cache.js';
import { type BoardChange, type Task, TaskBoardError } from '../../../../../src/runtime/store/board.js';
import { EventHub, type HuddleEvent } from '../../../../../src/runtime/events/events.js';

let dir: string;
let hub: EventHub;
let events: HuddleEvent[];
let board: FileBoard;
const boards: FileBoard[] = [];

function newBoard(agent = 'lead'): FileBoard {
  const b = new FileBoard(dir, { events: hub, agent });
  boards.push(b);
  return b;
}

function onDisk(id: number): Task {
  return JSON.parse(readFileSync(path.join(dir, `task_${id}.json`), 'utf8')) as Task;
}

beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), 'huddle-board-')), '.tasks');
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
  board = newBoard();
});

afterEach(() => {
  for (const b of boards.splice(0)) b.close();
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

describe('create and ids', () => {
  it('numbers tasks from 1 and writes exactly the task file shape (docs/contract.md#tasks)', async () => {
    const first = await board.create({ subject: 'Set up', description: 'the repo' }, 'lead');
    const second = await board.create({ subject: 'Write tests' }, 'lead');
    expect([first.id, second.id]).toEqual([1, 2]);
    const file = onDisk(1);
    expect(Object.keys(file).sort()).toEqual(['blockedBy', 'blocks', 'created_at', 'description', 'id', 'owner', 'status', 'subject', 'updated_at'].sort());
    expect(file).toMatchObject({ id: 1, subject: 'Set up', description: 'the repo', status: 'pending', owner: null, blockedBy: [], blocks: [] });
    expect(Number.isNaN(Date.parse(file.created_at))).toBe(false);
    expect(onDisk(2).description).toBe('');
    expect(
      readdirSync(dir)
        .filter((name) => name.startsWith('task_'))
        .sort(),
    ).toEqual(['task_1.json', 'task_2.json']);
  });

  it('allocates max(existing)+1, also past gaps and unreadable files', async () => {
    await board.create({ subject: 'a' }, 'lead');
    writeFileSync(path.join(dir, 'task_7.json'), '{ half written');
    expect((await board.create({ subject: 'b' }, 'lead')).id).toBe(8);
  });

  it('two boards on one directory never reuse an id', async () => {
    const other = newBoard('alice');
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? board : other).create({ subject: `t${i}` }, i % 2 ? 'lead' : 'alice')));
    expect(made.map((t) => t.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('refuses an empty subject', async () => {
    await expect(board.create({ subject: '  ' }, 'lead')).rejects.toThrow(/needs a subject/);
  });

  it('emits a task event named after the acting agent', async () => {
    await board.create({ subject: 'x' }, 'alice');
    const created = events.filter((e) => e.type === 'task');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ agent: 'alice', action: 'created', task: { id: 1, subject: 'x' } });
  });

  it('list() is sorted by id and get() returns one task', async () => {
    for (let i = 0; i < 12; i++) await board.create({ subject: `t${i + 1}` }, 'lead');
    expect((await board.list()).map((t) => t.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect((await board.get(10)).subject).toBe('t10');
  });
});

describe('dependencies', () => {
  it('blockedBy on create also fills the blocker’s blocks', async () => {
    await board.create({ subject: 'one' }, 'lead');
    await board.create({ subject: 'two' }, 'lead');
    const three = await board.create({ subject: 'three', blockedBy: [1, 2] }, 'lead');
    expect(three.blockedBy).toEqual([1, 2]);
    expect(onDisk(1).blocks).toEqual([3]);
    expect(onDisk(2).blocks).toEqual([3]);
    expect(onDisk(3).blockedBy).toEqual([1, 2]);
  });

  it('addBlockedBy and addBlocks update both sides', async () => {
    for (const s of ['a', 'b', 'c']) await board.create({ subject: s }, 'lead');
    await board.update(2, { addBlockedBy: [1] }, 'lead');
    await board.update(2, { addBlocks: [3] }, 'lead');
    expect(onDisk(1).blocks).toEqual([2]);
    expect(onDisk(2)).toMatchObject({ blockedBy: [1], blocks: [3] });
    expect(onDisk(3).blockedBy).toEqual([2]);
  });

  it('refuses unknown ids, naming the existing ones', async () => {
    for (const s of ['a', 'b', 'c']) await board.create({ subject: s }, 'lead');
    await expect(board.create({ subject: 'x', blockedBy: [9] }, 'lead')).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
    await expect(board.update(1, { addBlocks: [9] }, 'lead')).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
    await expect(board.get(9)).rejects.toThrow('no task #9; existing tasks: 1, 2, 3');
    expect(onDisk(1).blocks).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.startsWith('task_'))).toHaveLength(3);
  });

  it('refuses cycles, naming them, and leaves the files alone', async () => {
    for (const s of ['a', 'b', 'c']) await board.create({ subject: s }, 'lead');
    await board.update(3, { addBlockedBy: [1] }, 'lead');
    const before = [onDisk(1), onDisk(3)];
    await expect(board.update(1, { addBlockedBy: [3] }, 'lead')).rejects.toThrow('would create a cycle: #1 → #3 → #1');
    await expect(board.update(3, { addBlocks: [1] }, 'lead')).rejects.toThrow('would create a cycle: #3 → #1 → #3');
    await board.update(2, { addBlockedBy: [3] }, 'lead');
    await expect(board.update(1, { addBlockedBy: [2] }, 'lead')).rejects.toThrow('would create a cycle: #1 → #3 → #2 → #1');
    await expect(board.update(2, { addBlockedBy: [2] }, 'lead')).rejects.toThrow('would create a cycle: #2 → #2');
    expect([onDisk(1), onDisk(3)].map((t) => [t.blocks, t.blockedBy])).toEqual([
      [before[0]!.blocks, before[0]!.blockedBy],
      [[2], [1]],
    ]);
  });

  it('completing a task unblocks its dependents, which become claimable and fire onChange', async () => {
    await board.create({ subject: 'base' }, 'lead');
    await board.create({ subject: 'left', blockedBy: [1] }, 'lead');
    await board.create({ subject: 'right', blockedBy: [1] }, 'lead');
    expect((await board.claimable()).map((t) => t.id)).toEqual([1]);
    await board.claim(1, 'alice');
    const changes: BoardChange[] = [];
    board.onChange((change) => changes.push(change));
    await board.update(1, { status: 'completed' }, 'alice');
    expect(onDisk(2).blockedBy).toEqual([]);
    expect(onDisk(3).blockedBy).toEqual([]);
    expect(onDisk(1).blocks).toEqual([2, 3]);
    expect((await board.claimable()).map((t) => t.id)).toEqual([2, 3]);
    const local = changes.filter((c) => c.source === 'local');
    expect(local.map((c) => c.source === 'local' && [c.action, c.task.id])).toEqual([
      ['completed', 1],
      ['updated', 2],
      ['updated', 3],
    ]);
    expect(events.filter((e) => e.type === 'task' && e.action === 'completed')).toHaveLength(1);
  });

  it('a dependency on an already completed task is already met', async () => {
    await board.create({ subject: 'done' }, 'lead');
    await board.claim(1, 'alice');
    await board.update(1, { status: 'completed' }, 'alice');
    const task = await board.create({ subject: 'after', blockedBy: [1] }, 'lead');
    expect(task.blockedBy).toEqual([]);
    expect(onDisk(1).blocks).toEqual([]);
  });

  it("knows a task's dependents and the tasks in review from what it read, without looking at every task (another process's rewrite included)", async () => {
    await board.create({ subject: 'base' }, 'lead');
    await board.create({ subject: 'after base', blockedBy: [1] }, 'lead');
    await board.create({ subject: 'also after base', blockedBy: [1] }, 'lead');
    await board.create({ subject: 'reviewed', requires_review: true }, 'lead');
    const cache = boardCacheFor(path.resolve(dir));
    expect(cache.dependentsOf(1).sort()).toEqual([2, 3]);
    // Another process takes task 3 off task 1 and puts it after task 2: read again, the indexes follow.
    writeFileSync(path.join(dir, 'task_3.json'), `${JSON.stringify({ ...onDisk(3), blockedBy: [2] }, null, 2)}\n`);
    cache.load(3, () => undefined, true);
    expect(cache.dependentsOf(1)).toEqual([2]);
    expect(cache.dependentsOf(2)).toEqual([3]);
    await board.claim(4, 'alice');
    await board.update(4, { status: 'review' }, 'alice');
    expect(cache.inReview()).toEqual([4]);
    // Completing task 1 frees task 2 (task 3 no longer waits for it); 2 leaves 1's dependents.
    await board.claim(1, 'bob');
    await board.update(1, { status: 'completed' }, 'bob');
    expect((await board.get(2)).blockedBy).toEqual([]);
    expect((await board.get(3)).blockedBy).toEqual([2]);
    expect(cache.dependentsOf(1)).toEqual([]);
  });

  it('formats long id lists as ranges', () => {
    expect(formatIds([1, 2, 3, 5, 7, 8, 9, 10])).toBe('1, 2, 3, 5, 7-10');
    expect(formatIds(Array.from({ length: 1000 }, (_, i) => i + 1))).toBe('1-1000');
    expect(formatIds([1, 2])).toBe('1, 2');
  });
});

describe('claims and status', () => {
  beforeEach(async () => {
    await board.create({ subject: 'a' }, 'lead');
    await board.create({ subject: 'b', blockedBy: [1] }, 'lead');
  });

  it('claims a claimable task and records the owner', async () => {
    const task = await board.claim(1, 'alice');
    expect(task).toMatchObject({ status: 'in_progress', owner: 'alice' });
    expect(onDisk(1)).toMatchObject({ status: 'in_progress', owner: 'alice' });
    expect(events.find((e) => e.type === 'task' && e.action === 'claimed')).toMatchObject({ agent: 'alice' });
  });

  it('refuses a second claimer by name, and a blocked task by what blocks it', async () => {
    await board.claim(1, 'bob');
    await expect(board.claim(1, 'alice')).rejects.toThrow('task #1 is already claimed by bob');
    await expect(board.claim(2, 'alice')).rejects.toThrow('task #2 is blocked by #1 (in_progress, bob)');
    expect(onDisk(1).owner).toBe('bob');
    expect(onDisk(2)).toMatchObject({ status: 'pending', owner: null });
  });

  it('8 concurrent claimers on one task: exactly one winner', async () => {
    const claimers = Array.from({ length: 8 }, (_, i) => `agent${i}`);
    const results = await Promise.allSettled(claimers.map((name, i) => newBoard(name).claim(1, claimers[i]!)));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [claimers[i]] : []));
    expect(winners).toHaveLength(1);
    expect(onDisk(1).owner).toBe(winners[0]);
    for (const r of results) {
      if (r.status === 'rejected') expect(String(r.reason)).toContain(`task #1 is already claimed by ${winners[0]}`);
    }
    expect(events.filter((e) => e.type === 'task' && e.action === 'claimed')).toHaveLength(1);
  });

  it('claimNext takes the first claimable by id, skips blocked ones, and returns undefined when none', async () => {
    await board.create({ subject: 'c' }, 'lead');
    expect((await board.claimNext('alice'))?.id).toBe(1);
    expect((await board.claimNext('bob'))?.id).toBe(3);
    expect(await board.claimNext('carol')).toBeUndefined();
  });

  it('claimNext also picks up a pending task assigned to the claimer, but not one assigned to others', async () => {
    await board.create({ subject: 'c' }, 'lead');
    await board.update(1, { owner: 'bob' }, 'lead');
    expect((await board.claimNext('alice'))?.id).toBe(3);
    expect(await board.claimNext('alice')).toBeUndefined();
    expect(await board.claimNext('bob')).toMatchObject({ id: 1, owner: 'bob', status: 'in_progress' });
  });

  it('follows the status transitions and keeps completed final', async () => {
    await expect(board.update(1, { status: 'completed' }, 'alice')).rejects.toThrow(/cannot go from pending to completed/);
    await board.update(1, { status: 'in_progress' }, 'alice');
    expect(onDisk(1).owner).toBe('alice');
    await board.update(1, { status: 'pending' }, 'alice');
    expect(onDisk(1)).toMatchObject({ status: 'pending', owner: null });
    await board.claim(1, 'alice');
    await expect(board.update(1, { status: 'review' }, 'alice')).rejects.toThrow(/does not require review/);
    await board.update(1, { status: 'completed' }, 'alice');
    await expect(board.update(1, { status: 'in_progress' }, 'alice')).rejects.toThrow('task #1 is completed; completed tasks are final');
    await expect(board.update(1, { addBlocks: [2] }, 'alice')).rejects.toThrow(/final/);
    expect(onDisk(1).status).toBe('completed');
  });

  it('takes review-required tasks through review', async () => {
    const t = await board.create({ subject: 'reviewed', requires_review: true }, 'lead');
    await board.claim(t.id, 'alice');
    await expect(board.update(t.id, { status: 'completed' }, 'alice')).rejects.toThrow(/requires review/);
    await board.update(t.id, { status: 'review' }, 'alice');
    // A reviewer decides through decideReview; moving a task out of review by update is the lead's.
    await expect(board.update(t.id, { status: 'in_progress' }, 'rita')).rejects.toThrow(/is in review; a reviewer decides it/);
    await board.update(t.id, { status: 'in_progress' }, 'lead');
    expect(onDisk(t.id)).toMatchObject({ status: 'in_progress', owner: 'alice', requires_review: true });
    await board.update(t.id, { status: 'review' }, 'alice');
    await board.update(t.id, { status: 'completed' }, 'lead');
    expect(onDisk(t.id).status).toBe('completed');
  });

  it('assignment through update follows the race rule', async () => {
    await board.update(1, { owner: 'alice' }, 'lead');
    expect(onDisk(1)).toMatchObject({ status: 'pending', owner: 'alice' });
    await expect(board.update(1, { owner: 'bob' }, 'lead')).rejects.toThrow('task #1 is already claimed by alice');
    await expect(board.claim(1, 'bob')).rejects.toThrow('task #1 is already claimed by alice');
    await board.claim(1, 'alice');
    await expect(board.update(1, { owner: 'bob' }, 'lead')).rejects.toThrow(/only a pending task can be \(re\)assigned/);
    await expect(board.update(1, { status: 'in_progress', owner: 'bob' }, 'lead')).rejects.toThrow(/only a pending task/);
    expect(onDisk(1).owner).toBe('alice');
  });

  it('starting a blocked task through update is refused', async () => {
    await expect(board.update(2, { status: 'in_progress' }, 'alice')).rejects.toThrow('task #2 is blocked by #1 (pending)');
  });

  it('release puts a gone agent’s unfinished tasks back to pending', async () => {
    await board.create({ subject: 'c' }, 'lead');
    await board.create({ subject: 'd' }, 'lead');
    await board.claim(1, 'alice');
    await board.update(1, { status: 'completed' }, 'alice');
    await board.claim(3, 'alice');
    await board.update(4, { owner: 'alice' }, 'lead');
    await board.claim(2, 'bob');
    const released = await board.release('alice', 'lead');
    expect(released.map((t) => t.id)).toEqual([3, 4]);
    expect(onDisk(1)).toMatchObject({ status: 'completed', owner: 'alice' });
    expect(onDisk(3)).toMatchObject({ status: 'pending', owner: null });
    expect(onDisk(4)).toMatchObject({ status: 'pending', owner: null });
    expect(onDisk(2)).toMatchObject({ status: 'in_progress', owner: 'bob' });
    expect(events.filter((e) => e.type === 'task' && e.action === 'released').map((e) => e.agent)).toEqual(['lead', 'lead']);
  });
});

describe('malformed files', () => {
  it('skips a broken task file with one warning per content, and the board keeps working', async () => {
    for (const s of ['a', 'b', 'c']) await board.create({ subject: s }, 'lead');
    const broken = path.join(dir, 'task_2.json');
    writeFileSync(broken, '{"id": 2, "subject": "b", "sta');
    writeFileSync(path.join(dir, 'task_2.json.1234abcd'), 'a temp file from some writer');
    writeFileSync(path.join(dir, 'notes.txt'), 'not a task');
    writeFileSync(path.join(dir, 'task_02.json'), '{}');

    expect((await board.list()).map((t) => t.id)).toEqual([1, 3]);
    await board.list();
    const warnings = events.filter((e) => e.type === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ file: broken });
    expect(String(warnings[0]!.error)).toMatch(/not valid JSON/);
    // A person reads the warning (headless: `huddle: warning: <message>`): it says what and where.
    expect(warnings[0]!.message).toBe(`skipped ${broken}: ${String(warnings[0]!.error)}; fix or remove the file`);

    await expect(board.get(2)).rejects.toThrow(MalformedFileError);
    await expect(board.get(2)).rejects.toThrow(broken);
    expect((await board.scan()).problems).toEqual([{ file: broken, error: expect.stringMatching(/not valid JSON/), message: expect.stringContaining(broken) }]);

    // The rest of the board keeps working.
    expect((await board.claimNext('alice'))?.id).toBe(1);
    expect((await board.claimNext('bob'))?.id).toBe(3);
    expect((await board.create({ subject: 'd' }, 'lead')).id).toBe(4);
    expect(readFileSync(broken, 'utf8')).toBe('{"id": 2, "subject": "b", "sta');

    // Valid JSON in the wrong shape is malformed too, and a new content warns again.
    writeFileSync(broken, '{"id": 2, "subject": 5}');
    expect((await board.list()).map((t) => t.id)).toEqual([1, 3, 4]);
    expect(events.filter((e) => e.type === 'warning')).toHaveLength(2);
    await expect(board.get(2)).rejects.toThrow(/not a task/);

    // Fixing the file brings the task back.
    writeFileSync(broken, JSON.stringify({ ...onDisk(1), id: 2, status: 'pending', owner: null, subject: 'b fixed' }));
    expect((await board.get(2)).subject).toBe('b fixed');
  });

  it('a task file whose id disagrees with its name is malformed', async () => {
    await board.create({ subject: 'a' }, 'lead');
    writeFileSync(path.join(dir, 'task_5.json'), JSON.stringify({ ...onDisk(1), id: 6 }));
    expect((await board.list()).map((t) => t.id)).toEqual([1]);
    await expect(board.get(5)).rejects.toThrow(/its id is 6 but its file name says 5/);
  });

  it('never leaves temp files that list() could mistake for tasks', async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => board.create({ subject: `t${i}` }, 'lead')));
    // Besides the tasks: the lock and the record of the highest id given out, nothing.
    expect(readdirSync(dir).filter((n) => !/^task_\d+\.json$/.test(n) && !n.startsWith('.board.lock') && n !== '.ids.json')).toEqual([]);
  });
});

describe('onChange', () => {
  it('fires for writes through any board of this process, and stops after unsubscribe', async () => {
    const other = newBoard('alice');
    const seen: string[] = [];
    const off = board.onChange((change) => {
      if (change.source === 'local') seen.push(`${change.action} #${change.task.id} by ${change.agent}`);
    });
    await other.create({ subject: 'a' }, 'alice');
    await other.claim(1, 'alice');
    off();
    await other.update(1, { status: 'completed' }, 'alice');
    expect(seen).toEqual(['created #1 by alice', 'claimed #1 by alice']);
  });

  it('fires when a task file is changed outside the board (a person editing it)', async () => {
    await board.create({ subject: 'a' }, 'lead');
    const external = new Promise<BoardChange>((resolve) => {
      board.onChange((change) => {
        if (change.source === 'external') resolve(change);
      });
    });
    writeFileSync(path.join(dir, 'task_1.json'), JSON.stringify({ ...onDisk(1), subject: 'edited' }));
    expect(await external).toEqual({ source: 'external', ids: [1] });
    expect((await board.get(1)).subject).toBe('edited');
  });

  it('does not report the board’s own writes as external', async () => {
    const seen: BoardChange[] = [];
    board.onChange((change) => seen.push(change));
    await board.create({ subject: 'a' }, 'lead');
    await board.create({ subject: 'b' }, 'lead');
    // A marker written by hand afterwards: once its change arrives, every earlier fs event has too.
    const marker = new Promise<void>((resolve) => {
      board.onChange((change) => {
        if (change.source === 'external' && change.ids.includes(9)) resolve();
      });
    });
    writeFileSync(path.join(dir, 'task_9.json'), JSON.stringify({ ...onDisk(1), id: 9 }));
    await marker;
    expect(seen.filter((c) => c.source === 'external')).toEqual([{ source: 'external', ids: [9] }]);
    expect(seen.filter((c) => c.source === 'local')).toHaveLength(2);
  });

  describe('across processes', () => {
    let workerDir: string;
    let worker: string;

    beforeAll(async () => {
      workerDir = mkdtempSync(path.join(tmpdir(), 'huddle-worker-'));
      worker = await bundleFixture('claim-worker');
    });

    afterAll(() => rmSync(workerDir, { recursive: true, force: true }));

    it('fires when another process creates a task', async () => {
      await board.create({ subject: 'mine' }, 'lead');
      const external = new Promise<BoardChange>((resolve) => {
        board.onChange((change) => {
          if (change.source === 'external') resolve(change);
        });
      });
      const child = spawn(process.execPath, [worker, JSON.stringify({ mode: 'create', dir, subject: 'theirs', by: 'bob' })], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(await external).toEqual({ source: 'external', ids: [2] });
      expect(await exit).toBe(0);
      expect(out.trim()).toBe('2');
      expect(await board.get(2)).toMatchObject({ subject: 'theirs', status: 'pending' });
      expect(existsSync(path.join(dir, 'task_2.json'))).toBe(true);
    });

    it('keeps watching after the last listener left, until the board closes: hasClaimable sees another process’s task without reading the board', async () => {
      await board.create({ subject: 'mine' }, 'lead');
      await board.claim(1, 'lead');
      // A teammate waits, then takes work: it stops listening (the teammates of a busy team come and go).
      board.onChange(() => undefined)();
      const cache = boardCacheFor(path.resolve(dir));
      expect(cache.watching).toBe(true);
      await expectWatcherReports(cache, 2);
      board.close();
      expect(cache.watching).toBe(false);
    });

    it('hasClaimable starts the watcher when nobody listens (a busy team), so later looks read no other task file', async () => {
      await board.create({ subject: 'mine' }, 'lead');
      await board.claim(1, 'lead');
      const cache = boardCacheFor(path.resolve(dir));
      expect(cache.watching).toBe(false);
      expect(await board.hasClaimable()).toBe(false);
      expect(cache.watching).toBe(true);
      await expectWatcherReports(cache, 2);
    });

    /** Another process creates task `id`: the watcher, not a scan, brings it into the cache, and hasClaimable sees it. */
    async function expectWatcherReports(cache: ReturnType<typeof boardCacheFor>, id: number): Promise<void> {
      expect(cache.candidates()).toEqual([]); // the directory as listed now
      const child = spawn(process.execPath, [worker, JSON.stringify({ mode: 'create', dir, subject: 'theirs', by: 'bob' })], { stdio: 'ignore' });
      expect(await new Promise<number | null>((resolve) => child.on('exit', resolve))).toBe(0);
      await until(() => cache.candidates().includes(id));
      expect(await board.hasClaimable()).toBe(true);
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('errors', () => {
  it('refusals are TaskBoardErrors', async () => {
    await expect(board.claim(1, 'alice')).rejects.toThrow(TaskBoardError);
    await expect(board.claim(1, 'alice')).rejects.toThrow('no task #1; the board is empty');
  });
});

describe('after a crash between the writes of a completion', () => {
  it('a blocker that is completed (or gone) no longer blocks, and the claim cleans the stale entry', async () => {
    await board.create({ subject: 'a' }, 'lead');
    await board.create({ subject: 'b', blockedBy: [1] }, 'lead');
    await board.claim(1, 'alice');
    // Task 1 completed on disk, but the process died before removing 1 from task 2's blockedBy.
    writeFileSync(path.join(dir, 'task_1.json'), JSON.stringify({ ...onDisk(1), status: 'completed' }));
    expect(onDisk(2).blockedBy).toEqual([1]);
    expect((await board.claimable()).map((t) => t.id)).toEqual([2]);
    expect(await board.claimNext('bob')).toMatchObject({ id: 2, owner: 'bob', blockedBy: [] });
    expect(onDisk(2).blockedBy).toEqual([]);
  });
});
