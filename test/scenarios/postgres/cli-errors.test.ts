// The team URL's mistakes, each one line and exit 2 (no server needed): not a postgres:// URL, a
// worker without a team, a server that is not there (the password never shown), bad --slots.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

describe('--team and huddle worker: mistakes', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace('huddle-team-cli-');
  });
  afterEach(() => ws.cleanup());

  it('a --team that is not a postgres:// URL is one line, exit 2', async () => {
    const result = await runCli(['-p', 'hi', '--team', 'mysql://x@y/z', '--cwd', ws.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "huddle: --team takes a postgres:// URL (postgres://USER@HOST:PORT/DATABASE?team=NAME), not 'mysql://x@y/z'\nRun 'huddle --help' for usage.\n",
    );
  });

  it('huddle worker needs a team, and a sensible --slots', async () => {
    const noTeam = await runCli(['worker', '--cwd', ws.dir]);
    expect(noTeam.code).toBe(2);
    expect(noTeam.stderr).toBe('huddle: huddle worker needs --team URL (or HUDDLE_TEAM_URL): the team on PostgreSQL it works for\n');
    const slots = await runCli(['worker', '--slots', '0', '--team', 'postgres://x@127.0.0.1:1/db', '--cwd', ws.dir]);
    expect(slots.code).toBe(2);
    expect(slots.stderr).toMatch(/^huddle: --slots takes a whole number from 1 to 64, not '0'\n/);
    const misplaced = await runCli(['-p', 'hi', '--slots', '2', '--cwd', ws.dir]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toMatch(/^huddle: --slots goes with huddle worker\n/);
  });

  it('a server that is not there: one line naming it, exit 2, the password never shown', async () => {
    const secret = 'pw-very-secret-4321';
    for (const args of [
      ['-p', 'hi', '--team', `postgres://me:${secret}@127.0.0.1:1/db?team=shop`],
      ['worker', '--team', `postgres://me:${secret}@127.0.0.1:1/db?team=shop`],
    ]) {
      const result = await runCli([...args, '--cwd', ws.dir], { timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(
        'huddle: cannot open the team on postgres://me:***@127.0.0.1:1/db?team=shop: nothing listens there (is the server running?)\n',
      );
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it('HUDDLE_TEAM_URL works like --team', async () => {
    const result = await runCli(['-p', 'hi', '--cwd', ws.dir], { env: { HUDDLE_TEAM_URL: 'postgres://me@127.0.0.1:1/db' }, timeoutMs: 60_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^huddle: cannot open the team on postgres:\/\/me@127\.0\.0\.1:1\/db\?team=huddle-team-cli-\S+: nothing listens there/);
  });
});
