// Closing the terminal (SIGHUP) or `kill` (SIGTERM) closes the console's team as quitting does: exit 0, the
// workspace's lock released, and the next console starts without asking about an unfinished team
// (docs/console.md#starting). The first frame comes before the session core loads, so the console's own
// handler is set before execa's signal-exit, which re-raises a signal no other listener is left to handle.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConsoles } from '../../helpers/console-pty.js';
import { makeWorkspace } from '../../helpers/run-cli.js';

const start = useConsoles();

describe('a console hung up', () => {
  it.each(['SIGHUP', 'SIGTERM'] as const)(
    'on %s closes its team: exit 0, the lock released, no question next time',
    async (signal) => {
      const ws = makeWorkspace('huddle-hangup-');
      try {
        const first = await start({ workspace: ws.dir, cols: 80, rows: 24 });
        await first.waitForText('waiting for a prompt');
        first.driver.process.kill(signal);
        const { exitCode } = await first.exited;
        expect(exitCode).toBe(0);
        expect(existsSync(path.join(ws.dir, '.team', 'huddle.lock'))).toBe(false);
        const second = await start({ workspace: ws.dir, cols: 80, rows: 24 });
        const screen = await second.waitForText('waiting for a prompt');
        expect(screen).not.toContain('unfinished team');
      } finally {
        ws.cleanup();
      }
    },
    60_000,
  );
});
