// When fs.watch fails (out of inotify instances, a network file system), the file bus and board
// fall back to polling, say so once, and still wake on other processes' writes. The child runs in
// a user namespace whose inotify instance limit is 0 (`unshare -r`, /proc/sys/user), so fs.watch
// really fails there. Without unshare this test fails when CI=true and is skipped locally.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { FileBus } from '../../../src/runtime/store/file/file-bus.js';
import { bundleFixture } from '../store/file/fixtures/bundle.js';

const LIMIT_WATCHES = 'echo 0 > /proc/sys/user/max_inotify_instances';
const available = spawnSync('unshare', ['-r', 'sh', '-c', LIMIT_WATCHES]).status === 0;
const MISSING = 'needs `unshare -r` (util-linux, user namespaces enabled) to run a process without inotify';
if (!available && process.env.CI === 'true') {
  it('needs unshare', () => {
    throw new Error(MISSING);
  });
}
if (!available && process.env.CI !== 'true') console.warn(`skipped: the fs.watch fallback test ${MISSING}`);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'huddle-watch-fallback-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

(available ? describe : describe.skip)('without fs.watch', () => {
  it('the bus and the board poll instead, say so, and wake on another process’s writes', async () => {
    const fixture = await bundleFixture('watch-fallback');
    const inboxDir = path.join(dir, 'inbox');
    const tasksDir = path.join(dir, '.tasks');
    const child = spawn(
      'unshare',
      ['-r', 'sh', '-c', `${LIMIT_WATCHES} && exec "$0" "$@"`, process.execPath, fixture, JSON.stringify({ inboxDir, tasksDir })],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const seen: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        seen.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
        buffered = buffered.slice(newline + 1);
        for (const wake of waiters.splice(0)) wake();
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const next = (event: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const check = () => {
          const found = seen.find((e) => e.event === event);
          if (found) resolve(found);
          else waiters.push(check);
        };
        check();
        void exited.then(() => reject(new Error(`the child exited before '${event}': ${stderr}`)));
      });

    await next('ready');
    const bus = new FileBus(inboxDir, { knownNames: () => ['lead', 'alice'] });
    await bus.send({ from: 'lead', to: 'alice', content: 'are you there?' });
    expect(await next('woke')).toMatchObject({ messages: ['are you there?'] });
    const board = new FileBoard(tasksDir);
    const task = await board.create({ subject: 'made elsewhere' }, 'lead');
    expect(await next('board')).toEqual({ event: 'board', change: { source: 'external', ids: [task.id] } });
    expect(await exited).toBe(0);
    const warnings = seen.filter((e) => e.event === 'warning').map((e) => String(e.message));
    // The board's watcher starts first (onChange), then the bus's (waitForMessage).
    expect(warnings).toEqual([
      expect.stringMatching(/^watching the task board failed: cannot watch .*\.tasks \(.*EMFILE.*\); checking it every 1000 ms instead$/),
      expect.stringMatching(/^cannot watch .*inbox \(.*EMFILE.*\); checking it every 250 ms instead$/),
    ]);
    bus.close();
    board.close();
  });
});
