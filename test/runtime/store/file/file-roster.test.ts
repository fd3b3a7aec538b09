import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MalformedFileError } from '../../../../src/runtime/fs/atomic-file.js';
import { EventHub, type HuddleEvent } from '../../../../src/runtime/events/events.js';
import { FileRoster, MalformedRosterError } from '../../../../src/runtime/store/file/file-roster.js';
import { type RosterChange } from '../../../../src/runtime/store/roster.js';
import { bundleFixture, runFixture } from './fixtures/bundle.js';

let dir: string;
let teamDir: string;
let hub: EventHub;
let events: HuddleEvent[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-roster-'));
  teamDir = path.join(dir, '.team');
  hub = new EventHub();
  events = [];
  hub.subscribe((event) => events.push(event));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const onDisk = () =>
  JSON.parse(readFileSync(path.join(teamDir, 'config.json'), 'utf8')) as {
    team_name: string;
    lead: string;
    members: Record<string, unknown>[];
  };
const statusEvents = () => events.filter((event) => event.type === 'status');

describe('Roster', () => {
  it('creates config.json with the lead, and reopens it unchanged', async () => {
    const roster = await FileRoster.open(teamDir, { teamName: 'apollo', events: hub });
    expect(roster.teamName).toBe('apollo');
    expect(roster.names()).toEqual(['lead']);
    const file = onDisk();
    expect(file).toMatchObject({ team_name: 'apollo', lead: 'lead', members: [{ name: 'lead', role: 'lead', status: 'idle' }] });
    expect(typeof file.members[0]!.created_at).toBe('string');

    await roster.add({ name: 'alice', role: 'coder', model: 'm1' });
    const again = await FileRoster.open(teamDir, { teamName: 'other' });
    expect(again.teamName).toBe('apollo');
    expect(again.names()).toEqual(['lead', 'alice']);
  });

  it('adds members with validated names and refuses duplicates of live members', async () => {
    const roster = await FileRoster.open(teamDir, { events: hub });
    const alice = await roster.add({ name: 'alice', role: 'coder', worktree: 'wt/alice', skills: ['ts'] });
    expect(alice).toMatchObject({ name: 'alice', role: 'coder', status: 'working', worktree: 'wt/alice', skills: ['ts'] });
    expect(onDisk().members[1]).toMatchObject({ name: 'alice', skills: ['ts'] });
    for (const bad of ['Alice', '1bob', 'bob smith', '', 'a'.repeat(33), '../x']) {
      await expect(roster.add({ name: bad, role: 'coder' })).rejects.toThrow(/invalid agent name .*lowercase letter/);
    }
    await roster.add({ name: `a${'b'.repeat(31)}`, role: 'coder' });
    await expect(roster.add({ name: 'alice', role: 'tester' })).rejects.toThrow("a teammate named 'alice' already exists (status: working)");
    await expect(roster.add({ name: 'lead', role: 'coder' })).rejects.toThrow(/already exists/);

    await roster.setStatus('alice', 'failed', { error: 'model refused' });
    const back = await roster.add({ name: 'alice', role: 'tester' });
    expect(back).toMatchObject({ name: 'alice', role: 'tester', status: 'working' });
    expect(back.error).toBeUndefined();
    expect(back.worktree).toBeUndefined();
    expect(roster.names().filter((name) => name === 'alice')).toHaveLength(1);
  });

  it('stores status reasons and errors, and emits a status event per change', async () => {
    const roster = await FileRoster.open(teamDir, { events: hub });
    const changes: RosterChange[] = [];
    roster.onChange((change) => changes.push(change));
    await roster.add({ name: 'bob', role: 'coder' });
    await roster.setStatus('bob', 'waiting', { reason: 'plan approval', task: 3 });
    expect(roster.get('bob')).toMatchObject({ status: 'waiting', status_reason: 'plan approval', task: 3 });
    await roster.setStatus('bob', 'failed', { error: 'API 500' });
    expect(onDisk().members.find((m) => m.name === 'bob')).toMatchObject({ status: 'failed', error: 'API 500' });
    expect(roster.get('bob')!.status_reason).toBeUndefined();
    await roster.update('bob', { tokens: 1200 });
    await roster.setStatus('lead', 'working');
    await expect(roster.setStatus('nobody', 'idle')).rejects.toThrow("no teammate named 'nobody'; known names: lead, bob");
    await expect(roster.setStatus('bob', 'sleeping' as never)).rejects.toThrow(/invalid status 'sleeping'/);

    expect(statusEvents().map(({ agent, status, reason, error }) => ({ agent, status, reason, error }))).toEqual([
      { agent: 'bob', status: 'working', reason: undefined, error: undefined },
      { agent: 'bob', status: 'waiting', reason: 'plan approval', error: undefined },
      { agent: 'bob', status: 'failed', reason: undefined, error: 'API 500' },
      { agent: 'lead', status: 'working', reason: undefined, error: undefined },
    ]);
    expect(changes.map((change) => change.kind)).toEqual(['add', 'status', 'status', 'update', 'status']);
    expect(roster.get('bob')).toMatchObject({ tokens: 1200, status: 'failed' });
  });

  it('sees changes made by another Roster (another process) without reopening', async () => {
    const mine = await FileRoster.open(teamDir);
    const theirs = await FileRoster.open(teamDir);
    await theirs.add({ name: 'carol', role: 'reviewer' });
    expect(mine.names()).toEqual(['lead', 'carol']);
    await mine.setStatus('carol', 'idle');
    expect(theirs.get('carol')!.status).toBe('idle');
  });

  it('loses no update when two processes change it at once', async () => {
    const worker = await bundleFixture('bus-roster-worker');
    await FileRoster.open(teamDir);
    const count = 25;
    let ready = 0;
    let allReady: () => void = () => undefined;
    const bothReady = new Promise<void>((resolve) => (allReady = resolve));
    const runs = ['p', 'q'].map((prefix) =>
      runFixture(worker, { teamDir, prefix, count }, (line) => {
        if (line.includes('ready') && ++ready === 2) allReady();
      }),
    );
    await bothReady;
    for (const run of runs) run.child.stdin!.end('go\n');
    const exits = await Promise.all(runs.map((run) => run.exited));
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
    const file = onDisk();
    const names = file.members.map((member) => member.name);
    expect(names).toHaveLength(1 + 2 * count);
    for (const prefix of ['p', 'q']) {
      for (let i = 0; i < count; i++) {
        expect(file.members.find((m) => m.name === `${prefix}-${i}`)).toMatchObject({ status: 'idle', status_reason: `done ${i}` });
        expect(file.members[0]![`seen_${prefix}_${i}`]).toBe(true);
      }
    }
  });

  it('refuses a malformed config.json with a clear error and leaves it alone', async () => {
    mkdirSync(teamDir, { recursive: true });
    const file = path.join(teamDir, 'config.json');
    writeFileSync(file, '{"team_name": "x", "members": [');
    const error = await FileRoster.open(teamDir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MalformedFileError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/not valid JSON.*fix it by hand, or move it aside/);
    expect(readFileSync(file, 'utf8')).toBe('{"team_name": "x", "members": [');

    writeFileSync(file, JSON.stringify({ team_name: 'x', lead: 'lead', members: [{ name: 'lead', role: 'lead', status: 'asleep' }] }));
    await expect(FileRoster.open(teamDir)).rejects.toBeInstanceOf(MalformedRosterError);
    await expect(FileRoster.open(teamDir)).rejects.toThrow(/config\.json is not a valid team roster \(members\.0\.status/);
    writeFileSync(file, 'null');
    await expect(FileRoster.open(teamDir)).rejects.toThrow(/not a valid team roster \(not a JSON object\)/);
    expect(readFileSync(file, 'utf8')).toBe('null');
  });

  it('keeps serving the last good roster when the file breaks under it, but refuses changes', async () => {
    const roster = await FileRoster.open(teamDir, { events: hub });
    writeFileSync(path.join(teamDir, 'config.json'), 'garbage');
    expect(roster.names()).toEqual(['lead']);
    expect(events.filter((event) => event.type === 'warning')).toHaveLength(1);
    await expect(roster.add({ name: 'dave', role: 'coder' })).rejects.toThrow(/config\.json is not a valid team roster/);
    expect(readFileSync(path.join(teamDir, 'config.json'), 'utf8')).toBe('garbage');
  });
});
