// The team lock (docs/contract.md#command-line): a workspace in which a huddle process is live belongs to it.
// A real second process (another store, then the CLI itself) is refused at once, naming the pid,
// with or without --resume/--fresh; a holder that was SIGKILLed is taken over at once; a holder
// that closes gives the team back.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { fileBackend } from '../../../../src/runtime/store/file/file-store.js';
import { TeamBusyError } from '../../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../../src/runtime/workspace/workspace.js';
import { runCli } from '../../../helpers/run-cli.js';
import { bundleFixture, runFixture } from './fixtures/bundle.js';

let holder: string;
let root: string;
beforeAll(async () => {
  holder = await bundleFixture('lock-holder');
});
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'huddle-team-lock-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Another process that opens the team in `root` and runs it until told to close. */
async function runningTeam() {
  let opened!: (pid: number) => void;
  let closed!: () => void;
  const open = new Promise<number>((resolve) => (opened = resolve));
  const done = new Promise<void>((resolve) => (closed = resolve));
  const run = runFixture(holder, { mode: 'team', root }, (line) => {
    const event = JSON.parse(line) as { event: string; pid: number };
    if (event.event === 'open') opened(event.pid);
    if (event.event === 'closed') closed();
  });
  const pid = await Promise.race([open, run.exited.then((exit) => Promise.reject(new Error(`the team process exited: ${exit.stderr}`)))]);
  return { ...run, pid, closed: done };
}

const open = (backend = fileBackend(new Workspace(root))) => backend.open({ hub: new EventHub(), secrets: [] });

describe('the team lock', () => {
  it('refuses a second store, unfinishedMembers and archive while another process runs the team', async () => {
    const other = await runningTeam();
    const backend = fileBackend(new Workspace(root));
    const refused = await open(backend).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TeamBusyError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^another huddle \\(pid ${other.pid}, since [^)]+\\) is running the team in \\.team/ in ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; use that one`,
      ),
    );
    await expect(backend.unfinishedMembers()).rejects.toBeInstanceOf(TeamBusyError);
    await expect(backend.archive()).rejects.toThrow(`pid ${other.pid}`);
    expect(existsSync(path.join(root, '.team', 'archive'))).toBe(false);
    // Joining (an MCP server, a worker) is no second run.
    const joined = await backend.open({ hub: new EventHub(), secrets: [], mode: 'join' });
    expect(joined.roster.names()).toEqual(['lead']);
    await joined.close();

    other.child.stdin!.end('close\n');
    await other.closed;
    expect((await other.exited).code).toBe(0);
    const mine = await open(backend); // given back on close
    await mine.close();
  });

  it('the CLI refuses a second run at once, exit 2, naming the pid, also with --resume and with --fresh', async () => {
    const other = await runningTeam();
    for (const flags of [[], ['--resume'], ['--fresh']]) {
      const result = await runCli(['-p', 'hello', '--cwd', root, ...flags], { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.split('\n').filter(Boolean);
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(`^huddle: another huddle \\(pid ${other.pid}, since .*\\) is running the team in \\.team/ in `)),
      ]);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(path.join(root, '.team', 'archive'))).toBe(false); // --fresh archived nothing
    other.child.kill('SIGTERM');
    await other.exited;
  });

  it('takes over at once the team of a process that was SIGKILLed', async () => {
    const other = await runningTeam();
    other.child.kill('SIGKILL');
    expect((await other.exited).signal).toBe('SIGKILL');
    const store = await open();
    expect(store.roster.names()).toEqual(['lead']);
    await store.close();
    // And the CLI, too: the workspace has an unfinished team (the lead was not shut down), no live holder.
    const result = await runCli(['-p', 'hello', '--cwd', root], { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^huddle: this workspace holds an unfinished team \(lead\); pass --resume/);
  });

  it('within one process the team may be opened twice; it is held until the last one closes', async () => {
    const first = await open();
    const second = await open();
    await first.close();
    const other = runFixture(holder, { mode: 'team', root });
    const exit = await other.exited;
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain(`another huddle (pid ${process.pid}`);
    await second.close();
    const third = await runningTeam();
    third.child.stdin!.end('close\n');
    await third.closed;
  });
});
