// Interrupting an agent another process runs: a headless lead on PostgreSQL places ada on a worker;
// ada's model call hangs mid-answer; `huddle interrupt ada` from another shell reaches the lead's
// control socket, the lead's process asks ada's host, the worker interrupts her turn, and the run
// then settles. The interruption is on the team's record, from the worker's host.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH, runCli } from '../../helpers/run-cli.js';
import { makeCheckouts, scenarioEnv, startWorker, type WorkerProcess } from './team-scenario.js';

describePostgres('an interrupt for an agent on a worker', (base) => {
  let fake: FakeApi;
  let root: string;
  let worker: WorkerProcess | undefined;
  let lead: ReturnType<typeof spawn> | undefined;
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-interrupt-'));
  });
  afterAll(async () => {
    if (lead && lead.exitCode === null) lead.kill('SIGKILL');
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('reaches the worker that runs it, which interrupts the turn; the run then ends', { timeout: 120_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1']);
    const { url, team } = teamUrl(base, 'interrupt');
    let adaCalls = 0;
    fake.respond((request) => {
      if (request.agent === 'lead') {
        return request.body.messages.length === 1
          ? reply(toolUse('spawn_teammate', { name: 'ada', role: 'coder', prompt: 'Write the parser.' }))
          : replyText('Handed out.');
      }
      if (request.agent === 'ada') {
        adaCalls += 1;
        // Her first answer never ends on its own; after the interrupt she is idle and says so.
        return adaCalls === 1 ? { kind: 'hang', content: [text('Reading the grammar first, then')] } : replyText('Stopped, as asked.');
      }
      return undefined;
    });
    const env = scenarioEnv(fake.url);
    worker = startWorker({ cwd: checkouts.w1!, team: url, slots: 1, env });
    const host = await worker.ready;

    lead = spawn(process.execPath, [CLI_PATH, '-p', 'Get the parser written.', '--team', url, '--cwd', checkouts.lead!], {
      env: { ...baseEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    lead.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = new Promise<number | null>((resolve) => lead!.once('close', (code) => resolve(code)));
    // ada's model call is under way, on the worker.
    await fake.waitForRequests(3, 60_000);
    expect(fake.requests.filter((r) => r.agent === 'ada')).toHaveLength(1);

    const interrupt = await runCli(['interrupt', 'ada', '--cwd', checkouts.lead!], { cwd: checkouts.lead!, timeoutMs: 30_000 });
    expect(interrupt.code, interrupt.stderr).toBe(0);
    await worker.waitFor(/ada interrupted \(asked from another process of the team\)/);
    expect(await closed, stderr).toBe(0);

    const db = new pg.Client({ connectionString: base });
    await db.connect();
    try {
      const { rows } = await db.query<{ host: string; body: { type: string; interrupted?: boolean } }>(
        `SELECT host, body FROM huddle_events WHERE team = $1 AND agent = 'ada' AND body->>'type' = 'error' AND (body->>'interrupted')::boolean`,
        [team],
      );
      expect(rows.map((row) => row.host)).toEqual([host]);
    } finally {
      await db.end();
    }
  });
});
