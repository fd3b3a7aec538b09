// A Claude Code teammate end to end, headless: the real pinned Claude Code CLI, driven by the real
// huddle (dist/cli.js), both against the fake Messages API. The lead spawns `alice` with agent
// claude-code; alice claims the task through mcp__huddle__claim_task (huddle's MCP server, in its
// own process), writes a file with Claude Code's own Write tool, completes the task and reports to
// the lead, whose model gets the report exactly once. Its first request already offers the team
// tools (not deferred behind ToolSearch): the scripted model claims only when they are there.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { trustWorkspace } from '../../helpers/trust.js';

let fake: FakeApi;
let ws: Workspace;

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-cc-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

interface LoggedEvent {
  type: string;
  agent: string;
  [field: string]: unknown;
}

function logged(agent: string): LoggedEvent[] {
  const dir = path.join(ws.dir, '.team', 'logs', agent);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ndjson'))
    .sort()
    .flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as LoggedEvent);
}

/** Every text of a request's messages, flattened (tool results included). */
function allText(body: { messages: Array<{ content: unknown }> }): string {
  return JSON.stringify(body.messages);
}

describe.skipIf(skipWithoutClaudeCode())('a claude-code teammate (the real CLI)', () => {
  it('claims through mcp__huddle__claim_task, writes with its own Write tool, completes and reports once', async () => {
    const report = 'Done: hello.txt holds the greeting (task #1)';
    const target = path.join(ws.dir, 'hello.txt');
    fake.script(
      'lead',
      reply(
        text('Planning.'),
        toolUse('task_create', { subject: 'Write hello.txt', description: 'A file hello.txt with a greeting.' }),
        toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Claim task #1 and do it, then report to lead.', agent: 'claude-code' }),
      ),
      replyText('Waiting for alice.'),
      replyText('All done: alice wrote hello.txt.'),
    );
    // Its first request must offer huddle's team tools up front (not deferred behind ToolSearch):
    // only then does the scripted model claim the task.
    let firstTools: string[] | undefined;
    fake.respond((r) => {
      if (r.agent !== 'alice' || firstTools !== undefined || !Array.isArray(r.body?.tools)) return undefined;
      firstTools = r.body.tools.map((t: { name: string }) => t.name);
      return firstTools!.includes('mcp__huddle__claim_task')
        ? reply(text('Claiming it.'), toolUse('mcp__huddle__claim_task', { task_id: 1 }))
        : replyText('No team tools were offered.');
    });
    fake.script(
      'alice',
      reply(toolUse('Write', { file_path: target, content: 'hello from alice\n' })),
      reply(toolUse('mcp__huddle__task_update', { task_id: 1, status: 'completed' })),
      reply(toolUse('mcp__huddle__send_message', { to: 'lead', content: report })),
      replyText('Reported to the lead.'),
    );
    mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
    writeFileSync(path.join(ws.dir, '.team', 'settings.json'), JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN } } }));
    trustWorkspace(ws.dir);

    const result = await runCli(['-p', 'Get hello.txt written by a Claude Code teammate.'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url, ...claudeCodeEnv(path.join(ws.dir, '..', `${path.basename(ws.dir)}-home`)) },
      timeoutMs: 180_000,
    });
    expect(result.stderr).not.toMatch(/failed|error/i);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('All done: alice wrote hello.txt.');

    // Its own Write tool wrote the file; the task was claimed and completed through huddle's MCP server.
    expect(readFileSync(target, 'utf8')).toBe('hello from alice\n');
    const task = JSON.parse(readFileSync(path.join(ws.dir, '.tasks', 'task_1.json'), 'utf8'));
    expect(task).toMatchObject({ status: 'completed', owner: 'alice' });

    // The report reached the lead's model exactly once.
    const leadRequests = fake.requests.filter((r) => r.agent === 'lead');
    const last = leadRequests.at(-1)!;
    expect(allText(last.body).split(report).length - 1).toBe(1);
    const inbox = readFileSync(path.join(ws.dir, '.team', 'inbox', 'lead.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(inbox.filter((m) => m.content === report)).toHaveLength(1);
    expect(inbox.find((m) => m.content === report)).toMatchObject({ from: 'alice', to: 'lead' });

    expect(firstTools).toEqual(expect.arrayContaining(['mcp__huddle__claim_task', 'mcp__huddle__task_update', 'mcp__huddle__send_message']));
    // Claude Code got huddle's identity after its own prompt, and the team tools from huddle's server.
    const aliceRequests = fake.requests.filter((r) => r.agent === 'alice');
    expect(aliceRequests.length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(aliceRequests[0]!.body.system)).toContain("You are 'alice', role: coder, team: ");

    // Its activity as huddle's own events: tool calls with results, usage with cost, statuses.
    const events = logged('alice');

    const calls = events.filter((e) => e.type === 'tool_call').map((e) => e.name);
    expect(calls).toEqual(['mcp__huddle__claim_task', 'Write', 'mcp__huddle__task_update', 'mcp__huddle__send_message']);
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => e.ok)).toEqual([true, true, true, true]);
    expect(String(results[0]!.content)).toContain('claimed task #1');
    const usage = events.filter((e) => e.type === 'usage');
    expect(usage.length).toBeGreaterThanOrEqual(1);
    expect(Number(usage[0]!.cost_usd)).toBeGreaterThan(0);
    expect(events.some((e) => e.type === 'text' && e.text === 'Reported to the lead.')).toBe(true);
    const roster = JSON.parse(readFileSync(path.join(ws.dir, '.team', 'config.json'), 'utf8'));
    const alice = roster.members.find((m: { name: string }) => m.name === 'alice');
    expect(alice).toMatchObject({ agent: 'claude-code', status: 'shutdown' });
    expect(alice.agent_session).toMatch(/^[0-9a-f-]{36}$/);

    // The key reached Claude Code only as its own variable: never in a log.
    const logs = path.join(ws.dir, '.team', 'logs');
    for (const entry of readdirSync(logs, { withFileTypes: true })) {
      const files = entry.isDirectory()
        ? readdirSync(path.join(logs, entry.name)).map((file) => path.join(logs, entry.name, file))
        : [path.join(logs, entry.name)];
      for (const file of files) expect(readFileSync(file, 'utf8')).not.toContain('sk-test-key-1234567890');
    }
  }, 240_000);

  it("completes a task only when its verify passes, as huddle's own agents do: the failure's output is the tool error", async () => {
    const target = path.join(ws.dir, 'done.txt');
    fake.script(
      'lead',
      reply(
        toolUse('task_create', { subject: 'Write done.txt', verify: 'test -f done.txt || { echo "done.txt is missing"; exit 1; }' }),
        toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Claim task #1 and do it.', agent: 'claude-code' }),
      ),
      replyText('Waiting for alice.'),
      replyText('Done.'),
    );
    fake.script(
      'alice',
      reply(toolUse('mcp__huddle__claim_task', { task_id: 1 })),
      // Too early: the verify command fails, and says why.
      reply(toolUse('mcp__huddle__task_update', { task_id: 1, status: 'completed' })),
      reply(toolUse('Write', { file_path: target, content: 'done\n' })),
      reply(toolUse('mcp__huddle__task_update', { task_id: 1, status: 'completed' })),
      replyText('Finished.'),
    );
    mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
    writeFileSync(path.join(ws.dir, '.team', 'settings.json'), JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN } } }));
    trustWorkspace(ws.dir);

    const result = await runCli(['-p', 'Get done.txt written.'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url, ...claudeCodeEnv(path.join(ws.dir, '..', `${path.basename(ws.dir)}-home`)) },
      timeoutMs: 180_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const results = logged('alice').filter((e) => e.type === 'tool_result' && e.name === 'mcp__huddle__task_update');
    expect(results.map((e) => e.ok)).toEqual([false, true]);
    expect(String(results[0]!.content)).toContain('done.txt is missing');
    expect(JSON.parse(readFileSync(path.join(ws.dir, '.tasks', 'task_1.json'), 'utf8'))).toMatchObject({ status: 'completed', owner: 'alice' });
    expect(
      logged('alice')
        .filter((e) => e.type === 'verify')
        .map((e) => e.ok),
    ).toEqual([false, true]);
  }, 240_000);
});
