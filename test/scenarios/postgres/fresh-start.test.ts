// A fresh start of a team on PostgreSQL (--fresh archives its state) while a worker serves it: the
// worker is told why its lease ended, in so many words, and joins the fresh team as a new host.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { startWorker, type WorkerProcess } from './team-scenario.js';

describePostgres('--fresh on a team a worker serves', (base) => {
  let fake: FakeApi;
  let ws: Workspace;
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeApi();
    ws = makeWorkspace('huddle-pg-fresh-');
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGINT');
      await worker.exited;
    }
    ws.cleanup();
    await fake.close();
  });

  it("ends the worker's lease with the reason, and the worker joins the fresh team", { timeout: 120_000 }, async () => {
    const { url, team } = teamUrl(base, 'fresh');
    fake.respond((request) => (request.agent === 'lead' ? replyText('Hello.') : undefined));
    const env = { ANTHROPIC_BASE_URL: fake.url, HUDDLE_SANDBOX: 'off', HUDDLE_LEASE_MS: '3000' };
    worker = startWorker({ cwd: ws.dir, team: url, slots: 1, env });
    const first = await worker.ready;

    const run = await runCli(['-p', 'hi', '--team', url, '--fresh', '--cwd', ws.dir], { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`archived the previous team to team '${team}@archive-`));

    const lost = await worker.waitFor(/joining the team again as a new host/);
    expect(lost).toContain(`host ${first}) lost its lease on the team: the team was started afresh (its state archived)`);
    const again = await worker.waitFor(new RegExp(`serving team '${team}' as host (?!${first}:)`));
    expect(again).not.toContain(first);
  });
});
