// Plan approval, unattended or not (docs/headless.md#plan-approval): a real `huddle -p` whose lead spawns a
// plan-mode teammate, scripted through the fake API. plans.approver auto-after approves on its timer and says
// so; plans.approver person waits for `huddle approve` from another process (an edit, a denial with a message),
// and the webhook hears that a plan waits, without the URL's token showing anywhere.
import '../../helpers/isolated-config.js';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/runtime/store/bus.js';
import { type FakeApi, type RecordedRequest, type Scripted, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { inboxMessages, lastUserTexts, readInboxFile } from '../../helpers/team-harness.js';
import { baseEnv, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-plans-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

function settings(values: unknown): void {
  mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
  writeFileSync(path.join(ws.dir, '.team', 'settings.json'), JSON.stringify(values));
}

function newest(request: RecordedRequest, type: Message['type']): Message | undefined {
  return inboxMessages(lastUserTexts(request)).findLast((m) => m.type === type);
}

/** The lead spawns carol in plan mode and then waits; carol plans, revises when sent back, and writes once approved. */
function team(request: RecordedRequest): Scripted | undefined {
  if (request.agent === 'lead') {
    return request.body.messages.length === 1
      ? reply(toolUse('spawn_teammate', { name: 'carol', role: 'coder', prompt: 'Plan the greeting.', plan_mode_required: true }))
      : replyText('the team is done');
  }
  if (request.agent !== 'carol') return undefined;
  const answer = newest(request, 'plan_approval_response');
  if (answer?.approve) return reply(toolUse('write_file', { path: 'hello.txt', content: 'hello\n' }), toolUse('idle', {}));
  if (answer) return reply(toolUse('plan_approval', { plan: 'Write hello.txt, with a test.' }));
  return reply(toolUse('plan_approval', { plan: 'Write hello.txt.' }));
}

const inbox = (name: string) => readInboxFile(path.join(ws.dir, '.team', 'inbox', `${name}.jsonl`));

/** `huddle -p` in the background: the test answers its plans from other processes meanwhile. */
function startRun(args: string[] = []): { done: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [CLI_PATH, '-p', 'Greet.', '--trust', ...args], {
    cwd: ws.dir,
    env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  return { done: new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr }))) };
}

const cli = (...args: string[]) => runCli([...args, '--cwd', ws.dir], { cwd: ws.dir, timeoutMs: 30_000 });

interface Waiting {
  id: string;
  agent: string;
  kind: string;
  detail?: string;
}

/** Asks the live run until a plan other than `except` waits (the condition; each ask is one real round trip). */
async function waitForPlan(except?: string): Promise<Waiting> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const result = await cli('approvals', '--json');
    if (result.code === 0) {
      const plan = (JSON.parse(result.stdout) as Waiting[]).find((w) => w.kind === 'plan' && w.id !== except);
      if (plan) return plan;
    }
    if (Date.now() > deadline) throw new Error(`no plan waited within 30 s: ${result.stdout}${result.stderr}`);
  }
}

describe('plan approval headless', () => {
  it('auto-after: a plan nobody answers is approved by the timer, and the record says so', async () => {
    settings({ plans: { approver: 'auto-after', autoApproveMinutes: 0.005 } });
    fake.respond(team);
    const result = await runCli(['-p', 'Greet.', '--trust'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(path.join(ws.dir, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(inbox('carol').filter((m) => m.type === 'plan_approval_response')).toEqual([
      expect.objectContaining({ approve: true, feedback: 'auto-approved after 0.005 min' }),
    ]);
    // The lead was never asked: the plan waited for the person.
    expect(inbox('lead').filter((m) => m.type === 'plan_approval_request')).toEqual([]);
    const log = readdirSync(path.join(ws.dir, '.team', 'logs', 'carol'))
      .map((f) => readFileSync(path.join(ws.dir, '.team', 'logs', 'carol', f), 'utf8'))
      .join('');
    expect(log).toContain('auto-approved after 0.005 min');
  }, 90_000);

  it('person: huddle approve --edit from another process; the teammate is told to follow the edit; the webhook heard the plan', async () => {
    const posts: Array<{ url: string | undefined; body: Record<string, unknown> }> = [];
    const hook: Server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        posts.push({ url: req.url, body: JSON.parse(body) as Record<string, unknown> });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks/SECRET-TOKEN-42`;
    try {
      settings({ plans: { approver: 'person' }, notifications: { webhook: { url } } });
      fake.respond(team);
      const run = startRun();
      const plan = await waitForPlan();
      expect(plan).toMatchObject({ agent: 'carol', detail: 'Write hello.txt.' });

      const wrong = await cli('approve', 'approval_999');
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toBe(`huddle: no request 'approval_999' waits for you; waiting: ${plan.id}\n`);

      const edit = path.join(ws.dir, 'edited-plan.md');
      writeFileSync(edit, 'Write hello.txt in lower case, nothing else.\n');
      const approved = await cli('approve', plan.id, '--edit', edit);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe("approved with your edits: carol's plan\n");

      const { code, stderr } = await run.done;
      expect(code, stderr).toBe(0);
      const told = fake.requests.find((r) => r.agent === 'carol' && newest(r, 'plan_approval_response'));
      expect(lastUserTexts(told!).join('\n')).toContain("Your plan was approved with the person's edits: follow this plan, not your own.");
      expect(newest(told!, 'plan_approval_response')).toMatchObject({ approve: true, plan: 'Write hello.txt in lower case, nothing else.\n' });

      expect(posts).toContainEqual({
        url: '/hooks/SECRET-TOKEN-42',
        body: expect.objectContaining({ event: 'plan', agent: 'carol', text: 'carol sent a plan for your approval', notification_type: 'plan_approval' }),
      });
      expect(posts[0]!.body.team).toEqual(expect.any(String));
      // The token is the person's: not on stderr, not in any log.
      expect(stderr).not.toContain('SECRET-TOKEN');
      const logs = path.join(ws.dir, '.team', 'logs');
      const files = readdirSync(logs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(readFileSync(path.join(file.parentPath, file.name), 'utf8')).not.toContain('SECRET-TOKEN');
    } finally {
      await new Promise((resolve) => hook.close(resolve));
    }
  }, 90_000);

  it('person: huddle approve --deny --message sends the plan back; the teammate revises; the revision is approved', async () => {
    settings({ plans: { approver: 'person' } });
    fake.respond(team);
    const run = startRun();
    const first = await waitForPlan();
    const denied = await cli('approve', first.id, '--deny', '--message', 'add a test');
    expect(denied.code, denied.stderr).toBe(0);

    const second = await waitForPlan(first.id);
    expect(second.detail).toBe('Write hello.txt, with a test.');
    const revisedAfter = fake.requests.find((r) => r.agent === 'carol' && newest(r, 'plan_approval_response')?.approve === false);
    expect(lastUserTexts(revisedAfter!).join('\n')).toContain('the person did not approve it: add a test; revise the plan and send it again');

    // One thing waits: no id needed.
    const approved = await cli('approve');
    expect(approved.code, approved.stderr).toBe(0);
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    expect(readFileSync(path.join(ws.dir, 'hello.txt'), 'utf8')).toBe('hello\n');
  }, 90_000);

  it('no live huddle: one line, exit 2', async () => {
    const result = await cli('approvals');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`huddle: no huddle is running in ${ws.dir}; start one there with 'huddle' or 'huddle -p "PROMPT"' (or pass --cwd DIR)\n`);
  });
});

describe('who may choose an unattended approver', () => {
  it('auto-after and a webhook from a workspace file wait for the person’s trust; person and lead do not', async () => {
    const { wideningKeys } = await import('../../../src/runtime/settings/trust.js');
    expect(wideningKeys({ plans: { approver: 'auto-after', autoApproveMinutes: 1 } })).toEqual([['plans', 'approver']]);
    expect(wideningKeys({ notifications: { webhook: { url: 'https://hooks.example/T0K3N' } } })).toEqual([['notifications', 'webhook']]);
    expect(wideningKeys({ plans: { approver: 'person' }, planApproval: 'lead' })).toEqual([]);
  });
});

describe('the webhook URL in /config', () => {
  it('shows where it posts, never its path or query', async () => {
    const { webhookOrigin } = await import('../../../src/runtime/settings/describe.js');
    expect(webhookOrigin('https://hooks.slack.com/services/T000/B000/XXXXSECRET?x=1')).toBe('https://hooks.slack.com/‹hidden›');
    expect(webhookOrigin('not a url')).toBe('‹hidden›');
  });
});
