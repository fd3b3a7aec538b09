// Opening a session (src/session/open-session.ts): the start-up decisions every face shares, on a
// store backend that reports what a real one would (an unfinished team, another live huddle).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/runtime/config.js';
import { TeamBusyError, type StoreBackend } from '../../src/runtime/store/team-store.js';
import { openFileStore } from '../../src/runtime/store/file/file-store.js';
import { Workspace } from '../../src/runtime/workspace/workspace.js';
import { openSession } from '../../src/session/open-session.js';
import { StartupError, type SessionSettings } from '../../src/session/settings.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Settings over a backend that has `unfinished` members and refuses to open when `busy`. */
function settings(backend: Partial<StoreBackend>): SessionSettings {
  const dir = mkdtempSync(path.join(tmpdir(), 'huddle-session-'));
  dirs.push(dir);
  const workspace = new Workspace(dir);
  const config = resolveConfig({ cwd: dir }, { ANTHROPIC_API_KEY: 'sk-test-session-0123456789' });
  const full: StoreBackend = {
    describe: () => `.team/ in ${dir}`,
    unfinishedMembers: async () => [],
    archive: async () => undefined,
    open: (options) => openFileStore(workspace, options),
    ...backend,
  };
  return {
    config,
    workspace,
    backend: full,
    model: { call: async () => Promise.reject(new Error('no model here')) },
    secrets: [],
    keyMissing: false,
    demo: false,
  };
}

const busy = new TeamBusyError({ pid: 4242, since: '2026-01-01T00:00:00Z' }, '.team/ in /somewhere');

describe('openSession', () => {
  it('another live huddle on the team: one StartupError line naming its pid (exit 2), from any step', async () => {
    for (const backend of [
      { open: async () => Promise.reject(busy) },
      { unfinishedMembers: async () => Promise.reject(busy) },
      { archive: async () => Promise.reject(busy) },
    ]) {
      const error = await openSession(settings(backend), { unfinished: 'refuse', fresh: 'archive' in backend }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as StartupError).exitCode).toBe(2);
      expect((error as StartupError).message).toMatch(/^another huddle \(pid 4242, since .*\) is running the team in/);
      expect((error as StartupError).message).not.toContain('\n');
    }
  });

  it('an unfinished team: refused naming both flags, or decided by the person (quit opens nothing)', async () => {
    const unfinished = { unfinishedMembers: async () => ['alice'] };
    await expect(openSession(settings(unfinished), { unfinished: 'refuse' })).rejects.toThrow(
      /unfinished team \(alice\); pass --resume to continue it or --fresh to start a new team/,
    );
    let opened = false;
    const quit = await openSession(settings({ ...unfinished, open: async () => ((opened = true), Promise.reject(new Error('never'))) }), {
      unfinished: async (members) => (expect(members).toEqual(['alice']), 'quit'),
    });
    expect(quit).toBe('quit');
    expect(opened).toBe(false);

    const session = await openSession(settings(unfinished), { unfinished: async () => 'fresh' });
    if (session === 'quit') throw new Error('expected a session');
    expect(session.decision).toBe('fresh');
    await session.close({ reason: 'test over' });
  });
});
