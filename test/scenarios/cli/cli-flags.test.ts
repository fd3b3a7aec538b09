// Claude Code's flags on huddle's command line (docs/contract.md#claude-code-flags): an unknown flag is
// huddle's one line, not Node's raw parser text; aliases resolve to priced ids; Claude Code's
// permission modes are mapped; what huddle cannot honour is refused by name with the reason.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

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
    [['--add-dir', '/tmp'], /^huddle: --add-dir is not supported: an agent's sandbox lets it write only the workspace/],
    [['--mcp-config', 'x.json'], /^huddle: --mcp-config is not supported: huddle's MCP servers come from \.mcp\.json/],
    [['--fallback-model', 'sonnet'], /^huddle: --fallback-model is not supported/],
    [['--settings', '{}'], /^huddle: --settings is not supported/],
    [['--disallowedTools', 'Bash'], /^huddle: --disallowedTools Bash: huddle cannot take tools away/],
    [
      ['--permission-mode', 'ask', '--allowedTools', 'Bash'],
      /^huddle: --allowedTools: 'Bash' in ask mode: name the command \(Bash\(git \*\), Bash\(npm test\)\)/,
    ],
    [['--permission-mode', 'ask', '--allowedTools', 'Bash(git * --force)'], /^huddle: --allowedTools: 'Bash\(git \* --force\)' in ask mode/],
    [['--allowedTools', 'NotebookEdit'], /^huddle: --allowedTools: huddle has no tool like 'NotebookEdit'/],
    [['--setting-sources', 'user'], /^huddle: --setting-sources user: huddle always reads its user, project and local settings/],
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
});
