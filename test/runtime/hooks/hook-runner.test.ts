import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookRunner, hookEventFields, type HookRunnerOptions } from '../../../src/runtime/hooks/hook-runner.js';
import { plainSpawn, type SpawnLike } from '../../../src/runtime/process/spawn.js';
import type { HooksSettings } from '../../../src/runtime/settings/schema.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project with an agent workspace inside, and a helper that writes executable hook scripts. */
function project() {
  const root = mkdtempSync(path.join(tmpdir(), 'huddle-hooks-'));
  dirs.push(root);
  const workspace = path.join(root, '.team', 'worktrees', 'alice');
  mkdirSync(workspace, { recursive: true });
  const script = (name: string, body: string) => {
    const file = path.join(root, 'hooks', name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  };
  const runner = (hooks: HooksSettings, extra: Partial<HookRunnerOptions> = {}) =>
    new HookRunner({ hooks, sessionId: 'session-1', projectDir: root, ...extra });
  return { root, workspace, script, runner };
}

const command = (cmd: string, timeout?: number) => ({ type: 'command' as const, command: cmd, ...(timeout ? { timeout } : {}) });

describe('hooks: Claude Code schema and semantics', () => {
  it('a PreToolUse hook that exits 2 for a path blocks the call, its stderr the reason', async () => {
    const { workspace, script, runner } = project();
    const guard = script(
      'guard.sh',
      `input=$(cat)\ncase "$input" in *'"path":"secrets/'*) echo "writes to secrets/ are not allowed" >&2; exit 2;; esac\nexit 0`,
    );
    const hooks = runner({ PreToolUse: [{ matcher: 'write_file|edit_file', hooks: [command(guard)] }] });
    const context = { agent: 'alice', cwd: workspace };

    const blocked = await hooks.run({ hook_event_name: 'PreToolUse', tool_name: 'write_file', tool_input: { path: 'secrets/key.txt', content: 'x' } }, context);
    expect(blocked).toMatchObject({ ran: true, blocked: true, reason: 'writes to secrets/ are not allowed', messages: [] });
    expect(blocked.runs).toEqual([expect.objectContaining({ command: guard, status: 'blocked', exitCode: 2 })]);

    const allowed = await hooks.run({ hook_event_name: 'PreToolUse', tool_name: 'write_file', tool_input: { path: 'src/a.ts', content: 'x' } }, context);
    expect(allowed).toMatchObject({ ran: true, blocked: false });
    const other = await hooks.run({ hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'cat secrets/"path":"secrets/' } }, context);
    expect(other).toMatchObject({ ran: false, blocked: false });
    expect(hookEventFields(blocked)).toMatchObject({ hook_event_name: 'PreToolUse', blocked: true, runs: [{ status: 'blocked', exit_code: 2 }] });
  });

  it('"vocabulary": "claude-code" hooks read Write {file_path}, Bash {command}; huddle\'s own keep write_file {path}; an updatedInput comes back in huddle\'s fields', async () => {
    const { root, workspace, script, runner } = project();
    const record = (name: string) => script(`${name}.sh`, `cat >> "$HUDDLE_PROJECT_DIR/${name}.jsonl"`);
    const rewrite = script(
      'rewrite.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"${workspace}/b.txt","content":"y"}}}'`,
    );
    const hooks = runner({
      PreToolUse: [
        {
          matcher: 'Write',
          hooks: [
            { ...command(record('claude')), vocabulary: 'claude-code' },
            { ...command(rewrite), vocabulary: 'claude-code' },
          ],
        },
        { matcher: 'Write', hooks: [command(record('huddle'))] },
      ],
    });
    const outcome = await hooks.run(
      { hook_event_name: 'PreToolUse', tool_name: 'write_file', tool_input: { path: 'a.txt', content: 'x' }, tool_use_id: 'toolu_1' },
      { agent: 'alice', cwd: workspace, permissionMode: 'auto' },
    );
    const read = (name: string) => JSON.parse(readFileSync(path.join(root, `${name}.jsonl`), 'utf8')) as Record<string, unknown>;
    expect(read('claude')).toMatchObject({
      tool_name: 'Write',
      tool_input: { file_path: path.join(workspace, 'a.txt'), content: 'x' },
      tool_use_id: 'toolu_1',
      permission_mode: 'bypassPermissions',
      hook_event_name: 'PreToolUse',
      session_id: 'session-1',
      cwd: workspace,
    });
    expect(read('huddle')).toMatchObject({ tool_name: 'write_file', tool_input: { path: 'a.txt', content: 'x' }, permission_mode: 'auto' });
    expect(outcome.updatedInput).toEqual({ path: path.join(workspace, 'b.txt'), content: 'y' });
  });

  it("gets the event as JSON on stdin, runs in the agent workspace, and never sees huddle's secrets", async () => {
    const { root, workspace, script, runner } = project();
    const record = script('record.sh', 'cat > "$HUDDLE_PROJECT_DIR/stdin.json"; pwd > "$CLAUDE_PROJECT_DIR/cwd.txt"; env > "$HUDDLE_PROJECT_DIR/env.txt"');
    const hooks = runner({ PostToolUse: [{ matcher: 'mcp__.*', hooks: [command(record)] }] });
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-must-not-leak';
    try {
      const outcome = await hooks.run(
        {
          hook_event_name: 'PostToolUse',
          tool_name: 'mcp__everything__echo',
          tool_input: { message: 'hi' },
          tool_response: 'Echo: hi',
          tool_use_id: 'toolu_1',
        },
        { agent: 'alice', cwd: workspace, permissionMode: 'auto' },
      );
      expect(outcome).toMatchObject({ ran: true, blocked: false, messages: [] });
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(JSON.parse(readFileSync(path.join(root, 'stdin.json'), 'utf8'))).toEqual({
      hook_event_name: 'PostToolUse',
      session_id: 'session-1',
      cwd: workspace,
      agent: 'alice',
      permission_mode: 'auto',
      tool_name: 'mcp__everything__echo',
      tool_input: { message: 'hi' },
      tool_response: 'Echo: hi',
      tool_use_id: 'toolu_1',
    });
    expect(readFileSync(path.join(root, 'cwd.txt'), 'utf8').trim()).toBe(workspace);
    const env = readFileSync(path.join(root, 'env.txt'), 'utf8');
    expect(env).toContain('HUDDLE_AGENT=alice');
    expect(env).toContain('HUDDLE_HOOK_EVENT=PostToolUse');
    expect(env).not.toContain('sk-ant-must-not-leak');
  });

  it('reads JSON decisions: permissionDecision (deny > ask > allow), updatedInput, decision block, continue false', async () => {
    const { workspace, script, runner } = project();
    const say = (name: string, json: unknown) => script(name, `cat > /dev/null; echo '${JSON.stringify(json)}'`);
    const allow = say('allow.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'ls -la' } } });
    const ask = say('ask.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'check this one' } });
    const deny = say('deny.sh', {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not on Fridays' },
    });
    const context = { agent: 'lead', cwd: workspace };
    const input = { hook_event_name: 'PreToolUse' as const, tool_name: 'bash', tool_input: { command: 'ls' } };

    expect(await runner({ PreToolUse: [{ matcher: 'Bash', hooks: [command(allow)] }] }).run(input, context)).toMatchObject({
      blocked: false,
      permissionDecision: 'allow',
      updatedInput: { command: 'ls -la' },
    });
    expect(await runner({ PreToolUse: [{ hooks: [command(allow), command(ask)] }] }).run(input, context)).toMatchObject({
      blocked: false,
      permissionDecision: 'ask',
      permissionDecisionReason: 'check this one',
    });
    expect(await runner({ PreToolUse: [{ matcher: '*', hooks: [command(allow), command(ask), command(deny)] }] }).run(input, context)).toMatchObject({
      blocked: true,
      reason: 'not on Fridays',
      permissionDecision: 'deny',
    });

    const keepGoing = say('stop.sh', { decision: 'block', reason: 'the tests do not pass yet' });
    expect(await runner({ Stop: [{ hooks: [command(keepGoing)] }] }).run({ hook_event_name: 'Stop', stop_hook_active: false }, context)).toMatchObject({
      blocked: true,
      reason: 'the tests do not pass yet',
    });
    const halt = say('halt.sh', { continue: false, stopReason: 'budget review', systemMessage: 'halted by policy' });
    expect(
      await runner({ PostToolUse: [{ hooks: [command(halt)] }] }).run(
        { hook_event_name: 'PostToolUse', tool_name: 'bash', tool_input: {}, tool_response: '' },
        context,
      ),
    ).toMatchObject({
      blocked: false,
      stop: 'budget review',
      messages: ['halted by policy'],
    });
  });

  it('TaskCompleted exit 2 keeps the task open; TeammateIdle exit 2 keeps the teammate working', async () => {
    const { workspace, script, runner } = project();
    const gate = script('gate.sh', 'input=$(cat); case "$input" in *\'"task_id":7\'*) echo "task 7 needs a changelog entry" >&2; exit 2;; esac');
    const hooks = runner({
      TaskCompleted: [{ hooks: [command(gate)] }],
      TeammateIdle: [{ hooks: [command('cat > /dev/null; echo "claim task 3 first" >&2; exit 2')] }],
    });
    const task = (id: number) => ({
      hook_event_name: 'TaskCompleted' as const,
      task_id: id,
      task_subject: 'Add flag',
      teammate_name: 'alice',
      team_name: 'demo',
      task: { id, subject: 'Add flag', status: 'in_progress', owner: 'alice' },
    });
    expect(await hooks.run(task(7), { agent: 'alice', cwd: workspace })).toMatchObject({ blocked: true, reason: 'task 7 needs a changelog entry' });
    expect(await hooks.run(task(8), { agent: 'alice', cwd: workspace })).toMatchObject({ blocked: false });
    expect(await hooks.run({ hook_event_name: 'TeammateIdle', teammate_name: 'alice', team_name: 'demo' }, { agent: 'alice', cwd: workspace })).toMatchObject({
      blocked: true,
      reason: 'claim task 3 first',
    });
  });

  it('plain stdout is context for SessionStart and UserPromptSubmit; exit 2 there drops the prompt', async () => {
    const { workspace, runner } = project();
    const hooks = runner({
      SessionStart: [{ matcher: 'startup', hooks: [command('echo "Current branch: main"')] }],
      UserPromptSubmit: [{ hooks: [command('grep -q password && { echo "prompt mentions a password" >&2; exit 2; } || echo "ticket: HUD-1"')] }],
    });
    const context = { agent: 'lead', cwd: workspace };
    expect(await hooks.run({ hook_event_name: 'SessionStart', source: 'startup' }, context)).toMatchObject({ additionalContext: 'Current branch: main' });
    expect(await hooks.run({ hook_event_name: 'SessionStart', source: 'resume' }, context)).toMatchObject({ ran: false });
    expect(await hooks.run({ hook_event_name: 'UserPromptSubmit', prompt: 'fix the build' }, context)).toMatchObject({
      blocked: false,
      additionalContext: 'ticket: HUD-1',
    });
    expect(await hooks.run({ hook_event_name: 'UserPromptSubmit', prompt: 'my password is hunter2' }, context)).toMatchObject({
      blocked: true,
      reason: 'prompt mentions a password',
    });
  });

  it('a failing, missing or slow hook is reported and never fatal; exit 2 cannot block what cannot be blocked', async () => {
    const { workspace, runner } = project();
    const hooks = runner({
      Notification: [{ hooks: [command('cat >/dev/null; echo "ntfy is down" >&2; exit 1'), command('no-such-notifier --now'), command('sleep 300', 0.2)] }],
      SessionEnd: [{ hooks: [command('echo "cannot stop the end" >&2; exit 2')] }],
    });
    const context = { agent: 'lead', cwd: workspace };
    const notified = await hooks.run({ hook_event_name: 'Notification', message: 'alice needs approval', notification_type: 'approval' }, context);
    expect(notified.blocked).toBe(false);
    expect(notified.messages).toEqual([
      'Notification hook \'cat >/dev/null; echo "ntfy is down" >&2; exit 1\' failed: exit 1: ntfy is down',
      expect.stringMatching(/^Notification hook 'no-such-notifier --now' failed: exit 127: .*no-such-notifier: command not found$/),
      "Notification hook 'sleep 300' failed: timed out after 0.2 s and was killed",
    ]);
    const ended = await hooks.run({ hook_event_name: 'SessionEnd', reason: 'exit' }, context);
    expect(ended).toMatchObject({
      blocked: false,
      messages: ['SessionEnd hook \'echo "cannot stop the end" >&2; exit 2\' failed: exit 2 (SessionEnd cannot be blocked): cannot stop the end'],
    });
  });

  it('runs through the injected spawn, runs a command configured twice once, and reports a broken matcher once', async () => {
    const { workspace, runner } = project();
    let spawned = 0;
    const spawn: SpawnLike = (cmd, args, options) => {
      spawned += 1;
      return plainSpawn(cmd, args, options);
    };
    const hooks = runner(
      {
        PreToolUse: [
          { matcher: 'bash', hooks: [command('cat > /dev/null')] },
          { matcher: '.*', hooks: [command('cat > /dev/null')] },
          { matcher: '(unclosed', hooks: [command('exit 2')] },
        ],
      },
      { spawn },
    );
    expect(hooks.configErrors).toEqual([
      expect.stringMatching(/^hooks\.PreToolUse\[2\]: matcher "\(unclosed" is not a valid regular expression .*; its hooks never run$/),
    ]);
    const outcome = await hooks.run({ hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'ls' } }, { agent: 'lead', cwd: workspace });
    expect(outcome).toMatchObject({ blocked: false, runs: [expect.objectContaining({ status: 'ok' })] });
    expect(spawned).toBe(1);
  });
});

describe('hooks: no registered secret in what they say', () => {
  it('a hook that prints a secret (context, reason) gives it to nobody', async () => {
    const { registerSecret } = await import('../../../src/runtime/secrets.js');
    const SECRET = 'hook-Secret-8181-value';
    registerSecret(SECRET);
    const { workspace, script, runner } = project();
    const leaky = script(
      'leaky.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"db pw ${SECRET}"},"systemMessage":"${SECRET}"}'`,
    );
    const blocker = script('blocker.sh', `echo "no: ${SECRET}" >&2; exit 2`);
    const context = { agent: 'alice', cwd: workspace };
    const post = await runner({ PostToolUse: [{ hooks: [command(leaky)] }] }).run(
      { hook_event_name: 'PostToolUse', tool_name: 'bash', tool_input: { command: 'x' }, tool_response: 'ok' } as never,
      context,
    );
    expect(post.additionalContext).toBe('db pw [redacted]');
    const pre = await runner({ PreToolUse: [{ hooks: [command(blocker)] }] }).run(
      { hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'x' } },
      context,
    );
    expect(pre.blocked).toBe(true);
    expect(JSON.stringify([post, pre])).not.toContain(SECRET);
  });
});
