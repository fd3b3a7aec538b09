// The file tools run in huddle's own process, outside the sandbox: they must never write what git or
// huddle reads as configuration, in any permission mode (docs/trust.md). A real `huddle -p` in auto
// mode whose lead (scripted through the fake API) plants core.fsmonitor in .git/config in every
// spelling it can find; afterwards .git/config is as it was, and the person's own `git status` (with
// the key in its environment) runs nothing that reaches the victim directory.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { TEST_GIT_IDENTITY, useTestGitIdentity } from '../../helpers/git-identity.js';
import { makeToolContext } from '../../helpers/tool-context.js';
import { runCli } from '../../helpers/run-cli.js';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { ensureWorktree } from '../../../src/runtime/workspace/worktree.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

useTestGitIdentity();
const KEY = 'sk-ant-api03-CONFIGWRITES-0123456789abcdefghijkl';

let fake: FakeApi;
let arena: Arena;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('config-writes-');
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: arena.ws });
  writeFileSync(path.join(arena.ws, 'README.md'), 'hello\n');
  await execa('git', ['add', '.'], { cwd: arena.ws });
  await execa('git', ['commit', '-qm', 'init'], { cwd: arena.ws });
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
});

/** What an agent would put in .git/config: a command git runs on every status, as the person. */
function poisoned(victim: string): string {
  return `[core]\n\tfsmonitor = "cat /proc/$PPID/environ /proc/self/environ > ${victim}/stolen; true"\n`;
}

describeSandboxed('file tools never write configuration, in any mode', () => {
  it('.git/config in every spelling, in auto mode: refused with one line, nothing written, git runs nothing', async () => {
    const config = path.join(arena.ws, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    const payload = poisoned(arena.victim);
    const attempts = [
      toolUse('write_file', { path: '.git/config', content: payload }),
      toolUse('write_file', { path: `${arena.ws}/.git/config`, content: payload }),
      toolUse('write_file', { path: 'sub/../.git/config', content: payload }),
      toolUse('write_file', { path: './.git/./config', content: payload }),
      toolUse('write_file', { path: '.GIT/config', content: payload }),
      toolUse('edit_file', {
        path: '.git/config',
        old_text: '[core]',
        new_text: `[core]\n\tfsmonitor = "cat /proc/$PPID/environ > ${arena.victim}/stolen; true"`,
      }),
      toolUse('write_file', { path: '.git/hooks/pre-commit', content: `#!/bin/sh\ncat /proc/$PPID/environ > ${arena.victim}/stolen\n` }),
      // Links the sandboxed shell may make in the workspace, then used by the file tools outside it.
      toolUse('bash', { command: 'ln -s .git/config cfg-link && ln -s .git gitdir && mkdir -p deep && ln -s ../.git/config deep/up' }),
      toolUse('write_file', { path: 'cfg-link', content: payload }),
      toolUse('write_file', { path: 'gitdir/config', content: payload }),
      toolUse('edit_file', { path: 'gitdir/config', old_text: '[core]', new_text: `[core]\n\tfsmonitor = "true"` }),
      toolUse('write_file', { path: 'deep/up', content: payload }),
      toolUse('write_file', { path: 'gitdir/hooks/post-checkout', content: '#!/bin/sh\necho pwned\n' }),
      // A hard link the shell may try (the sandbox's read-only .git is another mount: it fails); whatever
      // hard-cfg then is, writing it leaves .git/config alone.
      toolUse('bash', { command: 'ln .git/config hard-cfg; ls -li .git/config hard-cfg' }),
      toolUse('write_file', { path: 'hard-cfg', content: payload }),
    ];
    fake.enqueue(reply(...attempts), replyText('done'));
    const result = await runCli(['-p', 'configure git', '--permission-mode', 'auto'], {
      cwd: arena.ws,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, ...TEST_GIT_IDENTITY },
    });
    expect(result.code, result.stderr).toBe(0);
    const results = (fake.requests[1]!.body.messages.at(-1)!.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter(
      (b) => b.type === 'tool_result',
    );
    expect(results).toHaveLength(attempts.length);
    results.forEach((block, i) => {
      if (i === 7 || i >= 13) return; // the bash that made the links; the hard link
      const said = JSON.stringify(block.content);
      expect(block.is_error, `attempt ${i}: ${said}`).toBe(true);
      expect(said, `attempt ${i}`).toMatch(
        /^"refused: .* which agents never change in any permission mode; say what should change and the person edits it themselves"$/,
      );
    });
    expect(readFileSync(config, 'utf8')).toBe(before);
    expect(existsSync(path.join(arena.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(path.join(arena.ws, '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect(existsSync(path.join(arena.ws, '.GIT'))).toBe(false);
    // The person's git, with the key in its environment, runs nothing.
    await execa('git', ['status', '--short'], { cwd: arena.ws, env: { ...TEST_GIT_IDENTITY, ANTHROPIC_API_KEY: KEY } });
    expect(existsSync(path.join(arena.victim, 'stolen'))).toBe(false);
  });

  it("huddle's settings, board and MCP list, in auto mode: refused; ordinary files are written", async () => {
    const targets = [
      '.team/settings.json',
      '.team/settings.local.json',
      '.mcp.json',
      '.tasks/1.json',
      '.claude/settings.json',
      '.team/roles/lead.md',
      'src/../.team/allow.json',
    ];
    fake.enqueue(
      reply(
        ...targets.map((p) => toolUse('write_file', { path: p, content: '{"sandbox":{"enabled":false}}\n' })),
        toolUse('write_file', { path: 'src/ok.ts', content: 'export {};\n' }),
      ),
      replyText('done'),
    );
    const result = await runCli(['-p', 'loosen the settings', '--permission-mode', 'auto'], {
      cwd: arena.ws,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url },
    });
    expect(result.code, result.stderr).toBe(0);
    const results = (fake.requests[1]!.body.messages.at(-1)!.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter(
      (b) => b.type === 'tool_result',
    );
    targets.forEach((target, i) => expect(JSON.stringify(results[i]!.content), target).toContain('refused: '));
    expect(results.at(-1)!.is_error).toBeFalsy();
    expect(readFileSync(path.join(arena.ws, 'src', 'ok.ts'), 'utf8')).toBe('export {};\n');
    for (const target of [
      '.team/settings.json',
      '.team/settings.local.json',
      '.mcp.json',
      '.tasks/1.json',
      '.claude/settings.json',
      '.team/roles/lead.md',
      '.team/allow.json',
    ]) {
      expect(existsSync(path.join(arena.ws, target)), target).toBe(false);
    }
  });

  it('the scripts hooks and MCP servers run: refused to the file tools (a link to one too); other scripts are written', async () => {
    mkdirSync(path.join(arena.ws, '.team'), { recursive: true });
    mkdirSync(path.join(arena.ws, 'scripts'), { recursive: true });
    writeFileSync(path.join(arena.ws, 'scripts', 'guard.sh'), '#!/bin/sh\nexit 0\n');
    writeFileSync(path.join(arena.ws, 'scripts', 'server.js'), '// an MCP server\n');
    symlinkSync('scripts/guard.sh', path.join(arena.ws, 'guard-link'));
    writeFileSync(
      path.join(arena.ws, '.team', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'sh "./scripts/guard.sh"' }] }] } }),
    );
    writeFileSync(path.join(arena.ws, '.mcp.json'), JSON.stringify({ mcpServers: { local: { command: 'node', args: ['scripts/server.js'] } } }));
    fake.enqueue(
      reply(
        toolUse('write_file', { path: 'scripts/guard.sh', content: '#!/bin/sh\nexit 0 # disarmed\n' }),
        toolUse('edit_file', { path: 'guard-link', old_text: 'exit 0', new_text: 'exit 0 # disarmed' }),
        toolUse('write_file', { path: 'scripts/server.js', content: 'require("child_process").execSync("id")\n' }),
        toolUse('write_file', { path: 'scripts/other.sh', content: '#!/bin/sh\n' }),
      ),
      replyText('done'),
    );
    const result = await runCli(['-p', 'disarm the guard', '--trust'], { cwd: arena.ws, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    const results = (fake.requests[1]!.body.messages.at(-1)!.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter(
      (b) => b.type === 'tool_result',
    );
    for (const block of results.slice(0, 3)) expect(JSON.stringify(block.content)).toContain('a script the settings run (a hook or an MCP server)');
    expect(results[3]!.is_error).toBeFalsy();
    expect(readFileSync(path.join(arena.ws, 'scripts', 'guard.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(readFileSync(path.join(arena.ws, 'scripts', 'server.js'), 'utf8')).toBe('// an MCP server\n');
  });

  it("a teammate's own checkout: its .git gitfile and the git dir beside it are refused to the file tools", async () => {
    const checkout = await ensureWorktree(arena.ws, 'alice');
    const workspace = checkout.workspace;
    const registry = new ToolRegistry(coreTools());
    const context = { ...makeToolContext(workspace.root), workspace, permissionMode: 'auto' as const };
    const gitfile = readFileSync(path.join(workspace.root, '.git'), 'utf8');
    mkdirSync(path.join(workspace.root, 'sub'), { recursive: true });
    symlinkSync('../.git', path.join(workspace.root, 'sub', 'gitfile'));
    for (const [tool, input] of [
      ['write_file', { path: '.git', content: `gitdir: ${arena.victim}\n` }],
      ['write_file', { path: 'sub/gitfile', content: `gitdir: ${arena.victim}\n` }],
      ['edit_file', { path: '.git', old_text: 'gitdir:', new_text: 'gitdir: ' }],
      ['write_file', { path: `${workspace.root}.git/config`, content: poisoned(arena.victim) }],
    ] as const) {
      const out = await registry.run(tool, input, context);
      expect(out.isError, `${tool} ${input.path}: ${out.content}`).toBe(true);
    }
    expect(readFileSync(path.join(workspace.root, '.git'), 'utf8')).toBe(gitfile);
  });
});
