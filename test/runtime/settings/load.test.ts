import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/runtime/config.js';
import { formatSettingsRows, settingsRows } from '../../../src/runtime/settings/describe.js';
import { SettingsError } from '../../../src/runtime/settings/errors.js';
import { jsonSchemaDefaults, settingsDefaults } from '../../../src/runtime/settings/json-schema.js';
import { loadSettings, sourceOf } from '../../../src/runtime/settings/load.js';
import { roleSettings } from '../../../src/runtime/settings/role-settings.js';
import { budgetSettingsFrom, configFromSettings, resolveSettingsConfig } from '../../../src/runtime/settings/to-config.js';
import { settingsWorkspace } from '../../helpers/settings-workspace.js';

const setup = () => settingsWorkspace('huddle-settings-');

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error('expected a SettingsError');
}

describe('settings sources', () => {
  it('merges user, team, personal, variables and flags, lowest first, and says where each value came from', () => {
    const { cwd, home, write } = setup();
    write('~/.config/huddle/settings.json', { model: 'user-model', maxTurns: 10, maxTokens: 1000, timeouts: { idleMs: 5 } });
    write('.team/settings.json', { model: 'team-model', maxTurns: 20, timeouts: { stallMs: 7 } });
    write('.team/settings.local.json', { maxTurns: 30 });
    const env = { HUDDLE_MAX_TOKENS: '2000', HUDDLE_COMPACT_AT: '70%' };
    const loaded = loadSettings({ cwd, home, env, flags: { model: 'flag-model', budget: { usd: 3 } } });
    expect(loaded.settings).toMatchObject({
      model: 'flag-model',
      maxTurns: 30,
      maxTokens: 2000,
      timeouts: { idleMs: 5, stallMs: 7, requestMs: 600_000 },
      context: { compactAt: 0.7, trimAt: 0.6 },
      budget: { team: { usd: 3 }, soft: 0.8 },
    });
    expect(sourceOf(loaded, ['model'])).toEqual(['--model']);
    expect(sourceOf(loaded, ['maxTurns'])).toEqual(['.team/settings.local.json']);
    expect(sourceOf(loaded, ['maxTokens'])).toEqual(['HUDDLE_MAX_TOKENS']);
    expect(sourceOf(loaded, ['timeouts', 'idleMs'])).toEqual(['~/.config/huddle/settings.json']);
    expect(sourceOf(loaded, ['timeouts', 'stallMs'])).toEqual(['.team/settings.json']);
    expect(sourceOf(loaded, ['timeouts', 'requestMs'])).toEqual(['default']);
    expect(sourceOf(loaded, ['budget', 'team', 'usd'])).toEqual(['--budget-usd']);
    expect(loaded.files.map((file) => file.label)).toEqual(['~/.config/huddle/settings.json', '.team/settings.json', '.team/settings.local.json']);

    const table = formatSettingsRows(settingsRows(loaded));
    expect(table).toMatch(/^model\s+flag-model\s+--model$/m);
    expect(table).toMatch(/^maxTurns\s+30\s+\.team\/settings\.local\.json$/m);
    expect(table).toMatch(/^context\.compactAt\s+0\.7\s+HUDDLE_COMPACT_AT$/m);
  });

  it("takes its defaults from the schema's metadata, exactly as the exported JSON Schema states them", () => {
    const defaults = settingsDefaults();
    expect(defaults).toEqual(jsonSchemaDefaults());
    expect(defaults).toMatchObject({ model: 'claude-sonnet-4-6', maxTurns: 50, timeouts: { idleMs: 60_000 }, notifications: { desktop: 'auto' } });
    // A copy each time: a caller's change never leaks into the next load.
    (defaults.timeouts as Record<string, number>).idleMs = 1;
    expect((settingsDefaults().timeouts as Record<string, number>).idleMs).toBe(60_000);
  });

  it('finds the user file under $XDG_CONFIG_HOME', () => {
    const { cwd, home, write } = setup();
    write('~/xdg/huddle/settings.json', { model: 'from-xdg' });
    write('~/.config/huddle/settings.json', { model: 'from-dot-config' });
    const loaded = loadSettings({ cwd, home, env: { XDG_CONFIG_HOME: path.join(home, 'xdg') } });
    expect(loaded.settings.model).toBe('from-xdg');
    expect(sourceOf(loaded, ['model'])).toEqual(['~/xdg/huddle/settings.json']);
  });

  it('joins hooks and allow-lists across files; a server or agent entry is replaced whole', () => {
    const { cwd, home, write } = setup();
    const hook = (command: string) => ({ matcher: 'bash', hooks: [{ type: 'command', command }] });
    write('~/.config/huddle/settings.json', { hooks: { PreToolUse: [hook('user-hook')] }, permissions: { allow: ['make'] } });
    write('.mcp.json', { mcpServers: { everything: { command: 'npx', args: ['server-everything'], env: { A: '1' } }, files: { command: 'fs-server' } } });
    write('.team/settings.json', {
      hooks: { PreToolUse: [hook('team-hook')], Stop: [{ hooks: [{ type: 'command', command: 'stop-hook' }] }] },
      permissions: { allow: ['npm test', 'make'] },
      mcpServers: { everything: { type: 'http', url: 'http://127.0.0.1:1/mcp' } },
    });
    const loaded = loadSettings({ cwd, home, env: {}, trust: true });
    expect(loaded.settings.hooks?.PreToolUse?.map((m) => m.hooks[0]?.command)).toEqual(['user-hook', 'team-hook']);
    expect(loaded.settings.hooks?.Stop).toHaveLength(1);
    expect(loaded.settings.permissions?.allow).toEqual(['make', 'npm test']);
    expect(loaded.settings.mcpServers).toEqual({ everything: { type: 'http', url: 'http://127.0.0.1:1/mcp' }, files: { command: 'fs-server' } });
    expect(sourceOf(loaded, ['hooks', 'PreToolUse'])).toEqual(['~/.config/huddle/settings.json', '.team/settings.json']);
    expect(sourceOf(loaded, ['mcpServers', 'everything'])).toEqual(['.team/settings.json']);
    expect(sourceOf(loaded, ['mcpServers', 'files'])).toEqual(['.mcp.json']);
  });

  it('never shows header or environment values in the /config rows', () => {
    const { cwd, home, write } = setup();
    write('.team/settings.local.json', {
      mcpServers: { api: { type: 'http', url: 'https://example.invalid/mcp', headers: { Authorization: 'Bearer sk-secret-123' } } },
      agents: { codex: { command: 'codex', env: { OPENAI_API_KEY: 'sk-other-secret' } } },
    });
    const table = formatSettingsRows(settingsRows(loadSettings({ cwd, home, env: {}, trust: true })));
    expect(table).toContain('Authorization');
    expect(table).toContain('OPENAI_API_KEY');
    expect(table).not.toContain('sk-secret-123');
    expect(table).not.toContain('sk-other-secret');
  });
});

describe('settings errors: one line naming the file and the key', () => {
  it('wrong types, deep inside hooks', () => {
    const { cwd, home, write } = setup();
    write('.team/settings.json', { hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'x', timeout: 'ten' }] }] } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('.team/settings.json: hooks.PreToolUse[0].hooks[0].timeout: expected a number, not "ten"');
  });

  it('unknown keys, with the likely key or the known ones', () => {
    const { cwd, home, write } = setup();
    write('.team/settings.local.json', { roles: { coder: { modle: 'x' } } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('.team/settings.local.json: roles.coder.modle: unknown key (did you mean "model"?)');
    write('.team/settings.local.json', { timeouts: { zzz: 1 } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe(
      '.team/settings.local.json: timeouts.zzz: unknown key (known keys: idleMs, stallMs, requestMs, streamIdleMs, leadCoalesceMs, cacheWarmupMs, leaseMs)',
    );
    write('.team/settings.local.json', { hoks: {} });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('.team/settings.local.json: hoks: unknown key (did you mean "hooks"?)');
  });

  it('bad JSON, a non-object, enums, bounds and server entries', () => {
    const { cwd, home, write } = setup();
    write('~/.config/huddle/settings.json', '{"model": "x",}');
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toMatch(/^~\/\.config\/huddle\/settings\.json: not valid JSON \(.+\)$/);
    write('~/.config/huddle/settings.json', '[]');
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('~/.config/huddle/settings.json: expected a JSON object ({…}) at the top');
    write('~/.config/huddle/settings.json', { permissionMode: 'yolo' });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe(
      '~/.config/huddle/settings.json: permissionMode: expected one of "plan", "ask", "auto", not "yolo"',
    );
    write('~/.config/huddle/settings.json', { context: { compactAt: 80 } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('~/.config/huddle/settings.json: context.compactAt: must be at most 1, not 80');
    write('~/.config/huddle/settings.json', {});
    write('.mcp.json', { mcpServers: { web: { type: 'http' } } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('.mcp.json: mcpServers.web.url: expected a string (it is missing)');
    write('.mcp.json', { mcpServers: { 'my.server': { command: 7 } } });
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toBe('.mcp.json: mcpServers["my.server"].command: expected a string, not 7');
  });

  it('variables and flags are named as such, with the messages huddle always gave', () => {
    const { cwd, home } = setup();
    expect(errorOf(() => loadSettings({ cwd, home, env: { HUDDLE_WORKTREES: 'maybe' } }))).toBe("HUDDLE_WORKTREES must be 1 or 0 (true or false), not 'maybe'");
    expect(errorOf(() => loadSettings({ cwd, home, env: { HUDDLE_PERMISSION_MODE: 'sometimes' } }))).toBe(
      "HUDDLE_PERMISSION_MODE must be one of plan, ask, auto, not 'sometimes'",
    );
    expect(errorOf(() => loadSettings({ cwd, home, env: { HUDDLE_COMPACT_AT: '150%' } }))).toMatch(
      /^HUDDLE_COMPACT_AT must be a share of the context window, as a fraction \(0\.8\) or a percent \(80%\)/,
    );
    expect(errorOf(() => loadSettings({ cwd, home, env: { HUDDLE_MAX_TURNS: '0' } }))).toBe('HUDDLE_MAX_TURNS: maxTurns: must be at least 1, not 0');
  });
});

describe('the deprecated .team/allow.json and .team/budget.json', () => {
  it('are still read, under the settings files, with a warning', () => {
    const { cwd, home, write } = setup();
    write('.team/allow.json', ['make', 'npm install']);
    write('.team/budget.json', { team: { usd: 5, turns: 100 }, agents: { alice: { usd: 1 } }, soft: 0.5 });
    write('.team/settings.json', { budget: { team: { usd: 7 } }, permissions: { allow: ['cargo build'] } });
    const loaded = loadSettings({ cwd, home, env: {}, flags: { budget: { turns: 9 } }, trust: true });
    expect(loaded.settings.permissions?.allow).toEqual(['make', 'npm install', 'cargo build']);
    expect(loaded.settings.budget).toEqual({ team: { usd: 7, turns: 9 }, agents: { alice: { usd: 1 } }, soft: 0.5 });
    expect(sourceOf(loaded, ['budget', 'agents', 'alice', 'usd'])).toEqual(['.team/budget.json']);
    expect(loaded.warnings).toHaveLength(2);
    expect(loaded.warnings[0]).toMatch(/^\.team\/allow\.json is deprecated: .*"permissions": \{"allow"/);
    expect(loaded.warnings[1]).toMatch(/^\.team\/budget\.json is deprecated: .*"budget"/);
    expect(budgetSettingsFrom(loaded.settings)).toEqual({ team: { usd: 7, turns: 9 }, agents: { alice: { usd: 1 } }, soft: 0.5, step: {} });
  });

  it('a broken allow.json is ignored with a warning, as before; a broken budget.json is an error, as before', () => {
    const { cwd, home, write } = setup();
    write('.team/allow.json', '{"not": "a list"}');
    const loaded = loadSettings({ cwd, home, env: {} });
    expect(loaded.settings.permissions).toBeUndefined();
    expect(loaded.warnings).toEqual([
      '.team/allow.json is ignored: it is not an array; it must be a JSON array of command prefixes such as ["npm test", "make"]',
    ]);
    write('.team/budget.json', '{"team": {"usd": "lots"}}');
    expect(errorOf(() => loadSettings({ cwd, home, env: {} }))).toContain("team: a usd budget takes a number above 0, not 'lots'");
  });
});

describe('HuddleConfig from settings', () => {
  it("treats a gateway's ANTHROPIC_CUSTOM_HEADERS values as credentials (redacted), as resolveConfig does", async () => {
    const { scrub } = await import('../../../src/runtime/secrets.js');
    const { cwd, home } = setup();
    const value = 'gw-Settings-8822-secret';
    expect(scrub(value)).toBe(value);
    resolveSettingsConfig({ cwd, home, env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_CUSTOM_HEADERS: `X-Gateway-Key: ${value}` } });
    expect(scrub(`sent ${value}`)).toBe('sent [redacted]');
  });

  it('matches resolveConfig when nothing is set, and carries every setting when something is', () => {
    const { cwd, home, write } = setup();
    const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
    const { config } = resolveSettingsConfig({ cwd, home, env });
    expect(config).toEqual(resolveConfig({ cwd }, env));
    expect(config.streamIdleMs).toBe(60_000);

    write('.team/settings.json', {
      model: 'm',
      maxTokens: 100,
      maxTurns: 7,
      permissionMode: 'plan',
      planApproval: 'lead',
      plans: { approver: 'person', autoApproveMinutes: 0.5 },
      worktrees: true,
      reviewMaxRounds: 1,
      timeouts: { idleMs: 1, stallMs: 2, requestMs: 3, streamIdleMs: 4 },
      retries: { max: 5, baseMs: 6 },
      context: { trimAt: 0.1, trimKeepTurns: 2, compactAt: 0.3 },
      budget: { team: { minutes: 10 } },
    });
    const loaded = loadSettings({ cwd, home, env: {} });
    expect(configFromSettings(loaded.settings, { cwd, env })).toMatchObject({
      apiKey: 'sk-test',
      apiKeySource: 'ANTHROPIC_API_KEY',
      baseURL: 'http://127.0.0.1:9',
      model: 'm',
      maxTokens: 100,
      maxTurns: 7,
      permissionMode: 'plan',
      // plans.approver wins over the older planApproval.
      planApproval: 'person',
      planAutoApproveMinutes: 0.5,
      worktrees: true,
      reviewMaxRounds: 1,
      idleTimeoutMs: 1,
      stallMs: 2,
      requestTimeoutMs: 3,
      streamIdleMs: 4,
      maxRetries: 5,
      retryBaseMs: 6,
      trimAt: 0.1,
      trimKeepTurns: 2,
      compactAt: 0.3,
      budget: { minutes: 10 },
    });
  });
});

describe('role settings', () => {
  it('gives a role its overrides and verify command', () => {
    const { cwd, home, write } = setup();
    write('.team/settings.json', {
      roles: { tester: { model: 'small', tools: ['bash', 'mcp__everything'], denyTools: ['mcp__everything__get-env'] } },
      verify: { command: 'npm test', roles: { tester: 'npm run test:all' } },
    });
    const { settings } = loadSettings({ cwd, home, env: {} });
    expect(roleSettings(settings, 'tester')).toEqual({
      model: 'small',
      tools: ['bash', 'mcp__everything'],
      denyTools: ['mcp__everything__get-env'],
      verify: 'npm run test:all',
    });
    expect(roleSettings(settings, 'coder')).toEqual({ verify: 'npm test' });
  });
});
