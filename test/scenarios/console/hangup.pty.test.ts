// Closing the terminal (SIGHUP) or `kill` (SIGTERM) closes the console's team as quitting does: exit 0, the
// workspace's lock released, and the next console starts without asking about an unfinished team
// (docs/console.md#starting). The first frame comes before the session core loads, so the console's own
// handler is set before execa's signal-exit, which re-raises a signal no other listener is left to handle.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ConsolePty, KEYS, useConsoles } from '../../helpers/console-pty.js';
import { reply, replyText, type RecordedRequest, type Scripted, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli } from '../../helpers/run-cli.js';

const start = useConsoles();

describe('a console hung up', () => {
  it.each(['SIGHUP', 'SIGTERM'] as const)(
    'on %s closes its team: exit 0, the lock released, no question next time',
    async (signal) => {
      const ws = makeWorkspace('huddle-hangup-');
      let second: ConsolePty | undefined;
      try {
        const first = await start({ workspace: ws.dir, cols: 80, rows: 24 });
        await first.waitForText('waiting for a prompt');
        first.driver.process.kill(signal);
        const { exitCode } = await first.exited;
        expect(exitCode).toBe(0);
        expect(existsSync(path.join(ws.dir, '.team', 'huddle.lock'))).toBe(false);
        second = await start({ workspace: ws.dir, cols: 80, rows: 24 });
        const screen = await second.waitForText('waiting for a prompt');
        expect(screen).not.toContain('unfinished team');
      } finally {
        // Closed before the workspace goes: a console closing later would make its .team/ again.
        await second?.close();
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

  // A resume opens before the first frame, in a terminal that is not raw yet: Ctrl+C comes as SIGINT, and says it quits.
  const quits = [
    { how: 'SIGTERM', quit: (tty: ConsolePty) => tty.driver.process.kill('SIGTERM'), taken: async () => undefined },
    { how: 'Ctrl+C', quit: (tty: ConsolePty) => tty.write(KEYS.ctrlC), taken: (tty: ConsolePty) => tty.waitForText('huddle: quitting') },
  ];
  it.each(quits)(
    'quit ($how) while a resumed teammate is compacted: the open finishes, then the team is suspended (exit 0, lock released, resumable)',
    async ({ quit, taken }) => {
      const ws = makeWorkspace('huddle-hangup-resume-');
      const fake = await startFakeApi();
      // A summary request (a compaction) is the one without tools.
      const compaction = (request: RecordedRequest) => !request.body?.tools?.length;
      try {
        // An unfinished team: the lead spawned alice with a prompt over half of her context window (~125k tokens
        // at ~4 characters a token), she answered once (a compaction needs a call to summarise), and the run was
        // stopped while her second call was in flight.
        let aliceAsked!: () => void;
        const aliceCalled = new Promise<void>((resolve) => (aliceAsked = resolve));
        fake.respond((request) => {
          if (request.agent === 'lead' && request.body.messages.length === 1) {
            return reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: `Write the notes.\n${'x'.repeat(500_000)}` }));
          }
          if (request.agent === 'alice' && request.body.messages.length === 1)
            return reply(text('Reading the notes first.'), toolUse('read_file', { path: 'notes.md' }));
          if (request.agent === 'alice') aliceAsked();
          return { kind: 'hang' };
        });
        let stop!: () => void;
        const headless = runCli(['-p', 'start the notes'], {
          cwd: ws.dir,
          env: { ANTHROPIC_BASE_URL: fake.url },
          timeoutMs: 120_000,
          onSpawn: (child) => (stop = () => child.kill('SIGTERM')),
        });
        await aliceCalled;
        stop();
        const left = await headless;
        expect(left.code, left.stderr).toBe(130);

        // Resumed in the console: the lead's summary is answered, alice's is held until the console was told to quit.
        let aliceCompacting!: () => void;
        const compacting = new Promise<void>((resolve) => (aliceCompacting = resolve));
        let release!: (answer: Scripted) => void;
        const held = new Promise<Scripted>((resolve) => (release = resolve));
        fake.respond((request) => {
          if (request.agent === 'lead' && compaction(request)) return replyText('SUMMARY: the lead spawned alice to write the notes.');
          if (request.agent === 'alice' && compaction(request)) {
            aliceCompacting();
            return held;
          }
          return { kind: 'hang' };
        });
        const tty = await start({ workspace: ws.dir, fake, cols: 80, rows: 24, args: ['--resume'] });
        await compacting;
        // The open is past the session's start, inside session.resume(): the quit comes now. A signal is pending
        // in the console before the summary is sent, so the console takes it while alice still compacts.
        quit(tty);
        await taken(tty);
        release(replyText('SUMMARY: alice was asked to write the notes and has not started.'));
        const { exitCode } = await tty.exited;

        expect(exitCode).toBe(0);
        // Closed: the lock released (the old console exited with it held and alice cut off mid-call).
        expect(existsSync(path.join(ws.dir, '.team', 'huddle.lock'))).toBe(false);
        // Alice's summary was kept: the open was waited for, not cut off.
        const aliceLogs = path.join(ws.dir, '.team', 'logs', 'alice');
        const logged = readdirSync(aliceLogs).map((file) => readFileSync(path.join(aliceLogs, file), 'utf8'));
        expect(logged.join('')).toContain('"type":"compaction"');
        // Suspended, not finished: nobody shut down, the team is there to resume.
        const roster = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ name: string; status: string }> };
        expect(roster.members.map((m) => m.name).sort()).toEqual(['alice', 'lead']);
        for (const member of roster.members) expect(member.status, member.name).not.toBe('shutdown');
      } finally {
        await fake.close();
        ws.cleanup();
      }
    },
    180_000,
  );
});
