// An open team in process (settings, docs/contract.md#hooks): hooks at each point of an agent's work, role settings over
// role files, MCP tools per role and per permission mode, and project instructions kept current.
// The model is the fake Messages API; hooks are real shell commands; MCP is the real everything server.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderToString } from 'ink';
import { createElement } from 'react';
import { McpServers } from '../../../src/runtime/mcp/mcp-servers.js';
import { TaskBoardView } from '../../../src/tui/components/TaskBoardView.js';
import { createConsoleStore } from '../../../src/tui/state/console-store.js';
import type { Settings } from '../../../src/runtime/settings/schema.js';
import { reply, replyText, toolUse } from '../../helpers/fake-api.js';
import {
  lastToolResults,
  lastUserTexts,
  openTeamHarness,
  systemText,
  toolNames,
  type TeamHarness,
  type TeamHarnessOptions,
} from '../../helpers/team-harness.js';
import { REPO_ROOT } from '../../helpers/run-cli.js';

const EVERYTHING_BIN = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(options: TeamHarnessOptions = {}): Promise<TeamHarness> {
  const h = await openTeamHarness(options);
  cleanups.push(() => h.close());
  return h;
}

async function everything(cwd: string): Promise<McpServers> {
  const mcp = await McpServers.start({ servers: { everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] } }, cwd });
  cleanups.push(() => mcp.close());
  expect(mcp.status()[0]?.state).toBe('ready');
  return mcp;
}

/** A hook command: bash running `script`, with the event's JSON on stdin as $input. */
function hook(script: string, matcher?: string) {
  return { ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command' as const, command: `input=$(cat); ${script}` }] };
}

/** The hook events logged so far, as [event, blocked] pairs, for one agent. */
function hookRuns(h: TeamHarness, agent: string): Array<[unknown, unknown]> {
  return h.events.filter((e) => e.agent === agent && e.type === 'hook').map((e) => [e.hook_event_name, e.blocked]);
}

describe('hooks in a team', () => {
  it('SessionStart context, UserPromptSubmit (context; a block drops the prompt), Stop (a block means one more turn)', async () => {
    const settings: Settings = {
      hooks: {
        SessionStart: [hook('echo "SESSION-CONTEXT-4411"')],
        UserPromptSubmit: [
          hook('if printf "%s" "$input" | grep -q forbidden; then echo "no forbidden prompts here" >&2; exit 2; fi; echo "PROMPT-CONTEXT-8812"'),
        ],
        Stop: [hook('if printf "%s" "$input" | grep -q \'"stop_hook_active":false\'; then echo "run the checks first" >&2; exit 2; fi')],
      },
    };
    const h = await open({ settings });
    h.fake.script('lead', replyText('First answer.'), replyText('Checked, all good.'));
    await h.team.sessionHook({ hook_event_name: 'SessionStart', source: 'startup' });
    h.team.start();
    h.team.lead.prompt('do the forbidden thing');
    await h.waitForEvent('the dropped prompt to be said', (e) => e.type === 'warning' && String(e.message).includes('no forbidden prompts here'));
    expect(h.team.lead.lastOutcome).toEqual({ kind: 'failed', error: 'the prompt was blocked by a UserPromptSubmit hook' });
    expect(h.fake.requests).toHaveLength(0);

    h.team.lead.prompt('hello');
    await h.waitFor('the lead to end its second turn', () => h.team.lead.lastText === 'Checked, all good.');
    const [first, second] = h.requestsOf('lead');
    expect(systemText(first!)).toContain('<session-start-context>\nSESSION-CONTEXT-4411\n</session-start-context>');
    expect(lastUserTexts(first!).join('\n')).toContain('hello\n\n<user-prompt-submit-hook>\nPROMPT-CONTEXT-8812\n</user-prompt-submit-hook>');
    expect(lastUserTexts(second!).join('\n')).toContain('A Stop hook kept you from ending your turn: run the checks first');
    expect(h.requestsOf('lead')).toHaveLength(2);
    expect(hookRuns(h, 'lead')).toEqual([
      ['SessionStart', false],
      ['UserPromptSubmit', true],
      ['UserPromptSubmit', false],
      ['Stop', true],
      ['Stop', false],
    ]);
  });

  it('TaskCompleted (exit 2 keeps the task open, stderr fed back), PostToolUse context, TeammateIdle (a block means one more turn)', async () => {
    const settings: Settings = {
      hooks: {
        TaskCompleted: [hook('if [ ! -f qa-signed-off ]; then echo "QA has not signed off" >&2; exit 2; fi')],
        PostToolUse: [hook('echo \'{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "POST-CONTEXT-31"}}\'', 'bash')],
        TeammateIdle: [hook('if [ ! -f .idle-once ]; then touch .idle-once; echo "look at the board once more" >&2; exit 2; fi')],
      },
    };
    const h = await open({ settings });
    h.fake.script(
      'alice',
      reply(toolUse('task_create', { subject: 'Ship it' }), toolUse('claim_task', { task_id: 1 }), toolUse('task_update', { task_id: 1, status: 'completed' })),
      reply(toolUse('bash', { command: 'touch qa-signed-off' }), toolUse('task_update', { task_id: 1, status: 'completed' })),
      replyText('Shipped.'),
      reply(toolUse('idle', {})),
    );
    await h.spawn('alice', 'Ship task 1.');
    await h.waitForStatus('alice', 'idle');
    const requests = h.requestsOf('alice');
    expect(lastToolResults(requests[1]!)[2]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('a TaskCompleted hook kept it open: QA has not signed off'),
    });
    const [bash, update] = lastToolResults(requests[2]!);
    expect(bash!.content).toContain('[PostToolUse hook context] POST-CONTEXT-31');
    expect(update).toMatchObject({ is_error: false, content: expect.stringContaining('in_progress → completed') });
    expect((await h.team.ctx.board.get(1)).status).toBe('completed');
    expect(lastUserTexts(requests[3]!).join('\n')).toContain('A TeammateIdle hook kept you from going idle: look at the board once more');
    expect(requests).toHaveLength(4);
    expect(hookRuns(h, 'alice')).toEqual([
      ['TaskCompleted', true],
      ['PostToolUse', false],
      ['TaskCompleted', false],
      ['TeammateIdle', true],
      ['TeammateIdle', false],
    ]);
  });

  it('PreToolUse JSON: a deny decision, a rewritten input, and "ask" put to the person', async () => {
    const settings: Settings = {
      hooks: {
        PreToolUse: [
          hook(
            'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no globbing today"}}\'',
            'glob',
          ),
          hook(
            'if printf "%s" "$input" | grep -q original; then echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo rewritten"}}}\'; fi',
            'bash',
          ),
          hook(
            'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "a release note"}}\'',
            'Write',
          ),
        ],
      },
    };
    const h = await open({ settings, env: { HUDDLE_PERMISSION_MODE: 'auto' } });
    const detach = h.team.approvals.attachAnswerer();
    cleanups.push(detach);
    h.fake.script(
      'lead',
      reply(toolUse('glob', { pattern: '*' }), toolUse('bash', { command: 'echo original' }), toolUse('write_file', { path: 'NOTES.md', content: 'v1\n' })),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('go');
    const asked = await h.waitForEvent('the write to be put to the person', (e) => e.type === 'approval_requested');
    expect(asked).toMatchObject({ tool: 'write_file', reason: 'a PreToolUse hook asks you to confirm this: a release note' });
    expect(existsSync(path.join(h.root, 'NOTES.md'))).toBe(false);
    h.team.approvals.resolve(String(asked.id), 'approve');
    await h.waitFor('the lead to finish', () => h.team.lead.lastText === 'Done.');
    const [glob, bash, write] = lastToolResults(h.requestsOf('lead')[1]!);
    expect(glob).toMatchObject({ is_error: true, content: 'glob was not run: a PreToolUse hook blocked it: no globbing today' });
    expect(bash!.content).toContain('rewritten');
    expect(bash!.content).not.toContain('original');
    expect(write!.is_error).toBe(false);
    expect(readFileSync(path.join(h.root, 'NOTES.md'), 'utf8')).toBe('v1\n');
  });

  it('PreCompact runs before a summary is written, with the trigger and the focus', async () => {
    const h = await open({ settings: { hooks: { PreCompact: [hook('printf "%s" "$input" > precompact.json')] } } });
    h.fake.script('lead', replyText('Hello.'), replyText('SUMMARY: said hello.'));
    h.team.start();
    h.team.lead.prompt('hi');
    await h.waitFor('the first turn', () => h.team.lead.lastText === 'Hello.');
    const outcome = await h.session.compact('lead', 'keep the greeting');
    expect(outcome.deferred).toBe(false);
    expect(JSON.parse(readFileSync(path.join(h.root, 'precompact.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PreCompact',
      trigger: 'manual',
      custom_instructions: 'keep the greeting',
      agent: 'lead',
      cwd: h.root,
      session_id: 'test-session',
    });
  });
});

describe('roles and MCP tools', () => {
  it('settings roles win over the role file; tools and denyTools pick built-in and MCP tools by pattern, for teammates and the lead', async () => {
    const mcp = await everything(os.tmpdir());
    const h = await open({
      settings: {
        roles: {
          coder: { model: 'claude-role-model', tools: ['read_file', 'mcp__everything'], denyTools: ['mcp__everything__get-sum'] },
          lead: { denyTools: ['mcp__everything__*', 'bash'] },
        },
      },
      mcp,
    });
    mkdirSync(path.join(h.root, '.team', 'roles'), { recursive: true });
    writeFileSync(path.join(h.root, '.team', 'roles', 'coder.md'), '---\nmodel: claude-file-model\ntools: [bash, write_file]\n---\nYou code.\n');
    h.fake.script('alice', reply(toolUse('mcp__everything__echo', { message: 'hi' })), reply(toolUse('idle', {})));
    h.fake.script('lead', replyText('ok'));
    await h.spawn('alice', 'Echo hi.');
    await h.waitForStatus('alice', 'idle');
    const first = h.requestsOf('alice')[0]!;
    expect(first.body.model).toBe('claude-role-model');
    const tools = toolNames(first);
    expect(tools).toEqual(
      expect.arrayContaining([
        'read_file',
        'mcp__everything__echo',
        'mcp__everything__get-tiny-image',
        'idle',
        'send_message',
        'read_inbox',
        'shutdown_response',
      ]),
    );
    for (const gone of ['bash', 'write_file', 'mcp__everything__get-sum', 'task_update']) expect(tools).not.toContain(gone);
    expect(lastToolResults(h.requestsOf('alice')[1]!)[0]).toMatchObject({ is_error: false, content: 'Echo: hi' });

    h.team.start();
    h.team.lead.prompt('hi');
    await h.waitFor('the lead to answer', () => h.team.lead.lastText === 'ok');
    const leadTools = toolNames(h.requestsOf('lead')[0]!);
    expect(leadTools).toEqual(expect.arrayContaining(['read_file', 'spawn_teammate', 'send_message']));
    expect(leadTools.filter((name) => name.startsWith('mcp__') || name === 'bash')).toEqual([]);
  });

  it('plan mode: only tools the server marks read-only are offered before approval, and others are refused; ask mode puts them to the person', async () => {
    const mcp = await everything(os.tmpdir());
    const h = await open({ mcp, env: { HUDDLE_PERMISSION_MODE: 'ask' } });
    const detach = h.team.approvals.attachAnswerer();
    cleanups.push(detach);

    // A plan-mode teammate before its plan is approved: read-only MCP tools only.
    h.fake.script('planner', reply(toolUse('idle', {})));
    await h.spawn('planner', 'Plan it.', { planModeRequired: true });
    await h.waitForStatus('planner', 'idle');
    const planTools = toolNames(h.requestsOf('planner')[0]!);
    expect(planTools).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    expect(planTools).not.toContain('mcp__everything__toggle-simulated-logging');

    // In permission mode plan, a tool the server does not mark read-only is refused.
    h.fake.script('reader', reply(toolUse('mcp__everything__toggle-simulated-logging', {})), reply(toolUse('idle', {})));
    await h.spawn('reader', 'Toggle logging.', { permissionMode: 'plan' });
    await h.waitForStatus('reader', 'idle');
    expect(lastToolResults(h.requestsOf('reader')[1]!)[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('refused in plan mode (read-only): mcp__everything__toggle-simulated-logging is not marked read-only'),
    });

    // In ask mode it waits for the person; read-only ones do not.
    h.fake.script(
      'lead',
      reply(toolUse('mcp__everything__echo', { message: 'x' }), toolUse('mcp__everything__toggle-simulated-logging', {})),
      replyText('Done.'),
    );
    h.team.start();
    h.team.lead.prompt('go');
    const asked = await h.waitForEvent('the MCP call to be put to the person', (e) => e.type === 'approval_requested' && e.agent === 'lead');
    expect(asked).toMatchObject({ tool: 'mcp__everything__toggle-simulated-logging', prefixes: ['mcp__everything__toggle-simulated-logging'] });
    h.team.approvals.resolve(String(asked.id), 'always');
    await h.waitFor('the lead to finish', () => h.team.lead.lastText === 'Done.');
    const [echo, toggle] = lastToolResults(h.requestsOf('lead')[1]!);
    expect(echo).toMatchObject({ is_error: false, content: 'Echo: x' });
    expect(toggle).toMatchObject({ is_error: false, content: expect.stringMatching(/simulated.*logging/i) });
    // Allowed for good: in the personal settings, as the tool's name.
    expect(JSON.parse(readFileSync(path.join(h.root, '.team', 'settings.local.json'), 'utf8'))).toEqual({
      permissions: { allow: ['mcp__everything__toggle-simulated-logging'] },
    });
  });
});

describe('verify results on the board', () => {
  it("the last verify run of each task is on the session's board (and /tasks shows it), and tells the console the board changed", async () => {
    const h = await open({ settings: { verify: { roles: { lead: 'test -f ok || { echo not yet; exit 3; }' } } } });
    let changes = 0;
    cleanups.push(h.session.onTasksChanged(() => (changes += 1)));
    h.fake.script(
      'lead',
      reply(
        toolUse('task_create', { subject: 'Make ok' }),
        toolUse('task_create', { subject: 'Later', verify: 'true' }),
        toolUse('claim_task', { task_id: 1 }),
        toolUse('task_update', { task_id: 1, status: 'completed' }),
      ),
      replyText('Not yet.'),
    );
    h.team.start();
    h.team.lead.prompt('go');
    await h.waitFor('the turn to end', () => h.team.lead.lastText === 'Not yet.');
    const before = changes;
    const tasks = await h.session.tasks();
    expect(tasks[0]).toMatchObject({
      status: 'in_progress',
      verify_result: { ok: false, summary: expect.stringMatching(/^verify failed: test -f ok .*\(exit 3, /) },
    });
    expect(tasks[1]!.verify_result).toBeUndefined();
    expect(before).toBeGreaterThan(0);

    const store = createConsoleStore({ model: 'm', endpoint: 'e' });
    store.setState({ tasks });
    const lines = renderToString(createElement(TaskBoardView, { store, width: 160, height: 10 }), { columns: 160 }).split('\n');
    expect(lines.find((line) => line.startsWith('1 '))).toMatch(/in_progress\s+Make ok\s+lead\s+-\s+✗ verify failed: test -f ok/);
    expect(lines.find((line) => line.startsWith('2 '))).toMatch(/pending\s+Later\s+-\s+-\s+verify: true$/);
  });
});

describe('project instructions in a team', () => {
  it('an edit to CLAUDE.md reaches the agent at its next model call, and a compaction keeps them', async () => {
    const h = await open({ memory: { home: path.join(path.sep, 'nonexistent-home') } });
    writeFileSync(path.join(h.root, 'CLAUDE.md'), 'MARKER-BEFORE-1\n');
    h.fake.script(
      'lead',
      reply(toolUse('bash', { command: 'printf "MARKER-AFTER-22\\n" > CLAUDE.md' })),
      replyText('Edited.'),
      replyText('SUMMARY.'),
      replyText('Still here.'),
    );
    h.team.start();
    h.team.lead.prompt('edit it');
    await h.waitFor('the edit turn', () => h.team.lead.lastText === 'Edited.');
    const [before, after] = h.requestsOf('lead');
    expect(systemText(before!)).toContain('MARKER-BEFORE-1');
    expect(systemText(after!)).toContain('MARKER-AFTER-22');
    expect(systemText(after!)).not.toContain('MARKER-BEFORE-1');
    await h.session.compact('lead');
    h.team.lead.prompt('still there?');
    await h.waitFor('the turn after the compaction', () => h.team.lead.lastText === 'Still here.');
    const last = h.requestsOf('lead').at(-1)!;
    expect(lastUserTexts(last).join('\n')).toContain('<identity>');
    expect(systemText(last)).toContain('MARKER-AFTER-22');
  });
});
