// The roster's changes of one process that wait for its lock together are written in one
// read-modify-write (file-roster.ts #mutate). The renames onto config.json are counted through a
// spy on node:fs/promises that passes every call through to the real file system.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { EventHub, type HuddleEvent } from '../../../../src/runtime/events/events.js';
import { withFileLock } from '../../../../src/runtime/store/file-lock.js';
import { FileRoster } from '../../../../src/runtime/store/file/file-roster.js';
import { RosterError } from '../../../../src/runtime/store/roster.js';

const renamedOnto = vi.hoisted(() => new Map<string, number>());
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const rename: typeof actual.rename = async (from, to) => {
    await actual.rename(from, to);
    renamedOnto.set(String(to), (renamedOnto.get(String(to)) ?? 0) + 1);
  };
  return { ...actual, default: { ...actual, rename }, rename };
});

let dir: string;
let teamDir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-roster-batch-'));
  teamDir = path.join(dir, '.team');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("changes that wait for the roster's lock together are written once, each applied in order; one that fails fails alone", async () => {
  const hub = new EventHub();
  const events: HuddleEvent[] = [];
  hub.subscribe((event) => events.push(event));
  const roster = await FileRoster.open(teamDir, { events: hub });
  const names = ['t1', 't2', 't3', 't4', 't5', 't6'];
  for (const name of names) await roster.add({ name, role: 'coder' });
  const file = path.join(teamDir, 'config.json');
  const writesBefore = renamedOnto.get(file) ?? 0;
  expect(writesBefore).toBeGreaterThanOrEqual(names.length);

  // The lock is held (another change of this process, say) while the team asks for its changes.
  let letGo: () => void = () => undefined;
  let taken: () => void = () => undefined;
  const isTaken = new Promise<void>((resolve) => (taken = resolve));
  const held = withFileLock(file, () => {
    taken();
    return new Promise<void>((resolve) => (letGo = resolve));
  });
  await isTaken;
  const asked = [
    ...names.map((name, i) => roster.setStatus(name, 'working', { reason: `on #${i + 1}`, task: i + 1 })),
    roster.setStatus('nobody', 'working'),
    roster.setStatus('t1', 'idle', { reason: 'done with #1' }),
  ];
  letGo();
  await held;
  const outcomes = await Promise.allSettled(asked);

  expect(renamedOnto.get(file)! - writesBefore).toBe(1);
  const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
  expect(failed).toHaveLength(1);
  expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(RosterError);
  expect(String((failed[0] as PromiseRejectedResult).reason)).toContain("no teammate named 'nobody'");
  const onDisk = JSON.parse(readFileSync(file, 'utf8')) as { members: Array<{ name: string; status: string; status_reason?: string; task?: number }> };
  // t1's two changes applied in the order they were asked: the later one wins.
  expect(onDisk.members.find((m) => m.name === 't1')).toMatchObject({ status: 'idle', status_reason: 'done with #1' });
  for (const [i, name] of names.entries()) {
    if (name === 't1') continue;
    expect(onDisk.members.find((m) => m.name === name)).toMatchObject({ status: 'working', status_reason: `on #${i + 1}`, task: i + 1 });
  }
  expect(roster.get('t2')).toMatchObject({ status: 'working', task: 2 });
  // Every change that was applied is announced, once.
  const statuses = events.flatMap((event) => (event.type === 'status' && event.agent !== 'lead' ? [`${event.agent}:${event.status}`] : []));
  expect(statuses.slice(-(names.length + 1))).toEqual([...names.map((name) => `${name}:working`), 't1:idle']);

  // A change asked on its own afterwards is written on its own.
  await roster.setStatus('t3', 'idle');
  expect(renamedOnto.get(file)! - writesBefore).toBe(2);
});
