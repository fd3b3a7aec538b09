// Claude Code's settings files read as huddle settings (docs/configuration.md#claude-codes-settings-files):
// where each sits in the precedence and what `/config` says it came from, what is translated, the one
// warning naming what huddle ignores, trust for what widens, and the permission rules' matching.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSettingsRows, settingsRows } from '../../../src/runtime/settings/describe.js';
import { loadSettings, sourceOf } from '../../../src/runtime/settings/load.js';
import { SettingsAllowList } from '../../../src/runtime/settings/settings-allow-list.js';
import { commandMatches, pathMatches, ruleVerdict } from '../../../src/runtime/permissions/tool-rules.js';
import { fromClaudeCodeInput, toClaudeCodeCall } from '../../../src/runtime/vocabulary.js';
import { settingsWorkspace } from '../../helpers/settings-workspace.js';

const command = (text: string) => ({ type: 'command', command: text });

describe("Claude Code's settings files", () => {
  it("sit under huddle's file of the same scope: user < project < local, each source named for /config", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('~/.claude/settings.json', { model: 'haiku', permissions: { deny: ['Bash(curl:*)'] } });
    write('.claude/settings.json', { model: 'opus', permissions: { deny: ['Read(./.env)'] } });
    write('.claude/settings.local.json', { permissions: { ask: ['Bash(git push:*)'] } });
    write('.team/settings.json', { maxTurns: 7 });
    const loaded = loadSettings({ cwd, home, env });
    expect(loaded.settings.model).toBe('claude-opus-4-8');
    expect(sourceOf(loaded, ['model'])).toEqual(['.claude/settings.json']);
    expect(loaded.settings.permissions?.deny).toEqual(['Bash(curl:*)', 'Read(./.env)']);
    expect(sourceOf(loaded, ['permissions', 'deny'])).toEqual(['~/.claude/settings.json', '.claude/settings.json']);
    expect(sourceOf(loaded, ['permissions', 'ask'])).toEqual(['.claude/settings.local.json']);
    // Claude Code's own model choices that name no model are ignored, with the warning; a 1M-context alias resolves.
    write('.claude/settings.json', { model: 'opusplan' });
    const plan = loadSettings({ cwd, home, env });
    expect(plan.settings.model).toBe('claude-haiku-4-5');
    expect(plan.warnings.join('\n')).toContain('.claude/settings.json: huddle ignores model "opusplan"');
    write('.claude/settings.json', { model: 'sonnet[1m]' });
    expect(loadSettings({ cwd, home, env }).settings.model).toBe('claude-sonnet-4-6[1m]');
    write('.claude/settings.json', { model: 'opus', permissions: { deny: ['Read(./.env)'] } });
    // huddle's own file wins over Claude Code's of the same scope.
    write('.team/settings.json', { model: 'claude-sonnet-4-6' });
    expect(loadSettings({ cwd, home, env }).settings.model).toBe('claude-sonnet-4-6');
    const table = formatSettingsRows(settingsRows(loaded));
    expect(table).toMatch(/permissions\.deny\s+.*~\/\.claude\/settings\.json \+ \.claude\/settings\.json/);
  });

  it("$CLAUDE_CONFIG_DIR moves the user file, as in Claude Code; --setting-sources leaves scopes out (both tools' files)", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('~/elsewhere/settings.json', { model: 'haiku' });
    write('~/.claude/settings.json', { model: 'opus' });
    expect(loadSettings({ cwd, home, env: { CLAUDE_CONFIG_DIR: path.join(home, 'elsewhere') } }).settings.model).toBe('claude-haiku-4-5');
    write('.claude/settings.json', { model: 'sonnet' });
    write('.team/settings.local.json', { maxTurns: 9 });
    const userOnly = loadSettings({ cwd, home, env, sources: ['user'] });
    expect(userOnly.settings.model).toBe('claude-opus-4-8');
    expect(userOnly.settings.maxTurns).toBe(50);
    expect(loadSettings({ cwd, home, env, sources: ['project', 'local'] }).settings.model).toBe('claude-sonnet-4-6');
  });

  it("hooks keep Claude Code's format and get its vocabulary; other hook types and events are named once as ignored", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('~/.claude/settings.json', {
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [command('guard'), { type: 'prompt', prompt: 'is it safe?' }] }],
        SubagentStop: [{ hooks: [command('x')] }],
      },
      statusLine: { type: 'command', command: 'x' },
      apiKeyHelper: 'x',
      permissions: {
        allow: ['Bash(npm run test:*)', 'Bash(git *)', 'Edit(src/**)', 'mcp__github__create_issue', 'WebFetch(domain:x.com)'],
        additionalDirectories: ['../x'],
      },
      enableAllProjectMcpServers: true,
      env: { FOO: 'bar' },
    });
    const loaded = loadSettings({ cwd, home, env });
    expect(loaded.settings.hooks?.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ ...command('guard'), vocabulary: 'claude-code' }] }]);
    expect((loaded.settings.hooks as Record<string, unknown>).SubagentStop).toBeUndefined();
    expect(loaded.settings.permissions?.allow).toEqual(['npm run test', 'git', 'mcp__github__create_issue']);
    expect(loaded.settings.env).toEqual({ FOO: 'bar' });
    expect(loaded.warnings).toEqual([
      '~/.claude/settings.json: huddle ignores hooks.PreToolUse (type prompt), hooks.SubagentStop, statusLine, apiKeyHelper, permissions.allow "WebFetch(domain:x.com)", permissions.additionalDirectories (Claude Code settings it does not support; docs/configuration.md#claude-codes-settings-files)',
    ]);
    // /config never shows an env value.
    expect(formatSettingsRows(settingsRows(loaded))).not.toContain('bar');
  });

  it("a workspace's hooks, allow rules, env and auto mode wait for trust; deny and ask rules and the MCP off-switches apply at once", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('.mcp.json', { mcpServers: { a: { command: 'a' }, b: { command: 'b' }, c: { command: 'c' } } });
    write('.claude/settings.json', {
      hooks: { PreToolUse: [{ hooks: [command('guard')] }] },
      permissions: { allow: ['Bash(make:*)'], deny: ['Bash(rm:*)'], ask: ['Write'], defaultMode: 'bypassPermissions' },
      env: { PATH: '/evil' },
      enabledMcpjsonServers: ['a', 'b'],
      disabledMcpjsonServers: ['b'],
    });
    const loaded = loadSettings({ cwd, home, env });
    expect(loaded.untrusted.map((u) => [u.file, u.settings])).toEqual([
      ['.mcp.json', ['mcpServers.a', 'mcpServers.b', 'mcpServers.c']],
      ['.claude/settings.json', ['permissions.allow', 'permissionMode', 'env', 'hooks.PreToolUse']],
    ]);
    expect(loaded.settings.hooks).toBeUndefined();
    expect(loaded.settings.env).toBeUndefined();
    expect(loaded.settings.permissions).toEqual({ deny: ['Bash(rm:*)'], ask: ['Write'] });
    expect(loaded.settings.mcp?.disabled).toEqual(['c', 'b']);
    const trusted = loadSettings({ cwd, home, env, trust: true });
    expect(trusted.settings.permissionMode).toBe('auto');
    expect(trusted.settings.hooks?.PreToolUse).toHaveLength(1);
  });

  it("allow rules count in the allow-list: the user's file as it is, the workspace's once trusted", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('~/.claude/settings.json', { permissions: { allow: ['Bash(npm run lint:*)'] } });
    write('.claude/settings.json', { permissions: { allow: ['Bash(make *)'] } });
    const allowList = new SettingsAllowList({ cwd, home, env });
    expect(allowList.read().entries).toEqual(['npm run lint']);
    loadSettings({ cwd, home, env, trust: true });
    expect(allowList.read().entries).toEqual(['npm run lint', 'make']);
  });

  it("--settings takes Claude Code's keys over every file, with no trust asked (the person typed it)", () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('.claude/settings.local.json', { model: 'haiku' });
    const loaded = loadSettings({
      cwd,
      home,
      env,
      claudeSettings: { label: '--settings', values: { model: 'opus', hooks: { Stop: [{ hooks: [command('x')] }] } } },
    });
    expect(loaded.settings.model).toBe('claude-opus-4-8');
    expect(sourceOf(loaded, ['model'])).toEqual(['--settings']);
    expect(loaded.untrusted).toEqual([]);
    expect(loaded.settings.hooks?.Stop).toHaveLength(1);
  });

  it('a broken file is one line naming it; a rule that is not a rule is refused', () => {
    const { cwd, home, write, env } = settingsWorkspace();
    write('.claude/settings.json', '{ nope');
    expect(() => loadSettings({ cwd, home, env })).toThrow(/^\.claude\/settings\.json: not valid JSON/);
    write('.claude/settings.json', { permissions: { deny: ['Bash(rm'] } });
    expect(() => loadSettings({ cwd, home, env })).toThrow(/\.claude\/settings\.json.*permissions\.deny.*not a tool rule/);
  });
});

describe("permission rules in Claude Code's syntax", () => {
  const cwd = '/work/ws';
  it('Bash: prefix (:*), wildcard, exact; any part of a compound command for deny, every part for allow', () => {
    expect(commandMatches('rm:*', 'rm victim.txt')).toBe(true);
    expect(commandMatches('rm:*', 'rm')).toBe(true);
    expect(commandMatches('rm:*', 'rmdir x')).toBe(false);
    expect(commandMatches('rm:*', 'ls && FOO=1 rm -rf x')).toBe(true);
    expect(commandMatches('rm:*', 'echo "a; rm x"')).toBe(false);
    expect(commandMatches('git *', 'git')).toBe(true);
    expect(commandMatches('git *', 'git push origin main')).toBe(true);
    expect(commandMatches('npm run test:*', 'npm run test')).toBe(true);
    expect(commandMatches('npm run test:*', 'npm run build')).toBe(false);
    expect(commandMatches('git * main', 'git push origin main')).toBe(true);
    expect(commandMatches('npm test', 'npm test')).toBe(true);
    expect(commandMatches('npm test', 'npm test -- x')).toBe(false);
    expect(commandMatches('git:*', 'git status && rm x', 'allow')).toBe(false);
  });

  it('paths: ./x under the workspace, a bare name at any depth, //abs, ~/ under home; Edit covers Write', () => {
    expect(pathMatches('./secrets/**', '/work/ws/secrets/a/b.txt', cwd)).toBe(true);
    expect(pathMatches('./secrets/**', '/work/ws/public/a.txt', cwd)).toBe(false);
    expect(pathMatches('.env', '/work/ws/app/.env', cwd)).toBe(true);
    expect(pathMatches('src/**', '/work/ws/src/x.ts', cwd)).toBe(true);
    expect(pathMatches('//etc/passwd', '/etc/passwd', cwd)).toBe(true);
    expect(pathMatches('~/.ssh/**', '/home/me/.ssh/id_rsa', cwd, '/home/me')).toBe(true);
    expect(ruleVerdict({ deny: ['Edit(src/**)'] }, 'write_file', { path: 'src/a.ts', content: '' }, cwd)).toEqual({ kind: 'deny', rule: 'Edit(src/**)' });
    expect(ruleVerdict({ deny: ['Read(./secrets/**)'] }, 'read_file', { path: 'secrets/k' }, cwd)?.kind).toBe('deny');
    expect(ruleVerdict({ deny: ['Read(./secrets/**)'] }, 'read_file', { path: 'src/k' }, cwd)).toBeUndefined();
  });

  it('deny beats ask beats allow; bare tool names and MCP tools match; WebFetch names nothing huddle has', () => {
    const lists = { deny: ['Bash(rm:*)'], ask: ['Bash'], allow: ['Bash(rm:*)', 'Write'] };
    expect(ruleVerdict(lists, 'bash', { command: 'rm x' }, cwd)?.kind).toBe('deny');
    expect(ruleVerdict(lists, 'bash', { command: 'ls' }, cwd)?.kind).toBe('ask');
    expect(ruleVerdict(lists, 'write_file', { path: 'a', content: '' }, cwd)?.kind).toBe('allow');
    expect(ruleVerdict({ deny: ['mcp__github'] }, 'mcp__github__create_issue', {}, cwd)?.kind).toBe('deny');
    expect(ruleVerdict({ deny: ['mcp__github__list'] }, 'mcp__github__create_issue', {}, cwd)).toBeUndefined();
    expect(ruleVerdict({ deny: ['WebFetch(domain:example.com)'] }, 'bash', { command: 'curl example.com' }, cwd)).toBeUndefined();
  });

  it("a call in Claude Code's words and back: write_file {path} is Write {file_path} (absolute)", () => {
    expect(toClaudeCodeCall('write_file', { path: 'a.txt', content: 'x' }, cwd)).toEqual({
      name: 'Write',
      input: { file_path: '/work/ws/a.txt', content: 'x' },
    });
    expect(toClaudeCodeCall('edit_file', { path: 'a', old_text: 'o', new_text: 'n' }, cwd)).toEqual({
      name: 'Edit',
      input: { file_path: '/work/ws/a', old_string: 'o', new_string: 'n' },
    });
    expect(toClaudeCodeCall('bash', { command: 'ls' }, cwd)).toEqual({ name: 'Bash', input: { command: 'ls' } });
    expect(toClaudeCodeCall('task_list', {}, cwd)).toEqual({ name: 'task_list', input: {} });
    expect(fromClaudeCodeInput('Edit', { file_path: '/work/ws/a', old_string: 'o', new_string: 'n' })).toEqual({
      path: '/work/ws/a',
      old_text: 'o',
      new_text: 'n',
    });
  });
});
