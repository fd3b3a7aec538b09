// The tool pipeline's steps one at a time (src/agents/tools/tool-pipeline.ts), with the real parts: hook
// scripts run by the HookRunner, the PermissionGate with its command policy, a file board and a verify
// command, git checkpoints of a real repository. The tools are made up for each test and declare their
// effects under names the steps could not recognise: the steps go by the declaration.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AFTER_RUN,
  BEFORE_RUN,
  checkpoint,
  completionGate,
  completionNote,
  permissionGate,
  permissionRules,
  postToolUseHooks,
  preToolUseHooks,
  repairGit,
  runCall,
  sessionSandbox,
  throughPipeline,
  type Call,
} from '../../../src/agents/tools/tool-pipeline.js';
import { TeamHooks } from '../../../src/agents/tools/team-hooks.js';
import { EventHub } from '../../../src/runtime/events/events.js';
import { HookRunner } from '../../../src/runtime/hooks/hook-runner.js';
import { PermissionGate } from '../../../src/runtime/permissions/permission-gate.js';
import type { PermissionMode } from '../../../src/runtime/permissions/permission-mode.js';
import type { SandboxStatus } from '../../../src/runtime/sandbox/status.js';
import { ApprovalQueue } from '../../../src/runtime/store/memory-approvals.js';
import { FileBoard } from '../../../src/runtime/store/file/board/file-board.js';
import { Checkpoints } from '../../../src/runtime/workspace/checkpoints.js';
import type { Tool, ToolContext, ToolEffect, ToolResult } from '../../../src/runtime/tools/types.js';
import { TEST_GIT_IDENTITY } from '../../helpers/git-identity.js';
import { makeToolContext } from '../../helpers/tool-context.js';

let root: string;
let teamRoot: string;
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'huddle-pipeline-'));
  process.env.XDG_STATE_HOME = path.join(root, 'state');
  teamRoot = path.join(root, 'team');
  mkdirSync(teamRoot);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A made-up tool: what it was called with is kept in `seen`. */
function tool(
  name: string,
  effects: ToolEffect[] | undefined,
  run: (input: Record<string, unknown>, context: ToolContext) => Promise<string | ToolResult> = async () => 'ran',
) {
  const seen: Array<{ input: Record<string, unknown>; context: ToolContext }> = [];
  const made: Tool = {
    name,
    description: name,
    input: z.record(z.string(), z.unknown()),
    ...(effects ? { effects } : {}),
    run: async (input, context) => {
      seen.push({ input: input as Record<string, unknown>, context });
      return run(input as Record<string, unknown>, context);
    },
  };
  return { tool: made, seen };
}

function callOf(made: Tool, input: Record<string, unknown>, context: ToolContext = makeToolContext(teamRoot, { agent: 'alice' })): Call {
  return { tool: made, input, context };
}

/** A permission gate whose agents all run in `mode`, with nobody to ask. */
function gate(mode: PermissionMode): PermissionGate {
  return new PermissionGate({
    teamRoot,
    allowList: { read: () => ({ entries: [] }), add: async () => [] },
    approvals: new ApprovalQueue(new EventHub()),
    configuredMode: () => mode,
  });
}

/** The hooks of `settings`, their scripts written under the test's root. */
function hooks(event: 'PreToolUse' | 'PostToolUse', body: string): TeamHooks {
  const file = path.join(root, `${event}-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(file, 0o755);
  return new TeamHooks(
    new HookRunner({ hooks: { [event]: [{ matcher: '.*', hooks: [{ type: 'command', command: file }] }] }, sessionId: 's', projectDir: root }),
  );
}

const OFF: SandboxStatus = { available: false, onPurpose: false, reason: 'made up for the test', line: 'sandbox: off' };

describe('the tool pipeline', () => {
  it('runs its steps in the order the file lists them', () => {
    expect(BEFORE_RUN).toEqual([sessionSandbox, preToolUseHooks, permissionRules, completionGate, permissionGate, checkpoint]);
    expect(AFTER_RUN).toEqual([repairGit, completionNote, postToolUseHooks]);
  });

  it("2b. permission rules: a deny refuses in auto mode, whatever the tool's effects; an ask with nobody to answer is refused; a hook's allow does not carve around a deny", async () => {
    const rules = (lists: { deny?: string[]; ask?: string[] }) =>
      new PermissionGate({
        teamRoot,
        allowList: { read: () => ({ entries: [] }), add: async () => [] },
        approvals: new ApprovalQueue(new EventHub()),
        configuredMode: () => 'auto',
        toolRules: () => lists,
      });
    const reader = tool('read_file', ['read']);
    const denied = await runCall(reader.tool, { path: 'secrets/key' }, makeToolContext(teamRoot), {
      teamRoot,
      permissions: rules({ deny: ['Read(./secrets/**)'] }),
    });
    expect(denied).toMatchObject({ isError: true, content: expect.stringContaining("the permission rule 'Read(./secrets/**)' (permissions.deny)") });
    expect(reader.seen).toHaveLength(0);
    expect(
      await runCall(reader.tool, { path: 'src/a.ts' }, makeToolContext(teamRoot), { teamRoot, permissions: rules({ deny: ['Read(./secrets/**)'] }) }),
    ).toEqual({
      content: 'ran',
    });
    const shell = tool('bash', ['shell']);
    const asked = await runCall(shell.tool, { command: 'git push' }, makeToolContext(teamRoot), {
      teamRoot,
      permissions: rules({ ask: ['Bash(git push:*)'] }),
    });
    expect(asked).toMatchObject({ isError: true, content: expect.stringContaining('which a headless run cannot ask for') });
    const allowing = hooks('PreToolUse', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`);
    const stillDenied = await runCall(shell.tool, { command: 'rm -rf x' }, makeToolContext(teamRoot), {
      teamRoot,
      hooks: allowing,
      permissions: rules({ deny: ['Bash(rm:*)'] }),
    });
    expect(stillDenied.isError).toBe(true);
    expect(shell.seen).toHaveLength(0);
  });

  it('1. the session sandbox: the status read when the session opened reaches the tool, and the permission gate reads it there', async () => {
    const { tool: made, seen } = tool('anything', ['read']);
    await runCall(made, {}, makeToolContext(teamRoot), { teamRoot, sandbox: OFF });
    expect(seen[0]!.context.sandbox).toBe(OFF);

    // A worktree teammate in auto mode runs commands only in a sandbox: with the session's "off" it is
    // refused, whatever this machine has.
    const worktree = path.join(root, 'worktree');
    mkdirSync(worktree, { recursive: true });
    const shell = tool('run_it', ['shell']);
    const result = await runCall(shell.tool, { command: 'ls' }, makeToolContext(worktree, { agent: 'bob' }), {
      teamRoot,
      sandbox: OFF,
      permissions: gate('auto'),
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('runs commands in auto mode only inside the sandbox, and there is none (made up for the test)');
    expect(shell.seen).toEqual([]);
  });

  it('a call prepared ahead (Tool.prepare) sees the session sandbox and the mode its run will, and prepares nothing the run decides', async () => {
    const prepared: ToolContext[] = [];
    const shell: Tool = { ...tool('run_it', ['shell']).tool, prepare: (_input, context) => prepared.push(context) };
    const [wrapped] = throughPipeline([shell], { teamRoot, sandbox: OFF, permissions: gate('plan') });
    wrapped!.prepare!({ command: 'ls' }, makeToolContext(teamRoot, { agent: 'alice' }));
    expect(prepared.map((context) => [context.agent, context.sandbox, context.permissionMode])).toEqual([['alice', OFF, 'plan']]);
    // A tool with nothing to prepare stays without.
    expect(throughPipeline([tool('quiet', ['read']).tool], { teamRoot })[0]!.prepare).toBeUndefined();
  });

  it('2. PreToolUse hooks: a block ends the call with the reason; updatedInput replaces the input; an invalid one refuses', async () => {
    const blocking = hooks('PreToolUse', 'echo "not today" >&2; exit 2');
    const { tool: made, seen } = tool('anything', ['read']);
    expect(await preToolUseHooks(callOf(made, {}), { teamRoot, hooks: blocking })).toEqual({
      content: 'anything was not run: a PreToolUse hook blocked it: not today',
      isError: true,
    });
    expect(seen).toEqual([]);

    const rewriting = hooks('PreToolUse', `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"path": "b.txt"}}}'`);
    const call = callOf(made, { path: 'a.txt' });
    expect(await preToolUseHooks(call, { teamRoot, hooks: rewriting })).toBeUndefined();
    expect(call.input).toEqual({ path: 'b.txt' });

    const strict = { ...made, input: z.object({ path: z.string() }) };
    const invalid = hooks('PreToolUse', `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"path": 3}}}'`);
    const refused = await preToolUseHooks(callOf(strict, { path: 'a.txt' }), { teamRoot, hooks: invalid });
    expect(refused?.content).toMatch(/^anything was not run: a PreToolUse hook changed its input into one that is not valid/);
  });

  it('3 and 8. the completion gate: a failing verify command keeps the task open; a passing one goes with the result', async () => {
    const board = new FileBoard(path.join(root, 'board'));
    const completion = { board, roster: { get: () => undefined }, teamName: 't', settings: () => undefined };
    const failing = await board.create({ subject: 'fails', verify: 'echo broken; exit 1' });
    const passing = await board.create({ subject: 'passes', verify: 'echo fine' });
    for (const task of [failing, passing]) await board.claim(task.id, 'lead');
    const update = tool('task_update', ['board']).tool;
    const context = makeToolContext(teamRoot, { agent: 'lead' });

    const refused = await completionGate(callOf(update, { task_id: failing.id, status: 'completed' }, context), { teamRoot, completion });
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toContain('broken');

    const call = callOf(update, { task_id: passing.id, status: 'completed' }, context);
    expect(await completionGate(call, { teamRoot, completion })).toBeUndefined();
    expect(call.completionNote).toMatch(/passed/);
    expect(await completionNote(call, { content: 'task updated' }, { teamRoot })).toEqual({ content: `task updated (${call.completionNote})` });
    board.close();
  });

  it('4. the permission gate goes by the declared effects, not the name, and puts the mode in the context', async () => {
    const plan = gate('plan');
    // Named like nothing huddle knows, declared `write`: plan mode refuses it as a write.
    const writer = tool('scribble', ['write']).tool;
    expect((await permissionGate(callOf(writer, { path: 'a.txt', content: 'x' }), { teamRoot, permissions: plan }))?.content).toMatch(
      /^refused in plan mode \(read-only\): scribble is not available/,
    );
    // Named bash, declared `read`: nothing to check.
    const reader = callOf(tool('bash', ['read']).tool, { command: 'rm -rf /' });
    expect(await permissionGate(reader, { teamRoot, permissions: plan })).toBeUndefined();
    expect(reader.context.permissionMode).toBe('plan');
    // Declared `shell`: the command policy's deny-list holds in auto mode too.
    const shell = tool('run_it', ['shell']).tool;
    expect((await permissionGate(callOf(shell, { command: 'rm -rf /' }), { teamRoot, permissions: gate('auto') }))?.isError).toBe(true);
    // `external` (an MCP tool not marked read-only), and a tool that declares nothing: refused in plan mode.
    for (const made of [tool('mcp__s__t', ['external']).tool, tool('undeclared', undefined).tool]) {
      expect((await permissionGate(callOf(made, {}), { teamRoot, permissions: plan }))?.content).toContain('is not marked read-only by its MCP server');
    }
  });

  it('4b. the allow-list is read for an ask-mode command only, afresh each time: an entry lets it run; auto and plan never read it', async () => {
    let reads = 0;
    let entries: string[] = [];
    const inMode = (mode: PermissionMode) =>
      new PermissionGate({
        teamRoot,
        allowList: { read: () => (reads++, { entries }), add: async () => [] },
        approvals: new ApprovalQueue(new EventHub()),
        configuredMode: () => mode,
      });
    const deploy = () => callOf(tool('bash', ['shell']).tool, { command: 'make deploy' });
    expect((await permissionGate(deploy(), { teamRoot, permissions: inMode('ask') }))?.content).toContain('which a headless run cannot ask for');
    entries = ['make deploy'];
    expect(await permissionGate(deploy(), { teamRoot, permissions: inMode('ask') })).toBeUndefined();
    expect(reads).toBe(2);
    expect(await permissionGate(deploy(), { teamRoot, permissions: inMode('auto') })).toBeUndefined();
    expect((await permissionGate(deploy(), { teamRoot, permissions: inMode('plan') }))?.content).toMatch(/^refused in plan mode/);
    expect(reads).toBe(2);
  });

  describe('5 and 7. checkpoints and the repository', () => {
    beforeAll(() => {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: teamRoot, env: { ...process.env, ...TEST_GIT_IDENTITY } });
      git('init', '-q');
      writeFileSync(path.join(teamRoot, 'a.txt'), 'a\n');
      git('add', '.');
      git('commit', '-qm', 'first');
    });

    it('a checkpoint before a call declared write or shell, none before one that reads, none in plan mode', async () => {
      const store = Checkpoints.for(teamRoot);
      const before = (await store.list()).length;
      await checkpoint(callOf(tool('scribble', ['write']).tool, { path: 'a.txt' }), { teamRoot });
      expect((await store.list()).length).toBe(before + 1);
      await checkpoint(callOf(tool('look', ['read']).tool, {}), { teamRoot });
      const planned = callOf(tool('run_it', ['shell']).tool, { command: 'touch b' });
      planned.context = { ...planned.context, permissionMode: 'plan' };
      await checkpoint(planned, { teamRoot });
      expect((await store.list()).length).toBe(before + 1);
    });

    it('a call that destroyed .git has it rebuilt, and the model is told', async () => {
      const wrecker = tool('run_it', ['shell'], async () => {
        rmSync(path.join(teamRoot, '.git'), { recursive: true, force: true });
        return 'done';
      }).tool;
      const result = await runCall(wrecker, { command: 'rm -rf .git' }, makeToolContext(teamRoot, { agent: 'alice' }), { teamRoot });
      expect(result.content).toMatch(/^done\n\n\[huddle\] this call broke the repository: .*Do not delete \.git or its contents\.$/s);
      expect(existsSync(path.join(teamRoot, '.git', 'HEAD'))).toBe(true);
      expect(execFileSync('git', ['log', '--format=%s'], { cwd: teamRoot, encoding: 'utf8' }).trim()).toBe('first');
    });
  });

  it('9. PostToolUse hooks: what they add goes to the model with the result', async () => {
    const adding = hooks('PostToolUse', `echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint is clean"}}'`);
    const result = await postToolUseHooks(callOf(tool('anything', ['read']).tool, {}), { content: 'ran' }, { teamRoot, hooks: adding });
    expect(result).toEqual({ content: 'ran\n\n[PostToolUse hook context] lint is clean' });
  });
});
