// A headless run ends 0 only when the team settled with every task someone took up done
// (docs/contract.md#exit-codes): a lead that ends its turn with a task left in progress (its teammate's host
// gone, nobody to take it up) ends the run 1, naming the task; a task nobody took is the lead's plan for later.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-run-end-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

it('a team that settles with a task taken and not done ends the run 1, naming it', { timeout: 60_000 }, async () => {
  fake.script('lead', reply(toolUse('task_create', { subject: 'Write the notes' }), toolUse('claim_task', { task_id: 1 })), replyText('Left it.'));
  const result = await runCli(['-p', 'write the notes'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(/^huddle: the team settled with 1 task not done: #1 \(in_progress, lead\); /m);
});

it('a task nobody took is the plan for later: the run ends 0', { timeout: 60_000 }, async () => {
  fake.script('lead', reply(toolUse('task_create', { subject: 'Write the notes' })), replyText('Left for later.'));
  const result = await runCli(['-p', 'plan the notes'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain('Left for later.');
});

it('a team that settles with every task done ends the run 0', { timeout: 60_000 }, async () => {
  fake.script(
    'lead',
    reply(toolUse('task_create', { subject: 'Write the notes' }), toolUse('claim_task', { task_id: 1 })),
    reply(toolUse('task_update', { task_id: 1, status: 'completed' })),
    replyText('Done.'),
  );
  const result = await runCli(['-p', 'write the notes'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain('Done.');
});
