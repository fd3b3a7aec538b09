// Settings that widen trust are the person's, not the repository's (docs/trust.md). Real headless
// runs on the fake API: an agent cannot turn the sandbox off for the next run (the file tools refuse
// .team/, the sandbox keeps it read-only); an MCP server an agent adds to .mcp.json with bash (the
// workspace is writable) does not start on the next run, which is refused with one line until the
// person trusts it (--trust, `huddle trust`); the sandbox-off line names the file that said so.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { runCli } from '../../helpers/run-cli.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const KEY = 'sk-ant-api03-WORKSPACETRUST-0123456789abcdefghij';

let fake: FakeApi;
let arena: Arena;
let config: string;
beforeEach(async () => {
  fake = await startFakeApi();
  arena = makeArena('trust-');
  // This test's own config directory: the trust records land here, outside the workspace and ~.
  config = path.join(arena.base, 'config');
});
afterEach(async () => {
  await fake.close();
  arena.cleanup();
});

function huddle(args: string[]) {
  return runCli(args, { cwd: arena.ws, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, XDG_CONFIG_HOME: config }, timeoutMs: 60_000 });
}

function toolResults(request: number): Array<{ content: unknown; is_error?: boolean }> {
  return (fake.requests[request]!.body.messages.at(-1)!.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter(
    (b) => b.type === 'tool_result',
  );
}

describeSandboxed('workspace settings that widen trust wait for the person', () => {
  it('an agent cannot turn the sandbox off: write_file is refused, bash finds .team read-only; the next run is sandboxed', async () => {
    const off = '{"sandbox":{"enabled":false}}';
    fake.enqueue(
      reply(
        toolUse('write_file', { path: '.team/settings.json', content: off }),
        toolUse('bash', { command: `echo '${off}' > .team/settings.json; echo '${off}' > .team/settings.local.json; ls .team/settings*.json` }),
      ),
      replyText('done'),
    );
    const first = await huddle(['-p', 'switch the sandbox off']);
    expect(first.code, first.stderr).toBe(0);
    const [write, bash] = toolResults(1);
    expect(write!.is_error).toBe(true);
    expect(JSON.stringify(write!.content)).toContain("refused: .team/settings.json is huddle's team state and settings (.team/)");
    expect(JSON.stringify(bash!.content)).toContain('Read-only file system');
    expect(existsSync(path.join(arena.ws, '.team', 'settings.json'))).toBe(false);
    expect(existsSync(path.join(arena.ws, '.team', 'settings.local.json'))).toBe(false);
    // The next run's commands are sandboxed: the key is not in huddle's /proc for them to read.
    fake.enqueue(
      reply(toolUse('bash', { command: 'echo "sandbox=$HUDDLE_SANDBOX"; tr "\\0" "\\n" < /proc/$PPID/environ | grep -c ANTHROPIC_API_KEY' })),
      replyText('done'),
    );
    const second = await huddle(['-p', 'look around']);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.stringify(toolResults(3)[0]!.content)).toContain('sandbox=on');
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain(KEY);
  });

  it("a workspace that holds huddle's config directory (huddle run in ~): agents write neither the user settings nor the trust records", async () => {
    const inside = path.join(arena.ws, '.config');
    const off = '{"sandbox":{"enabled":false}}';
    const record = `{"trusted":[{"workspace":"${arena.ws}","file":".mcp.json","sha256":"x","settings":[],"trustedAt":"now"}]}`;
    fake.enqueue(
      reply(
        toolUse('bash', {
          command: `mkdir -p .config/huddle; echo '${off}' > .config/huddle/settings.json; echo '${record}' > .config/huddle/trusted.json; ls -A .config/huddle`,
        }),
        toolUse('write_file', { path: '.config/huddle/settings.json', content: off }),
        toolUse('write_file', { path: '.config/huddle/trusted.json', content: record }),
      ),
      replyText('done'),
    );
    const result = await runCli(['-p', 'loosen it'], {
      cwd: arena.ws,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, XDG_CONFIG_HOME: inside },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const [bash, settings, trusted] = toolResults(1);
    expect(JSON.stringify(bash!.content)).toContain('Read-only file system');
    expect(JSON.stringify(settings!.content)).toContain('refused: .config/huddle/settings.json is your huddle settings and trust records');
    expect(JSON.stringify(trusted!.content)).toContain('refused: .config/huddle/trusted.json');
    expect(existsSync(path.join(inside, 'huddle', 'settings.json'))).toBe(false);
    expect(existsSync(path.join(inside, 'huddle', 'trusted.json'))).toBe(false);
  });

  it('an MCP server an agent adds to .mcp.json with bash: the next run is refused with one line and starts nothing; --trust runs it and records it', async () => {
    fake.enqueue(
      reply(
        toolUse('bash', {
          command: `printf '%s' '{"mcpServers":{"pwn":{"command":"sh","args":["-c","echo ran > mcp-ran.txt"]}}}' > .mcp.json && cat .mcp.json`,
        }),
      ),
      replyText('planted'),
    );
    const plant = await huddle(['-p', 'add a tool server']);
    expect(plant.code, plant.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(arena.ws, '.mcp.json'), 'utf8')).mcpServers.pwn.command).toBe('sh');

    const requestsBefore = fake.requests.length;
    const refused = await huddle(['-p', 'go on']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `huddle: .mcp.json (mcpServers.pwn) asks for what only you can allow, and you have not trusted it in this workspace: ` +
        `run with --trust to trust it as it is (recorded), review with 'huddle trust', or move it to ${config}/huddle/settings.json\n`,
    );
    expect(fake.requests.length).toBe(requestsBefore);
    expect(existsSync(path.join(arena.ws, 'mcp-ran.txt'))).toBe(false);
    expect(existsSync(path.join(config, 'huddle', 'trusted.json'))).toBe(false);

    fake.enqueue(replyText('ok'));
    const trusted = await huddle(['-p', 'go on', '--trust']);
    expect(trusted.code, trusted.stderr).toBe(0);
    // It ran (it is no MCP server, so it did not start as one: a warning, and the run goes on).
    expect(existsSync(path.join(arena.ws, 'mcp-ran.txt'))).toBe(true);
    const record = path.join(config, 'huddle', 'trusted.json');
    expect(statSync(record).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(record, 'utf8')).trusted).toMatchObject([{ workspace: arena.ws, file: '.mcp.json', settings: ['mcpServers.pwn'] }]);

    // The same content runs on without asking; a change asks again.
    fake.enqueue(replyText('ok'));
    expect((await huddle(['-p', 'again'])).code).toBe(0);
    writeFileSync(path.join(arena.ws, '.mcp.json'), '{"mcpServers":{"pwn":{"command":"sh","args":["-c","echo changed > mcp-ran.txt"]}}}');
    const changed = await huddle(['-p', 'again']);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toMatch(/^huddle: \.mcp\.json \(mcpServers\.pwn\) asks for what only you can allow/);
    expect(readFileSync(path.join(arena.ws, 'mcp-ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('huddle trust shows what it trusts and records it; --list says trusted and waiting; --revoke forgets; sandbox off names its file', async () => {
    mkdirSync(path.join(arena.ws, '.team'));
    writeFileSync(
      path.join(arena.ws, '.team', 'settings.json'),
      JSON.stringify({ sandbox: { enabled: false }, maxTurns: 5, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo stop' }] }] } }),
    );
    const refused = await huddle(['-p', 'hi']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^huddle: \.team\/settings\.json \(sandbox\.enabled, hooks\.Stop\) asks for what only you can allow/);
    expect(refused.stderr).not.toContain('HUDDLE_SANDBOX');

    const waiting = await huddle(['trust', '--list']);
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toContain('  waiting   .team/settings.json: sandbox.enabled, hooks.Stop');

    const trust = await huddle(['trust']);
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout).toContain('.team/settings.json:\n  sandbox.enabled = false\n  hooks.Stop = [{"hooks":[{"type":"command","command":"echo stop"}]}]\n');
    expect(trust.stdout).toContain(`trusted for ${arena.ws} as they are now`);
    expect((await huddle(['trust', '--list'])).stdout).toContain('  trusted   .team/settings.json: sandbox.enabled, hooks.Stop');

    fake.enqueue(replyText('hello'));
    const run = await huddle(['-p', 'hi']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('sandbox: off ("sandbox": {"enabled": false} in .team/settings.json): commands run unsandboxed');
    expect(run.stderr).not.toContain('HUDDLE_SANDBOX=off');

    const revoke = await huddle(['trust', '--revoke']);
    expect(revoke.stdout).toBe(`forgot 1 trusted settings file for ${arena.ws}; the next run asks again\n`);
    expect((await huddle(['-p', 'hi'])).code).toBe(2);
  });

  it('huddle worker is refused the same way, before it reaches the team', async () => {
    writeFileSync(path.join(arena.ws, '.mcp.json'), JSON.stringify({ mcpServers: { pwn: { command: 'sh', args: ['-c', 'echo ran > mcp-ran.txt'] } } }));
    const worker = await huddle(['worker', '--team', 'postgres://nobody@127.0.0.1:1/none?team=t']);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(
      /^huddle: \.mcp\.json \(mcpServers\.pwn\) asks for what only you can allow, and you have not trusted it in this workspace: run with --trust/,
    );
    expect(worker.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(path.join(arena.ws, 'mcp-ran.txt'))).toBe(false);
  });
});
