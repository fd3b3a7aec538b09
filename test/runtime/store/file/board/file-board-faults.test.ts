// What people and crashes leave on a file board (docs/contract.md#task-files): ids that are not safe integers,
// vanished files, names taken behind the board's back, dependency loops made by hand. Each is
// skipped or reported with a line a person can act on, and the board keeps working.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventHub, type HuddleEvent } from '../../../../../src/runtime/events/events.js';
import type { Task } from '../../../../../src/runtime/store/board.js';
import { FileBoard } from '../../../../../src/runtime/store/file/board/file-board.js';
import { createTaskFile } from '../../../../../src/runtime/store/file/board/task-files.js';
import { taskTools } from '../../../../../src/runtime/tools/task-tools.js';
import type { ToolContext } from '../../../../../src/runtime/tools/types.js';

let dir: string;
let hub: EventHub;
let events: HuddleEvent[];
let board: FileBoard;

beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), 'huddle-board-faults-')), '.tasks');
  mkdirSync(dir);
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
  board = new FileBoard(dir, { events: hub });
});
afterEach(() => {
  board.close();
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

const onDisk = (id: number) => JSON.parse(readFileSync(path.join(dir, `task_${id}.json`), 'utf8')) as Task;
const warnings = () => events.filter((e) => e.type === 'warning');
const taskFiles = () =>
  readdirSync(dir)
    .filter((n) => n.startsWith('task_'))
    .sort();

function writeTask(id: number, fields: Partial<Task> & Record<string, unknown> = {}, name = `task_${id}.json`): string {
  const now = new Date().toISOString();
  const file = path.join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      id,
      subject: `task ${id}`,
      description: '',
      status: 'pending',
      owner: null,
      blockedBy: [],
      blocks: [],
      created_at: now,
      updated_at: now,
      ...fields,
    }),
  );
  return file;
}

describe('ids', () => {
  it('skips a task whose id is not a safe integer, with a warning, and new ids go on from the valid ones', async () => {
    await board.create({ subject: 'a' }, 'lead');
    const huge = path.join(dir, 'task_100000000000000000000.json');
    writeFileSync(huge, '{"id": 1e20, "subject": "hand-made", "status": "pending", "created_at": "x", "updated_at": "x"}');
    const unsafeInside = writeTask(3, { id: 1e20 });
    const hugeBefore = readFileSync(huge, 'utf8');

    const made = [await board.create({ subject: 'b' }, 'lead'), await board.create({ subject: 'c' }, 'lead'), await board.create({ subject: 'd' }, 'lead')];
    expect(made.map((t) => t.id)).toEqual([4, 5, 6]); // above task_3.json (unreadable, but its name is taken)
    expect(readFileSync(huge, 'utf8')).toBe(hugeBefore); // never overwritten
    expect(taskFiles()).toEqual(['task_1.json', 'task_100000000000000000000.json', 'task_3.json', 'task_4.json', 'task_5.json', 'task_6.json']);

    const { tasks, problems } = await board.scan();
    expect(tasks.map((t) => t.id)).toEqual([1, 4, 5, 6]);
    expect(problems).toEqual([
      { file: unsafeInside, error: expect.stringMatching(/^not a task: id: /), message: expect.stringContaining(unsafeInside) },
      {
        file: huge,
        error: expect.stringContaining('too large'),
        message: `skipped ${huge}: its id 100000000000000000000 is too large (task ids go up to 9007199254740991); it is skipped; rename or remove it`,
      },
    ]);
    // One warning each, with a message a person can read (never `huddle: warning: undefined`).
    await board.list();
    expect(warnings()).toHaveLength(2);
    for (const warning of warnings()) expect(warning.message).toEqual(expect.stringMatching(/^skipped .*task_.*\.json: /));
    expect((await board.claimNext('alice'))?.id).toBe(1);
  });

  it('never gives an id out twice, even after its file vanished', async () => {
    for (const s of ['a', 'b', 'c']) await board.create({ subject: s }, 'lead');
    unlinkSync(path.join(dir, 'task_3.json'));
    expect((await board.create({ subject: 'd' }, 'lead')).id).toBe(4);
    for (const name of taskFiles()) unlinkSync(path.join(dir, name));
    expect((await board.create({ subject: 'e' }, 'lead')).id).toBe(5);
    // Another board (another process) on the same directory knows it too.
    const other = new FileBoard(dir, { events: hub });
    expect((await other.create({ subject: 'f' }, 'lead')).id).toBe(6);
    other.close();
  });

  it('a task file is only ever created where no file is: a taken name is left alone', () => {
    const file = writeTask(7, { subject: 'made by a person' });
    const task = { ...onDisk(7), subject: 'made by the board' };
    expect(createTaskFile(file, task)).toBe(false);
    expect(onDisk(7).subject).toBe('made by a person');
    expect(createTaskFile(path.join(dir, 'task_8.json'), { ...task, id: 8 })).toEqual(expect.any(String));
    expect(onDisk(8).subject).toBe('made by the board');
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('dependency loops made by hand', () => {
  it('are reported by scan, by task_list and once as a warning, and never claimed', async () => {
    writeTask(1, { blockedBy: [2], blocks: [2] });
    writeTask(2, { blockedBy: [1], blocks: [1] });
    writeTask(3, { blocks: [4], blockedBy: [5] });
    writeTask(4, { blocks: [5], blockedBy: [3] });
    writeTask(5, { blocks: [3], blockedBy: [4] });
    writeTask(6);
    writeTask(7, { status: 'completed', blocks: [8] }); // a loop through a finished task is no loop
    writeTask(8, { blockedBy: [7], blocks: [7] });

    const scan = await board.scan();
    expect(scan.cycles).toEqual([
      [1, 2, 1],
      [3, 4, 5, 3],
    ]);
    expect((await board.claimable()).map((t) => t.id)).toEqual([6, 8]);
    await board.scan();
    const loops = warnings().filter((w) => Array.isArray(w.cycle));
    expect(loops.map((w) => w.message)).toEqual([
      expect.stringMatching(/^tasks #1 → #2 → #1 wait for each other \(each arrow: blocks\), so none of them can ever start; remove one of these dependencies/),
      expect.stringMatching(/^tasks #3 → #4 → #5 → #3 wait for each other/),
    ]);

    const context = { agent: 'lead', signal: new AbortController().signal, events: { agent: 'lead', emit: () => ({}) as never } } as unknown as ToolContext;
    const list = taskTools(board).find((tool) => tool.name === 'task_list')!;
    const output = String(await list.run({}, context));
    expect(output).toContain('warning: #1 → #2 → #1 wait for each other (each arrow: blocks), so none of them can ever start');
    expect(output).toContain('warning: #3 → #4 → #5 → #3 wait for each other');

    // The board keeps working around them; a new dependency into a loop is refused as a loop.
    expect((await board.claimNext('alice'))?.id).toBe(6);
    await expect(board.update(2, { addBlocks: [3] }, 'lead')).resolves.toMatchObject({ blocks: [1, 3] });
    await expect(board.update(5, { addBlocks: [1] }, 'lead')).rejects.toThrow(/would create a cycle: #5 → #1 → #2 → #3 → #4 → #5/);
  });
});
