// The lead's protocols with teammates on a worker host (their loops run in another process): a
// plan-mode teammate's plan is approved by the lead and it gets its full tools there; a shutdown
// request is answered there and the teammate stops; nobody is told it "did not answer".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeApi, type RecordedRequest, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { runCli } from '../../helpers/run-cli.js';
import { makeCheckouts, readTeam, scenarioEnv, startWorker, type WorkerProcess } from './team-scenario.js';

function lastText(request: RecordedRequest): string {
  const last = (request.body?.messages ?? []).at(-1) as { content: unknown } | undefined;
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as Array<{ type: string; text?: string }>)
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}

const tools = (request: RecordedRequest): string[] => ((request.body?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);

describePostgres('protocols with teammates on a worker', (base) => {
  let fake: FakeApi;
  let root: string;
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeApi();
    root = mkdtempSync(path.join(tmpdir(), 'huddle-remote-protocols-'));
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a plan approved and a shutdown answered across processes', { timeout: 120_000 }, async () => {
    const checkouts = makeCheckouts(root, ['lead', 'w1']);
    const { url, team } = teamUrl(base, 'protocols');
    fake.respond((request) => {
      const text = lastText(request);
      const toolResults = JSON.stringify(request.body?.messages?.at(-1) ?? '').includes('tool_result');
      if (request.agent === 'lead') {
        if (request.body.messages.length === 1) {
          return reply(
            toolUse('spawn_teammate', { name: 'ada', role: 'coder', prompt: 'Wait for instructions.' }),
            toolUse('spawn_teammate', { name: 'bo', role: 'coder', prompt: 'Plan the work first.', plan_mode_required: true }),
          );
        }
        const plan = /plan_[0-9a-f]{8}/.exec(text);
        if (plan && !toolResults)
          return reply(toolUse('plan_approval', { request_id: plan[0], approve: true }), toolUse('shutdown_request', { teammate: 'ada' }));
        return replyText('Noted.');
      }
      if (request.agent === 'ada') {
        const asked = /shutdown_[0-9a-f]{8}/.exec(text);
        if (asked && !toolResults) return reply(toolUse('shutdown_response', { request_id: asked[0], approve: true }));
        return replyText('Ready.');
      }
      if (request.agent === 'bo') {
        if (request.body.messages.length === 1) return reply(toolUse('plan_approval', { plan: 'Write the parser, then its tests.' }));
        return replyText(toolResults ? 'Waiting for the lead.' : 'Approved: on it.');
      }
      return undefined;
    });
    const env = { ...scenarioEnv(fake.url) };
    worker = startWorker({ cwd: checkouts.w1!, team: url, slots: 2, env });
    await worker.ready;

    const lead = await runCli(['-p', 'Plan, then build.', '--json', '--team', url, '--cwd', checkouts.lead!], { env, timeoutMs: 100_000 });
    expect(lead.code, lead.stderr).toBe(0);
    const events = lead.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { agent: string; type: string; name?: string; ok?: boolean; content?: string });
    const leadResults = events.filter((e) => e.agent === 'lead' && e.type === 'tool_result');
    expect(
      leadResults.find((e) => e.name === 'plan_approval'),
      JSON.stringify(leadResults),
    ).toMatchObject({ ok: true });
    expect(leadResults.find((e) => e.name === 'shutdown_request')).toMatchObject({ ok: true });

    // bo got its full tools on the worker once the approval reached it.
    const boRequests = fake.requests.filter((r) => r.agent === 'bo');
    expect(tools(boRequests[0]!)).not.toContain('write_file');
    expect(tools(boRequests.at(-1)!)).toContain('write_file');
    // ada answered on the worker and stopped there; the lead was not told it failed to answer.
    const record = await readTeam(base, team);
    expect(record.members.find((m) => m.name === 'ada')).toMatchObject({ status: 'shutdown' });
    expect(record.leadInbox.filter((m) => m.content.includes('did not answer'))).toEqual([]);
    expect(record.leadInbox.some((m) => m.from === 'ada' && m.content === 'ada is shutting down.')).toBe(true);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});
