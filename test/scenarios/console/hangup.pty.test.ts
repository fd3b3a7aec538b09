// Closing the terminal (SIGHUP) or `kill` (SIGTERM) closes the console's team as quitting does: exit 0, the
// workspace's lock released, and the next console starts without asking about an unfinished team
// (docs/console.md#starting). The first frame comes before the session core loads, so the console's own
// handler is set before execa's signal-exit, which re-raises a signal no other listener is left to handle.
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYS, useConsoles } from '../../helpers/console-pty.js';
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

describe('a console quit while its team opens', () => {
  it('quits on Ctrl+C twice at once, though the team would go on opening', async () => {
    // A "PostgreSQL server" that takes connections and never answers: the team's store keeps retrying to open.
    const held: net.Socket[] = [];
    let connected!: () => void;
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const silent = net.createServer((socket) => {
      held.push(socket);
      connected();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const tty = await start({ cols: 80, rows: 24, args: ['--team', `postgres://huddle@127.0.0.1:${port}/huddle`] });
      // The first frame comes before the team is open (docs/console.md#starting).
      await tty.waitForText('ask the lead');
      tty.write('typed before it opened');
      // The open is under way: connected, waiting for an answer that never comes.
      await reached;
      tty.write(KEYS.ctrlC);
      await tty.waitForText('Press Ctrl+C again to quit');
      tty.write(KEYS.ctrlC);
      const { exitCode } = await tty.exited;
      expect(exitCode).toBe(0);
      // Quit, not failed: the open never gave up (its error would be on the screen as it exits).
      expect(await tty.screen()).not.toContain('cannot open the team');
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 60_000);
});
