// A teammate's report to the lead carries the results of the tasks it completed (agents/tools/completion-report.ts,
// docs/contract.md#messages), and keeps them until a report is stored: a send_message that failed (the lead's
// inbox could not be written) leaves them for the next report, which carries them. The real file bus in a temp
// directory, the real send_message tool, the team's events on a real hub.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CompletionReports } from '../../../src/agents/tools/completion-report.js';
import { EventHub } from '../../../src/runtime/events/events.js';
import type { Task } from '../../../src/runtime/store/board.js';
import { FileBus } from '../../../src/runtime/store/file/file-bus.js';
import { messageTools } from '../../../src/runtime/tools/message-tools.js';
import type { ToolContext } from '../../../src/runtime/tools/types.js';

let dir: string;
let hub: EventHub;
let bus: FileBus;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-completion-report-'));
  hub = new EventHub();
  bus = new FileBus(path.join(dir, 'inbox'), { knownNames: () => ['lead', 'alice'], events: hub });
});
afterEach(() => {
  bus.close();
  rmSync(dir, { recursive: true, force: true });
});

const context = (agent: string): ToolContext => ({
  agent,
  workspace: undefined as never,
  signal: new AbortController().signal,
  events: { agent, emit: (type, fields) => hub.emit(agent, type, fields) },
});

function completed(id: number, subject: string): Task {
  return { id, subject, description: '', status: 'completed', owner: 'alice', blocks: [], blockedBy: [] } as unknown as Task;
}

it('keeps the results of a report whose send failed for the next report', async () => {
  const send = messageTools(bus, { annotate: new CompletionReports(hub).annotate }).sendMessage;
  hub.emit('alice', 'tool_call', { id: 'c1', name: 'write_file', input: { path: 'a.txt', content: 'a\n' }, summary: 'a.txt' });
  hub.emit('alice', 'task', { action: 'completed', task: completed(1, 'Write a.txt') });

  // The lead's inbox cannot be written (a directory where its file goes): the report is not stored.
  const inbox = bus.inboxFile('lead');
  mkdirSync(inbox);
  await expect(send.run({ to: 'lead', content: 'Wrote a.txt.' }, context('alice'))).rejects.toThrow(/EISDIR|directory/);
  rmSync(inbox, { recursive: true });
  expect(existsSync(inbox)).toBe(false);

  // A second completion meanwhile: the next report carries both.
  hub.emit('alice', 'tool_call', { id: 'c2', name: 'edit_file', input: { path: 'b.txt', old: 'x', new: 'y' }, summary: 'b.txt' });
  hub.emit('alice', 'task', { action: 'completed', task: completed(2, 'Fix b.txt') });
  expect(await send.run({ to: 'lead', content: 'Wrote a.txt, fixed b.txt.' }, context('alice'))).toMatch(/^sent to lead/);
  const [report] = await bus.take('lead');
  expect(report).toMatchObject({ from: 'alice', content: 'Wrote a.txt, fixed b.txt.' });
  expect(report!['tasks']).toEqual([
    { id: 1, subject: 'Write a.txt', status: 'completed', files: ['a.txt'] },
    { id: 2, subject: 'Fix b.txt', status: 'completed', files: ['b.txt'] },
  ]);

  // Reported once: the next message carries nothing more.
  expect(await send.run({ to: 'lead', content: 'Anything else?' }, context('alice'))).toMatch(/^sent to lead/);
  expect((await bus.take('lead'))[0]!['tasks']).toBeUndefined();
});
