// huddle installed the way people install it (`npm pack`, then `npm i -g` of the tarball into a temp
// prefix; --prefer-offline: the dependencies from npm's cache, their metadata from the registry when
// the cache has none, as a tarball has no lockfile), run as the `huddle` on the PATH (a symlink to
// cli.js, so argv[1] is not cli.js), starts a Claude Code teammate: its MCP server is
// found from the bundle itself (runtime/process/huddle-entry.ts). The real pinned Claude Code CLI,
// the fake Messages API.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { CLAUDE_CODE_BIN, claudeCodeEnv, skipWithoutClaudeCode } from '../../helpers/claude-code-teammate.js';
import { packHuddle, runProgram } from '../../helpers/packed-huddle.js';
import { TEST_API_KEY } from '../../helpers/run-cli.js';
import { trustWorkspace } from '../../helpers/trust.js';

const temps: string[] = [];
let fake: FakeApi;
beforeEach(async () => {
  fake = await startFakeApi();
});
afterEach(async () => {
  await fake.close();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

describe.skipIf(skipWithoutClaudeCode())('an installed huddle', () => {
  it('packed, installed globally and run from the PATH, starts a Claude Code teammate that reports through huddle mcp', async () => {
    const packDir = temp('huddle-pack-');
    const tarball = packHuddle(packDir);
    const prefix = temp('huddle-prefix-');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: packDir,
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    const bin = path.join(prefix, 'bin', 'huddle');

    const ws = temp('huddle-installed-ws-');
    const report = 'alice here: reporting from an installed huddle';
    fake.script(
      'lead',
      reply(text('Spawning alice.'), toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Report to the lead.', agent: 'claude-code' })),
      replyText('Waiting for alice.'),
      replyText('alice reported.'),
    );
    fake.script('alice', reply(toolUse('mcp__huddle__send_message', { to: 'lead', content: report })), replyText('Reported.'));
    mkdirSync(path.join(ws, '.team'), { recursive: true });
    writeFileSync(path.join(ws, '.team', 'settings.json'), JSON.stringify({ agents: { 'claude-code': { command: CLAUDE_CODE_BIN } } }));
    trustWorkspace(ws);

    const env: NodeJS.ProcessEnv = {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: fake.url,
      HUDDLE_RETRY_BASE_MS: '5',
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
      XDG_STATE_HOME: process.env.XDG_STATE_HOME,
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      ...claudeCodeEnv(path.join(ws, '..', `${path.basename(ws)}-home`)),
    };
    temps.push(path.join(ws, '..', `${path.basename(ws)}-home`));
    const result = await runProgram(bin, ['-p', 'Have alice report.'], { cwd: ws, env, timeoutMs: 180_000 });
    expect(result.stderr).not.toMatch(/cannot tell where huddle's cli\.js is|HUDDLE_CLI/);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('alice reported.');
    const inbox = readFileSync(path.join(ws, '.team', 'inbox', 'lead.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(inbox.filter((m) => m.content === report && m.from === 'alice')).toHaveLength(1);
  }, 240_000);
});
