// `--fresh` archives the team's state (docs/contract.md#on-disk): what belongs to the workspace or to
// a running process's locks stays where it is looked for.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { archiveTeam } from '../../../../src/runtime/store/file/team-state.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

it("moves the team's state and tasks to the archive, and leaves the team lock, its record file and the person's files", () => {
  root = mkdtempSync(path.join(tmpdir(), 'huddle-team-state-'));
  const teamDir = path.join(root, '.team');
  const tasksDir = path.join(root, '.tasks');
  mkdirSync(teamDir);
  mkdirSync(tasksDir);
  for (const name of ['config.json', 'huddle.lock', `huddle.lock.${process.pid}.a1b2c3d4e5f60.tmp`, 'settings.json', 'input-history.json'])
    writeFileSync(path.join(teamDir, name), '{}');
  writeFileSync(path.join(tasksDir, '1.json'), '{}');
  const target = archiveTeam(teamDir, tasksDir);
  expect(target).toBeDefined();
  expect(readdirSync(target!).sort()).toEqual(['config.json', 'tasks']);
  expect(readdirSync(teamDir).sort()).toEqual([
    'archive',
    'huddle.lock',
    `huddle.lock.${process.pid}.a1b2c3d4e5f60.tmp`,
    'input-history.json',
    'settings.json',
  ]);
  expect(existsSync(tasksDir)).toBe(false);
});
