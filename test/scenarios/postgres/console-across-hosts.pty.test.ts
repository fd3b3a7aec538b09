// The console of a team on PostgreSQL with a worker beside it, as a person uses it (real PTY, a
// real `huddle worker`): the teammate the worker runs shows in /team with its machine and streams
// in its pane; Esc interrupts it there (on the worker); it then waits, and a message typed in its
// pane reaches it (the console took it for a stopped teammate before) and it goes on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { useConsoles } from '../../helpers/console-pty.js';
import { lastUserTexts } from '../../helpers/team-harness.js';
import { makeCheckouts, scenarioEnv, startWorker, type WorkerProcess } from './team-scenario.js';

describePostgres('the console of a team across hosts', (base) => {
  describe.each([
    [80, 24],
    [160, 45],
  ])('at %i×%i', (cols, rows) => {
    let fake: FakeApi;
    let root: string;
    let worker: WorkerProcess | undefined;
    beforeAll(async () => {
      fake = await startFakeApi();
      root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-console-'));
    });
    const start = useConsoles();
    afterAll(async () => {
      if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await fake.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('shows where ada runs, interrupts her on the worker, and gets the next message to her', { timeout: 120_000 }, async () => {
      const checkouts = makeCheckouts(root, ['lead', 'w1']);
      const { url } = teamUrl(base, 'console');
      let adaCalls = 0;
      fake.respond((request) => {
        if (request.agent === 'lead') {
          return request.body.messages.length === 1
            ? reply(toolUse('spawn_teammate', { name: 'ada', role: 'coder', prompt: 'Write the parser.' }))
            : replyText('Handed out.');
        }
        if (request.agent !== 'ada') return undefined;
        adaCalls += 1;
        return adaCalls === 1 ? { kind: 'hang', content: [text('Reading the grammar first')] } : replyText('On it: the parser only, as you say.');
      });
      const env = scenarioEnv(fake.url);
      worker = startWorker({ cwd: checkouts.w1!, team: url, slots: 1, env });
      await worker.ready;

      const tty = await start({ fake, workspace: checkouts.lead!, cols, rows, env: { HUDDLE_TEAM_URL: url, ...env } });
      await tty.waitForText('ask the lead');
      await tty.type('Get the parser written.');
      tty.press('enter');
      await tty.waitForText(/2:\S+ ada/);
      await fake.waitForRequests(3, 60_000);

      await tty.type('/team');
      tty.press('enter');
      // The host column comes with ada's first event from the worker (the view is live).
      const team = await tty.waitForScreen((screen) => /^name\s.*\shost\s*$/m.test(screen) && /^ada\s.*working/m.test(screen));
      expect(team).toMatch(/^lead\s.*\shere\s*$/m);
      expect(team).not.toMatch(/^ada\s.*\shere\s*$/m);
      // Esc and Tab in quick writes can reach the console in one read (Alt+Tab): wait for /team to close.
      tty.press('escape');
      await tty.waitForScreen((screen) => !/^name\s.*\shost\s*$/m.test(screen));

      // Her pane: what she streams on the worker, and where she runs.
      tty.press('tab');
      await tty.waitForText(/ada \(coder\) working.*· on \S+/);
      await tty.waitForText('Reading'); // the first delta of her answer, streamed on the worker
      tty.press('escape');
      await worker.waitFor(/ada interrupted \(asked from another process of the team\)/);
      await tty.waitForText(/ada \(coder\) idle: waiting for a message/);

      await tty.type('Only the parser, please.');
      tty.press('enter');
      await tty.waitForText('On it: the parser only, as you say.');
      const second = fake.requests.filter((r) => r.agent === 'ada')[1]!;
      expect(lastUserTexts(second).join('\n')).toContain('Only the parser, please.');
    });
  });
});
