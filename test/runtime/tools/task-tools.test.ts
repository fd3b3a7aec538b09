import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { agentEmitter, EventHub, type HuddleEvent } from '../../../src/runtime/events/events.js';
import { taskTools } from '../../../src/runtime/tools/task-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import type { ToolContext } from '../../../src/runtime/tools/types.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';

let root: string;
let hub: EventHub;
let events: HuddleEvent[];
let board: FileBoard;
let tools: ToolRegistry;
let team: string[];

function ctx(agent: string): ToolContext {
  return { workspace: new Workspace(root), agent, signal: new AbortController().signal, events: agentEmitter(hub, agent) };
}

function call(agent: string, name: string, input: unknown) {
  return tools.run(name, input, ctx(agent));
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'huddle-tools-'));
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
  board = new FileBoard(new Workspace(root).tasksDir, { events: hub });
  team = ['lead', 'alice', 'bob'];
  tools = new ToolRegistry(taskTools(board, { agents: () => team }));
});

afterEach(() => {
  board.close();
  rmSync(root, { recursive: true, force: true });
});

describe('task tools', () => {
  it('registers the task tools of docs/contract.md#every-agent with described, integer task ids', () => {
    expect(tools.names).toEqual(['task_create', 'task_update', 'task_list', 'task_get', 'claim_task']);
    const defs = Object.fromEntries(tools.definitions().map((d) => [d.name, d]));
    const update = defs.task_update!.input_schema as unknown as {
      properties: Record<string, { type?: string; description?: string; items?: { type?: string } }>;
      required: string[];
    };
    expect(update.required).toEqual(['task_id']);
    expect(update.properties.task_id).toMatchObject({ type: 'integer', description: expect.any(String) });
    expect(update.properties.addBlockedBy?.items?.type).toBe('integer');
    for (const def of Object.values(defs)) {
      const props = (def.input_schema as { properties?: Record<string, { description?: string }> }).properties ?? {};
      for (const [field, schema] of Object.entries(props)) expect(schema.description, `${def.name}.${field}`).toBeTruthy();
    }
  });

  it('creates, lists and gets tasks as short text, acting as ctx.agent', async () => {
    expect(await call('lead', 'task_list', {})).toEqual({ content: 'no tasks yet; add one with task_create' });
    expect((await call('lead', 'task_create', { subject: 'Set up', description: 'repo and CI' })).content).toBe('created task #1: Set up');
    expect((await call('lead', 'task_create', { subject: 'Write tests', blockedBy: ['1'] })).content).toBe('created task #2: Write tests (blocked by #1)');
    const list = await call('alice', 'task_list', {});
    expect(list.isError).toBeUndefined();
    expect(list.content.split('\n')).toEqual(['#1 [pending] Set up (owner: -)', '#2 [pending] Write tests (owner: -, blocked by: #1)', 'claimable now: #1']);
    const got = await call('alice', 'task_get', { task_id: '#2' });
    expect(JSON.parse(got.content)).toMatchObject({ id: 2, subject: 'Write tests', blockedBy: [1], status: 'pending', owner: null });
    expect(events.filter((e) => e.type === 'task').map((e) => [e.agent, e.action])).toEqual([
      ['lead', 'created'],
      ['lead', 'created'],
      ['lead', 'updated'],
    ]);
  });

  it('claims, completes and reports what became claimable', async () => {
    await board.create({ subject: 'Set up' }, 'lead');
    await board.create({ subject: 'Write tests', blockedBy: [1] }, 'lead');
    const claimed = await call('alice', 'claim_task', { task_id: 1 });
    expect(claimed.content).toMatch(/^claimed task #1: Set up\. .*task_update \{"task_id": 1, "status": "completed"\}/);
    expect((await board.get(1)).owner).toBe('alice');
    const done = await call('alice', 'task_update', { task_id: 1, status: 'completed' });
    expect(done).toEqual({ content: 'task #1 (Set up): status in_progress → completed. Now claimable: #2' });
    expect((await call('bob', 'task_list', {})).content).toContain('#1 [completed] Set up (owner: alice)');
  });

  it('maps board refusals to error results the model can act on', async () => {
    await board.create({ subject: 'a' }, 'lead');
    await board.create({ subject: 'b', blockedBy: [1] }, 'lead');
    await call('bob', 'claim_task', { task_id: 1 });

    expect(await call('alice', 'claim_task', { task_id: 1 })).toEqual({
      content: 'claim_task failed: task #1 is already claimed by bob',
      isError: true,
    });
    const blocked = await call('alice', 'claim_task', { task_id: 2 });
    expect(blocked.isError).toBe(true);
    expect(blocked.content).toContain('task #2 is blocked by #1 (in_progress, bob)');
    expect(await call('alice', 'task_get', { task_id: 9 })).toEqual({
      content: 'task_get failed: no task #9; existing tasks: 1, 2',
      isError: true,
    });
    await call('lead', 'task_create', { subject: 'c', blockedBy: [2] });
    const loop = await call('lead', 'task_update', { task_id: 3, addBlocks: [2] });
    expect(loop).toMatchObject({ isError: true, content: expect.stringContaining('would create a cycle: #3 → #2 → #3') });
    const started = await call('lead', 'task_update', { task_id: 3, addBlocks: [1] });
    expect(started).toMatchObject({ isError: true, content: expect.stringContaining('task #1 is in_progress; only a pending task') });
    const nothing = await call('lead', 'task_update', { task_id: 2 });
    expect(nothing).toMatchObject({ isError: true, content: expect.stringContaining('nothing to change') });
    const stranger = await call('lead', 'task_update', { task_id: 2, owner: 'zed' });
    expect(stranger).toMatchObject({ isError: true, content: expect.stringContaining("no agent named 'zed'; the team is: lead, alice, bob") });
    const invalid = await call('lead', 'task_update', { task_id: 'two', status: 'done' });
    expect(invalid.isError).toBe(true);
    expect(invalid.content).toMatch(/^invalid input for task_update: task_id: .*; status: /);
    expect((await board.get(2)).owner).toBeNull();
  });

  it('assigns and unassigns a pending task', async () => {
    await board.create({ subject: 'a' }, 'lead');
    expect((await call('lead', 'task_update', { task_id: 1, owner: 'alice' })).content).toBe('task #1 (a): owner - → alice');
    expect((await call('lead', 'task_update', { task_id: 1, owner: 'bob' })).isError).toBe(true);
    expect((await call('lead', 'task_update', { task_id: 1, owner: null })).content).toBe('task #1 (a): owner alice → -');
  });

  it('reports a malformed task file in task_list and names it in task_get', async () => {
    await board.create({ subject: 'fine' }, 'lead');
    const broken = path.join(board.dir, 'task_2.json');
    writeFileSync(broken, 'garbage');
    const list = await call('alice', 'task_list', {});
    expect(list.isError).toBeUndefined();
    expect(list.content).toContain('#1 [pending] fine (owner: -)');
    expect(list.content).toContain(`warning: skipped ${broken}: not valid JSON`);
    const got = await call('alice', 'task_get', { task_id: 2 });
    expect(got.isError).toBe(true);
    expect(got.content).toContain(`${broken} is not a valid task file`);
  });
});
