// `huddle prune --checkpoints` (docs/trust.md#checkpoints-and-rewind): real workspaces with real
// checkpoints taken through the checkpoint code (a git repository and a plain directory), then the
// built CLI removes the shadows of the workspaces deleted since, lists them with --dry-run, never
// touches the shadow of a workspace that is there, and names the shadows it cannot judge.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkpoints, checkpointDirFor } from '../../../src/runtime/workspace/checkpoints.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { runCli } from '../../helpers/run-cli.js';

let base: string;
let state: string;
let saved: string | undefined;
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-prune-checkpoints-')));
  state = path.join(base, 'state');
  saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = state;
});
afterEach(() => {
  if (saved === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = saved;
  rmSync(base, { recursive: true, force: true });
});

const prune = (...args: string[]) => runCli(['prune', ...args], { cwd: base, env: { XDG_STATE_HOME: state } });

/** A workspace (a repository with a commit, or plain files) with one checkpoint taken by the real code. */
async function workspaceWithCheckpoint(name: string, repository: boolean): Promise<{ ws: string; shadow: string }> {
  const ws = path.join(base, name);
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'notes.txt'), `${name}\n`);
  if (repository) {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, ...TEST_GIT_IDENTITY } });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'first');
  }
  await new Checkpoints(ws).take({ agent: 'lead', tool: 'bash', summary: 'ls' });
  const shadow = checkpointDirFor(ws);
  expect(existsSync(path.join(shadow, 'shadow.git', 'HEAD'))).toBe(true);
  return { ws, shadow };
}

describe('huddle prune --checkpoints', () => {
  it('removes the shadows of deleted workspaces, one line each and a total, and keeps the one whose workspace exists', async () => {
    const gone = await workspaceWithCheckpoint('gone-repo', true);
    const plain = await workspaceWithCheckpoint('gone-plain', false);
    const kept = await workspaceWithCheckpoint('still-here', true);
    rmSync(gone.ws, { recursive: true });
    rmSync(plain.ws, { recursive: true });

    const dry = await prune('--checkpoints', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`^would remove checkpoints of ${gone.ws} \\(\\d+\\.\\d MB\\)$`, 'm'));
    expect(dry.stdout).toMatch(new RegExp(`^would remove checkpoints of ${plain.ws} \\(\\d+\\.\\d MB\\)$`, 'm'));
    expect(dry.stdout).toMatch(/^would remove the checkpoints of 2 workspaces that are gone \(\d+\.\d MB\); kept 1 of workspaces that exist$/m);
    expect(dry.stdout).not.toContain(kept.ws);
    for (const shadow of [gone.shadow, plain.shadow, kept.shadow]) expect(existsSync(shadow)).toBe(true);

    const run = await prune('--checkpoints');
    expect(run.code, run.stderr).toBe(0);
    // One line per shadow (in the order of their directories' names), then the total.
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.slice(0, 2)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^removed checkpoints of ${gone.ws} \\(\\d+\\.\\d MB\\)$`)),
        expect.stringMatching(new RegExp(`^removed checkpoints of ${plain.ws} \\(\\d+\\.\\d MB\\)$`)),
      ]),
    );
    expect(lines[2]).toMatch(/^removed the checkpoints of 2 workspaces that are gone \(\d+\.\d MB\); kept 1 of workspaces that exist$/);
    expect(existsSync(gone.shadow)).toBe(false);
    expect(existsSync(plain.shadow)).toBe(false);
    expect(existsSync(path.join(kept.shadow, 'shadow.git', 'HEAD'))).toBe(true);
    // The kept workspace's checkpoints still work.
    expect(await new Checkpoints(kept.ws).list()).toHaveLength(1);

    const again = await prune('--checkpoints');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('no checkpoints of workspaces that are gone; kept 1 of workspaces that exist\n');
  });

  it('leaves and names a shadow it cannot judge, and never follows a link out of the checkpoints directory', async () => {
    const kept = await workspaceWithCheckpoint('here', false);
    const root = path.dirname(kept.shadow);
    const blank = path.join(root, '0123456789abcdef');
    mkdirSync(blank);
    const moved = path.join(root, 'fedcba9876543210');
    mkdirSync(moved);
    writeFileSync(path.join(moved, 'workspace'), `${path.join(base, 'nowhere')}\n`);
    const outside = path.join(base, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'workspace'), `${path.join(base, 'nowhere')}\n`);
    symlinkSync(outside, path.join(root, 'aaaaaaaaaaaaaaaa'));

    const run = await prune('--checkpoints');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`left ${blank}: no readable workspace file\n`);
    expect(run.stdout).toContain(`left ${moved}: its workspace file names ${path.join(base, 'nowhere')}, whose checkpoints would be elsewhere\n`);
    expect(run.stdout).toMatch(/no checkpoints of workspaces that are gone; kept 1 of workspaces that exist, left 2 named above\n$/);
    for (const dir of [blank, moved, outside, kept.shadow]) expect(existsSync(dir)).toBe(true);
  });

  it('no checkpoints directory at all is no error', async () => {
    const run = await prune('--checkpoints', '--dry-run');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('no checkpoints of workspaces that are gone; kept 0 of workspaces that exist\n');
  });

  it('plain huddle prune (no team anywhere) leaves checkpoints alone and points at --checkpoints', async () => {
    const gone = await workspaceWithCheckpoint('gone', false);
    rmSync(gone.ws, { recursive: true });
    const run = await prune();
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'huddle: huddle prune needs a team on PostgreSQL: --team postgres://USER@HOST/DB (or the team setting); huddle prune --checkpoints removes the checkpoints of workspaces that are gone\n',
    );
    expect(existsSync(gone.shadow)).toBe(true);
  });

  it('bad input is one line: team flags and names do not go with --checkpoints', async () => {
    for (const args of [
      ['--checkpoints', '--team', 'postgres://x@y/z'],
      ['--checkpoints', '--older-than', '3'],
      ['--checkpoints', 'alpha'],
    ]) {
      const run = await prune(...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(2);
      expect(run.stderr).toMatch(/^huddle: (--team|--older-than) does not go with --checkpoints|^huddle: unexpected argument 'alpha'/);
    }
  });
});
