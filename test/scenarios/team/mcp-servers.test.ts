// An open team (settings, hooks, roles), end to end through the built CLI (`huddle -p`) against the fake Messages
// API: MCP servers from .mcp.json (the real reference "everything" server), CLAUDE.md / AGENTS.md in
// every agent's requests, a PreToolUse hook that blocks a write, verify gates, and bad settings.
// Each run gets its own HOME, so the machine's own ~/.claude and ~/.config/huddle stay out of it.
import { withoutRunRecord } from '../../helpers/run-record-lines.js';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, toolUse, type FakeApi, type RecordedRequest } from '../../helpers/fake-api.js';
import { allUserTexts, inboxMessages, lastToolResults, lastUserTexts, pastToolUses, systemBlocks, toolNames, turnsOf } from '../../helpers/team-harness.js';
import { makeWorkspace, REPO_ROOT, runCli, type CliResult, type Workspace } from '../../helpers/run-cli.js';

const EVERYTHING_BIN = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

let fake: FakeApi;
let ws: Workspace;
let home: Workspace;

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-open-team-');
  home = makeWorkspace('huddle-open-team-home-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
  home.cleanup();
});

function write(file: string, content: unknown): void {
  const target = path.join(ws.dir, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}

async function runGit(args: string[]): Promise<string> {
  return (await promisify(execFile)('git', args, { cwd: ws.dir })).stdout;
}

/** With --trust: the person trusts the hooks and servers these tests put in the workspace (docs/trust.md). */
function huddle(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli([...args, '--trust'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, HOME: home.dir, ...env }, timeoutMs: 60_000 });
}

/** Every event logged under .team/logs/<agent>/. */
function logged(agent: string): Array<Record<string, unknown>> {
  const dir = path.join(ws.dir, '.team', 'logs', agent);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ndjson'))
    .flatMap((file) => readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function results(request: RecordedRequest) {
  return lastToolResults(request);
}

/**
 * The lead calls `leadCalls`, spawns bob, waits for bob's report, asks him to shut down and ends;
 * bob calls `bobCalls`, reports what they returned, and shuts down when asked.
 */
function scriptTeam(leadCalls: ReturnType<typeof toolUse>[], bobCalls: ReturnType<typeof toolUse>[]): void {
  fake.respond((request) => {
    if (request.agent === 'lead') {
      if (turnsOf(request).length === 1) {
        return reply(...leadCalls, toolUse('spawn_teammate', { name: 'bob', role: 'coder', prompt: 'Call your tools, then report to lead what they said.' }));
      }
      const inbox = inboxMessages(allUserTexts(request));
      const asked = pastToolUses(request).some((use) => use.name === 'shutdown_request');
      if (inbox.some((m) => m.type === 'shutdown_response')) return replyText('All done.');
      if (!asked && inbox.some((m) => m.from === 'bob' && m.type === 'message')) return reply(toolUse('shutdown_request', { teammate: 'bob' }));
      return replyText('Waiting for bob.');
    }
    if (request.agent === 'bob') {
      const shutdown = inboxMessages(lastUserTexts(request)).find((m) => m.type === 'shutdown_request');
      if (shutdown) return reply(toolUse('shutdown_response', { request_id: shutdown.request_id, approve: true }));
      if (turnsOf(request).length === 1) return reply(...bobCalls);
      const got = results(request);
      if (got.length && !pastToolUses(request).some((use) => use.name === 'send_message')) {
        return reply(toolUse('send_message', { to: 'lead', content: got.map((r) => r.content).join(' | ') }), toolUse('idle', {}));
      }
      return reply(toolUse('idle', {}));
    }
    return undefined;
  });
}

describe('MCP servers from .mcp.json', () => {
  it("the lead and a teammate call the everything server's echo and get-sum and get its real answers; a server that does not start is one warning", async () => {
    write('.mcp.json', {
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
        broken: { command: path.join(ws.dir, 'no-such-server') },
      },
    });
    scriptTeam(
      [
        toolUse('mcp__everything__echo', { message: 'hello from lead' }),
        toolUse('mcp__everything__get-sum', { a: 2, b: 3 }),
        toolUse('mcp__everything__get-tiny-image', {}),
      ],
      [toolUse('mcp__everything__echo', { message: 'hello from bob' }), toolUse('mcp__everything__get-sum', { a: 40, b: 2 })],
    );
    const result = await huddle(['-p', 'use the MCP tools']);

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('All done.\n');
    const lead = fake.requests.filter((r) => r.agent === 'lead');
    const bob = fake.requests.filter((r) => r.agent === 'bob');
    // Offered with the server's own schema, to both.
    for (const request of [lead[0]!, bob[0]!])
      expect(toolNames(request)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    const echo = (lead[0]!.body.tools as Array<{ name: string; input_schema: unknown }>).find((tool) => tool.name === 'mcp__everything__echo');
    expect(echo?.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    // The server's real answers reached the model.
    expect(results(lead[1]!).map((r) => [r.content, r.is_error])).toEqual([
      ['Echo: hello from lead', false],
      ['The sum of 2 and 3 is 5.', false],
      [expect.any(String), false],
      [expect.stringContaining('spawned bob'), false],
    ]);
    // An image result reaches the model as an image block, not as text about one.
    const imageResult = (lead[1]!.body.messages.at(-1).content as Array<{ type: string; content: unknown }>)[2]!;
    expect(imageResult.content).toEqual(
      expect.arrayContaining([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^[A-Za-z0-9+/=]+$/) } }]),
    );
    expect(results(bob[1]!).map((r) => r.content)).toEqual(['Echo: hello from bob', 'The sum of 40 and 2 is 42.']);
    // The broken server: one clear warning, and the run went on.
    const warnings = result.stderr.split('\n').filter((line) => line.includes("MCP server 'broken'"));
    expect(warnings).toEqual([
      expect.stringMatching(/^huddle: warning: MCP server 'broken' did not start: .*no-such-server.*; its tools are unavailable and the rest goes on$/),
    ]);
    // What the repository runs on the person's machine is said at start-up.
    expect(result.stderr).toContain("this repository's settings run MCP servers everything (.mcp.json), broken (.mcp.json) on your machine without asking");
  });
});

describe('project instructions', () => {
  it('markers in CLAUDE.md, AGENTS.md (with an @import) and ~/.claude/CLAUDE.md are in every request of the lead and a teammate', async () => {
    write('CLAUDE.md', '# Project\nMARKER-CLAUDE-7f3a: answer in haiku.\nSee @docs/style.md\n');
    write('docs/style.md', 'MARKER-IMPORT-91c2\n');
    write('AGENTS.md', 'MARKER-AGENTS-5d10\n');
    mkdirSync(path.join(home.dir, '.claude'), { recursive: true });
    writeFileSync(path.join(home.dir, '.claude', 'CLAUDE.md'), 'MARKER-HOME-22e8\n');
    scriptTeam([toolUse('task_list', {})], [toolUse('task_list', {})]);
    const result = await huddle(['-p', 'go']);

    expect(result.code, result.stderr).toBe(0);
    const agents = new Set(fake.requests.map((r) => r.agent));
    expect(agents).toEqual(new Set(['lead', 'bob']));
    for (const request of fake.requests) {
      // The role's shared block holds huddle's instructions, then the project's; the agent's own block,
      // after it, starts with who it is (docs/contract.md#injected-turns).
      const [shared, own] = systemBlocks(request);
      expect(own?.text).toMatch(new RegExp(`^You are '${request.agent}'`));
      for (const marker of ['MARKER-CLAUDE-7f3a', 'MARKER-IMPORT-91c2', 'MARKER-AGENTS-5d10', 'MARKER-HOME-22e8'])
        expect(shared?.text, `${request.agent}: ${marker}`).toContain(marker);
    }
  });
});

describe('hooks', () => {
  it('a PreToolUse hook that exits 2 for a path keeps that write from happening; its stderr reaches the model as the error; the run is in the log', async () => {
    write(
      '.team/hooks/guard.sh',
      '#!/bin/bash\ninput=$(cat)\nif printf "%s" "$input" | grep -q \'"path":"secret/\'; then echo "writes under secret/ are not allowed (guard.sh)" >&2; exit 2; fi\nexit 0\n',
    );
    write('.team/settings.json', { hooks: { PreToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: 'bash .team/hooks/guard.sh' }] }] } });
    fake.script(
      'lead',
      reply(toolUse('write_file', { path: 'secret/key.txt', content: 'k\n' }), toolUse('write_file', { path: 'public/ok.txt', content: 'fine\n' })),
      replyText('Done.'),
    );
    const result = await huddle(['-p', 'write the files']);

    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(ws.dir, 'secret', 'key.txt'))).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'public', 'ok.txt'), 'utf8')).toBe('fine\n');
    const [blocked, allowed] = results(fake.requests[1]!);
    expect(blocked).toMatchObject({ is_error: true, content: expect.stringContaining('writes under secret/ are not allowed (guard.sh)') });
    expect(allowed).toMatchObject({ is_error: false });
    const hooks = logged('lead').filter((event) => event.type === 'hook');
    expect(hooks.map((event) => [event.hook_event_name, event.tool, event.blocked])).toEqual([
      ['PreToolUse', 'write_file', true],
      ['PreToolUse', 'write_file', false],
    ]);
    expect(hooks[0]).toMatchObject({ runs: [{ command: 'bash .team/hooks/guard.sh', status: 'blocked', exit_code: 2 }] });
    expect(result.stderr).toContain("this repository's settings run hooks for PreToolUse (.team/settings.json)");
  });
});

describe('session hooks of a headless run', () => {
  it('SessionStart at the start, the Notification hook when the team is done, SessionEnd last; each logged', async () => {
    const record = { type: 'command', command: 'cat >> "$CLAUDE_PROJECT_DIR/hook-inputs.ndjson"' };
    write('.team/settings.local.json', {
      hooks: { SessionStart: [{ hooks: [record] }], Notification: [{ matcher: 'team_finished', hooks: [record] }], SessionEnd: [{ hooks: [record] }] },
    });
    fake.script('lead', replyText('Finished.'));
    const result = await huddle(['-p', 'finish']);

    expect(result.code, result.stderr).toBe(0);
    // A personal settings file is the person's own: nothing to warn about.
    expect(withoutRunRecord(result.stderr)).toBe('');
    const inputs = readFileSync(path.join(ws.dir, 'hook-inputs.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(inputs.map((input) => input.hook_event_name)).toEqual(['SessionStart', 'Notification', 'SessionEnd']);
    expect(inputs[0]).toMatchObject({ source: 'startup', agent: 'lead', cwd: ws.dir });
    expect(inputs[1]).toMatchObject({ notification_type: 'team_finished', message: 'huddle -p: the run ended (exit 0)', title: 'huddle' });
    expect(inputs[2]).toMatchObject({ reason: 'the run ended' });
    expect(new Set(inputs.map((input) => input.session_id)).size).toBe(1);
    expect(
      logged('lead')
        .filter((event) => event.type === 'hook')
        .map((event) => event.hook_event_name),
    ).toEqual(['SessionStart', 'Notification', 'SessionEnd']);
  });
});

describe('.team/.gitignore', () => {
  it("keeps huddle's runtime state out of git, while the team's settings and roles go in", async () => {
    await runGit(['init', '-q']);
    write('.team/settings.json', { maxTurns: 20 });
    write('.team/settings.local.json', { model: 'mine' });
    write('.team/roles/qa.md', 'You check.\n');
    fake.script('lead', reply(toolUse('send_message', { to: 'lead', content: 'note to self' })), replyText('ok'));
    const result = await huddle(['-p', 'hi']);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(ws.dir, '.team', 'logs'))).toBe(true);
    const status = (await runGit(['status', '--porcelain', '--untracked-files=all']))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3))
      .sort();
    expect(status.filter((file) => file.startsWith('.team/'))).toEqual(['.team/.gitignore', '.team/roles/qa.md', '.team/settings.json']);
  });
});

describe('verify gates', () => {
  it('a failing verify keeps a task from completing, with the output as the error, until the agent makes it pass', async () => {
    fake.script(
      'lead',
      reply(
        toolUse('task_create', { subject: 'Write done.txt', verify: 'test -f done.txt || { echo "done.txt is missing"; exit 1; }' }),
        toolUse('claim_task', { task_id: 1 }),
      ),
      reply(toolUse('task_update', { task_id: 1, status: 'completed' })),
      reply(toolUse('write_file', { path: 'done.txt', content: 'yes\n' }), toolUse('task_update', { task_id: 1, status: 'completed' })),
      replyText('Task 1 is done.'),
    );
    const result = await huddle(['-p', 'do task 1']);

    expect(result.code, result.stderr).toBe(0);
    const [refused] = results(fake.requests[2]!);
    expect(refused!.is_error).toBe(true);
    expect(refused!.content).toContain('Task #1 was not completed: verify failed: test -f done.txt');
    expect(refused!.content).toContain('(exit 1,');
    expect(refused!.content).toContain('done.txt is missing');
    const [, completed] = results(fake.requests[3]!);
    expect(completed).toMatchObject({ is_error: false, content: expect.stringMatching(/status in_progress → completed.*verify passed: test -f done\.txt/) });
    const task = JSON.parse(readFileSync(path.join(ws.dir, '.tasks', 'task_1.json'), 'utf8'));
    expect(task).toMatchObject({ status: 'completed', verify: 'test -f done.txt || { echo "done.txt is missing"; exit 1; }' });
    expect(
      logged('lead')
        .filter((event) => event.type === 'verify')
        .map((event) => [event.task_id, event.ok, event.exit_code]),
    ).toEqual([
      [1, false, 1],
      [1, true, 0],
    ]);
  });

  it("a settings default per role gates tasks without a verify of their own, in the completing agent's workspace", async () => {
    write('.team/settings.json', { verify: { command: 'false', roles: { lead: 'test -f "$PWD/ready"' } } });
    fake.script(
      'lead',
      reply(
        toolUse('task_create', { subject: 'Get ready' }),
        toolUse('claim_task', { task_id: 1 }),
        toolUse('task_update', { task_id: 1, status: 'completed' }),
      ),
      reply(toolUse('bash', { command: 'touch ready' }), toolUse('task_update', { task_id: 1, status: 'completed' })),
      replyText('Ready.'),
    );
    const result = await huddle(['-p', 'get ready']);

    expect(result.code, result.stderr).toBe(0);
    expect(results(fake.requests[1]!)[2]).toMatchObject({ is_error: true, content: expect.stringContaining('verify failed: test -f "$PWD/ready"') });
    expect(results(fake.requests[2]!)[1]).toMatchObject({ is_error: false, content: expect.stringContaining('verify passed') });
  });
});

describe('bad settings', () => {
  it('an unknown key, a wrong type or broken JSON: one line naming the file and the key, exit 2, nothing run', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['.team/settings.json', JSON.stringify({ modle: 'x' }), /^huddle: \.team\/settings\.json: modle: unknown key \(did you mean "model"\?\)\n$/],
      [
        '.team/settings.local.json',
        JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout: 'ten' }] }] } }),
        /^huddle: \.team\/settings\.local\.json: hooks\.PreToolUse\[0\]\.hooks\[0\]\.timeout: expected a number, not "ten"\n$/,
      ],
      ['.mcp.json', '{"mcpServers": {', /^huddle: \.mcp\.json: not valid JSON \(.+\)\n$/],
    ];
    for (const [file, text, message] of cases) {
      write(file, text);
      const result = await huddle(['-p', 'hi']);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
      // The console says the same before it opens anything.
      const console = await huddle([]);
      expect(console.code).toBe(2);
      expect(console.stderr).toMatch(message);
      write(file, '{}');
    }
    expect(fake.requests).toHaveLength(0);
  });
});
