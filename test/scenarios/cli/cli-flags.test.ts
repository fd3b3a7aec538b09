// Claude Code's flags on huddle's command line (docs/contract.md#claude-code-flags): an unknown flag is
// huddle's one line, not Node's raw parser text; aliases resolve to priced ids; Claude Code's
// permission modes are mapped; what huddle cannot honour is refused by name with the reason.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, REPO_ROOT, runCli, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-flags-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

const run = (args: string[]) => runCli(args, { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });

describe("Claude Code's flags", () => {
  it("an unknown flag is huddle's one line and exit 2", async () => {
    const result = await run(['-p', 'hi', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("huddle: unknown option '--bogus' (huddle --help lists them)\nRun 'huddle --help' for usage.\n");
    expect(result.stderr).not.toContain('positional argument');
  });

  it('a subcommand says the same for a flag it does not take', async () => {
    const result = await run(['status', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("huddle: unknown option '--bogus' for huddle status (huddle --help lists them)\nRun 'huddle --help' for usage.\n");
  });

  it('flags of headless runs only are refused for the console by name', async () => {
    for (const flag of [['--include-partial-messages'], ['--session-id', '00000000-0000-4000-8000-000000000000'], ['--fork-session']]) {
      const result = await run(flag);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^huddle: ${flag[0]} goes with -p "PROMPT"`));
    }
  });

  it("the console's --backlog is refused headless, and its companions without it", async () => {
    const headless = await run(['-p', 'hi', '--backlog', 'local']);
    expect(headless.code).toBe(2);
    expect(headless.stderr).toMatch(/^huddle: --backlog goes with the console \(huddle --backlog SOURCE\), or huddle run --backlog SOURCE headless\n/);
    const alone = await run(['--github-api-url', 'http://127.0.0.1:1']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^huddle: --github-api-url goes with --backlog SOURCE\n/);
  });

  it('--model opus is sent as the current Opus id and priced', async () => {
    fake.script('lead', replyText('Done.'));
    const result = await run(['-p', 'hi', '--model', 'opus', '--output-format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests[0]!.body.model).toBe('claude-opus-4-8');
    expect(JSON.parse(result.stdout).total_cost_usd).toBeGreaterThan(0);
  });

  it.each([
    ['default', 'default'],
    ['acceptEdits', 'acceptEdits'],
    ['bypassPermissions', 'bypassPermissions'],
    ['dontAsk', 'dontAsk'],
    ['plan', 'plan'],
  ])('--permission-mode %s is accepted and shown back in the init line', async (mode, shown) => {
    fake.script('lead', replyText('Done.'));
    const result = await run(['-p', 'hi', '--permission-mode', mode, '--output-format', 'stream-json', '--verbose']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.split('\n')[0]!).permissionMode).toBe(shown);
  });

  it('--append-system-prompt reaches the lead after its own instructions; --system-prompt replaces them', async () => {
    fake.script('lead', replyText('One.'), replyText('Two.'));
    expect((await run(['-p', 'hi', '--append-system-prompt', 'Always answer in French.'])).code).toBe(0);
    const appended = JSON.stringify(fake.requests[0]!.body.system);
    expect(appended).toContain('You lead a team');
    expect(appended).toContain('Always answer in French.');
    expect((await run(['-p', 'hi', '--continue', '--system-prompt', 'You are a terse assistant.'])).code).toBe(0);
    const replaced = JSON.stringify(fake.requests.at(-1)!.body.system);
    expect(replaced).toContain('You are a terse assistant.');
    expect(replaced).not.toContain('You lead a team');
    // The lead keeps the line that names it to its team.
    expect(replaced).toMatch(/You are 'lead', role: lead, team: /);
  });

  it.each([
    [['--add-dir', '/tmp'], /^huddle: --add-dir is not supported: huddle's file tools are confined to the workspace/],
    [['--mcp-config', 'missing.json'], /^huddle: --mcp-config missing\.json: cannot be read \(ENOENT\)/],
    [['--mcp-config', '{"servers":{}}'], /^huddle: --mcp-config \{"servers":\{\}\}: expected \{"mcpServers": \{…\}\}/],
    [['--strict-mcp-config'], /^huddle: --strict-mcp-config goes with --mcp-config/],
    [['--settings', '{nope'], /^huddle: --settings \{…\}: not valid JSON/],
    [['--disallowedTools', 'Bash(rm'], /^huddle: --disallowedTools: 'Bash\(rm' is not a tool rule/],
    [
      ['--permission-mode', 'ask', '--allowedTools', 'Bash'],
      /^huddle: --allowedTools: 'Bash' in ask mode: name the command \(Bash\(git \*\), Bash\(npm test\)\)/,
    ],
    [['--permission-mode', 'ask', '--allowedTools', 'Bash(git * --force)'], /^huddle: --allowedTools: 'Bash\(git \* --force\)' in ask mode/],
    [['--allowedTools', 'NotebookEdit'], /^huddle: --allowedTools: huddle has no tool like 'NotebookEdit'/],
    [['--setting-sources', 'user,team'], /^huddle: --setting-sources takes user, project and local \(comma-separated\), not 'team'/],
    [
      ['--permission-mode', 'yolo'],
      /^huddle: --permission-mode takes plan, ask or auto, not 'yolo' \(Claude Code's default, acceptEdits, bypassPermissions and dontAsk are mapped onto them\)/,
    ],
    [['--permission-prompt-tool', 'mcp__x__ask'], /^huddle: --permission-prompt-tool mcp__x__ask is not supported/],
    [['--resume', 'not-a-uuid'], /^huddle: --resume takes a session id/],
    [['--no-session-persistence'], /^huddle: --no-session-persistence is not supported: huddle keeps the team's state in \.team\//],
  ])('%j is refused by name with the reason, exit 2, nothing run', async (flags, message) => {
    const result = await run(['-p', 'hi', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.split('\n')).toHaveLength(3);
    expect(fake.requests).toHaveLength(0);
  });

  it("--allowedTools 'Bash(touch *)' lets that command run without a question in default mode, for this run only", async () => {
    fake.script(
      'lead',
      reply(toolUse('bash', { command: 'touch allowed.txt' })),
      replyText('Made it.'),
      reply(toolUse('bash', { command: 'touch later.txt' })),
      replyText('Refused.'),
    );
    const result = await run(['-p', 'make it', '--permission-mode', 'default', '--allowedTools', 'Bash(touch *)', '--output-format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(ws.dir, 'allowed.txt'))).toBe(true);
    expect(JSON.parse(result.stdout).permission_denials).toEqual([]);
    // Not stored: the next run without the flag is asked (nobody answers headless: denied).
    const next = await run(['-p', 'again', '--continue', '--permission-mode', 'default', '--output-format', 'json']);
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(path.join(ws.dir, 'later.txt'))).toBe(false);
    expect(JSON.parse(next.stdout).permission_denials).toHaveLength(1);
  });

  it('--allowedTools rules huddle honours in the mode pass: reading always, edits in ask, anything in bypassPermissions', async () => {
    fake.script('lead', replyText('One.'), replyText('Two.'));
    expect((await run(['-p', 'hi', '--permission-mode', 'acceptEdits', '--allowedTools', 'Read,Edit', 'Grep'])).code).toBe(0);
    expect((await run(['-p', 'hi', '--continue', '--dangerously-skip-permissions', '--allowedTools', 'Bash(git *)'])).code).toBe(0);
  });

  it.each([
    ['--disallowedTools', ['--disallowedTools', 'Bash(touch:*)']],
    ['--settings JSON', ['--settings', '{"permissions":{"deny":["Bash(touch:*)"]}}']],
  ])('%s: a deny rule refuses the command even in bypassPermissions, listed in permission_denials', async (_, flags) => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch denied.txt' })), replyText('Refused.'));
    const result = await run(['-p', 'make it', '--dangerously-skip-permissions', '--output-format', 'json', ...flags]);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(ws.dir, 'denied.txt'))).toBe(false);
    expect(JSON.parse(result.stdout).permission_denials).toMatchObject([{ tool_name: 'Bash', tool_input: { command: 'touch denied.txt' } }]);
  });

  it('--settings with a broken rule is one line naming it, nothing run', async () => {
    const result = await run(['-p', 'hi', '--settings', '{"permissions":{"deny":["Bash(rm"]}}']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^huddle: --settings: permissions\.deny\[0\].*not a tool rule/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);
  });

  it('--mcp-config with --strict-mcp-config: only its servers start; the untrusted .mcp.json is not read, so not refused', async () => {
    const everything = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
    writeFileSync(path.join(ws.dir, '.mcp.json'), JSON.stringify({ mcpServers: { evil: { command: 'sh', args: ['-c', 'touch pwned'] } } }));
    const config = JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } });
    fake.script('lead', replyText('Fine.'));
    const strict = await run(['-p', 'hi', '--output-format', 'stream-json', '--verbose', '--mcp-config', config, '--strict-mcp-config']);
    expect(strict.code, strict.stderr).toBe(0);
    expect(JSON.parse(strict.stdout.split('\n')[0]!).mcp_servers).toEqual([{ name: 'everything', status: 'connected' }]);
    expect(existsSync(path.join(ws.dir, 'pwned'))).toBe(false);
    // Without --strict-mcp-config, .mcp.json is read too, and waits for trust as ever.
    const loose = await run(['-p', 'hi', '--mcp-config', config]);
    expect(loose.code).toBe(2);
    expect(loose.stderr).toContain('.mcp.json');
  });

  it('--allowedTools mcp__server__tool lets that MCP tool run unasked in default mode, for this run only', async () => {
    const everything = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
    const config = JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } });
    // Not marked read-only by its server: default mode asks, and nobody answers headless.
    const tool = 'mcp__everything__toggle-simulated-logging';
    const once = async (extra: string[]) => {
      fake.script('lead', reply(toolUse(tool, {})), replyText('Done.'));
      const result = await run(['-p', 'toggle it', '--permission-mode', 'default', '--mcp-config', config, '--output-format', 'json', ...extra]);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout).permission_denials as unknown[];
    };
    expect(await once([])).toMatchObject([{ tool_name: tool }]);
    expect(await once(['--continue', '--allowedTools', tool])).toEqual([]);
  });

  it('--fallback-model: a model still overloaded (529) after every retry gives way to the fallback, for that call and the next', async () => {
    fake.respond((request) => {
      if (request.path !== '/v1/messages') return undefined;
      if (request.body.model === 'claude-opus-4-8')
        return { kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
      return (request.body.messages ?? []).some((m: { role: string }) => m.role === 'assistant')
        ? replyText('Done.')
        : reply(toolUse('bash', { command: 'true' }));
    });
    const result = await runCli(['-p', 'hi', '--model', 'opus', '--fallback-model', 'haiku', '--output-format', 'json'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url, HUDDLE_MAX_RETRIES: '1' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).result).toBe('Done.');
    const models = fake.requests.filter((r) => r.path === '/v1/messages').map((r) => r.body.model);
    // Two tries of opus (one retry), then haiku for that call and the one after the tool result.
    expect(models).toEqual(['claude-opus-4-8', 'claude-opus-4-8', 'claude-haiku-4-5', 'claude-haiku-4-5']);
  });
});
