// `--output-format stream-json` and `json` have Claude Code's shape: the real Claude Code CLI (the
// pinned devDependency @anthropic-ai/claude-code) and huddle run the same scripted rounds against
// the fake Messages API, and their lines are compared field by field. Also: the prompt from stdin
// and --prompt-file. Needs Claude Code's native binary: fails under CI=true without it.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findClaudeCode, runClaudeCode, CLAUDE_CODE_INSTALL } from '../../helpers/claude-code.js';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse, type RecordedRequest } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH, makeWorkspace, REPO_ROOT, runCli, type Workspace } from '../../helpers/run-cli.js';

type Line = Record<string, any>;

const CLAUDE = findClaudeCode();
if (!CLAUDE && process.env.CI === 'true') {
  throw new Error(`Claude Code is missing (${CLAUDE_CODE_INSTALL}); CI must compare against it`);
}

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-formats-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

/** The same two tool rounds for either client, in its own tool names: write a file, run a command, answer. */
function script(dialect: 'huddle' | 'claude-code', dir: string): void {
  fake.respond((request: RecordedRequest) => {
    if (request.path !== '/v1/messages') return undefined;
    const done = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === 'assistant').length;
    if (done === 0)
      return reply(
        text('Writing it.'),
        dialect === 'huddle'
          ? toolUse('write_file', { path: 'a.txt', content: 'hi\n' })
          : toolUse('Write', { file_path: path.join(dir, 'a.txt'), content: 'hi\n' }),
      );
    if (done === 1)
      return reply(dialect === 'huddle' ? toolUse('bash', { command: 'cat a.txt' }) : toolUse('Bash', { command: 'cat a.txt', description: 'show it' }));
    return replyText('All done.');
  });
}

function lines(stdout: string): Line[] {
  expect(stdout.endsWith('\n'), 'output ends with a newline').toBe(true);
  return stdout
    .trimEnd()
    .split('\n')
    .map((line, i) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
      }
    });
}

const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Every field of `reference` named in `fields` is in `actual`, with the same JSON type. */
function sameShape(actual: Line, reference: Line, fields: string[], where: string): void {
  for (const field of fields) {
    expect(reference, `Claude Code's ${where} has ${field}`).toHaveProperty(field);
    expect(actual, `huddle's ${where} has ${field}`).toHaveProperty(field);
    expect(kind(actual[field]), `${where}.${field}: ${JSON.stringify(actual[field])} vs ${JSON.stringify(reference[field])}`).toBe(kind(reference[field]));
  }
}

/** The line's kind: system/init, assistant/<block type>, user/tool_result, result. */
function signature(line: Line): string {
  if (line.type === 'system') return `system/${line.subtype}`;
  if (line.type === 'assistant') return `assistant/${line.message.content.map((b: Line) => b.type).join('+')}`;
  if (line.type === 'user') return `user/${line.message.content.map((b: Line) => b.type).join('+')}`;
  return String(line.type);
}

async function claudeCode(format: 'stream-json' | 'json'): Promise<string> {
  script('claude-code', ws.dir);
  const run = await runClaudeCode({ bin: CLAUDE!, cwd: ws.dir, baseUrl: fake.url, prompt: 'write a.txt and show it', format, timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

async function huddle(format: 'stream-json' | 'json'): Promise<string> {
  script('huddle', ws.dir);
  const run = await runCli(['-p', 'write a.txt and show it', '--output-format', format, ...(format === 'stream-json' ? ['--verbose'] : [])], {
    cwd: ws.dir,
    env: { ANTHROPIC_BASE_URL: fake.url },
  });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

const RESULT_FIELDS = [
  'type',
  'subtype',
  'is_error',
  'result',
  'num_turns',
  'duration_ms',
  'duration_api_ms',
  'total_cost_usd',
  'usage',
  'session_id',
  'stop_reason',
  'modelUsage',
  'permission_denials',
  'uuid',
];

describe.skipIf(!CLAUDE)(`stream-json and json have Claude Code's shape${CLAUDE ? '' : ` (skipped: Claude Code is missing; ${CLAUDE_CODE_INSTALL})`}`, () => {
  it('stream-json: the same lines in the same order, field by field', async () => {
    const reference = lines(await claudeCode('stream-json'));
    const ours = lines(await huddle('stream-json'));

    // The same sequence: init, the lead's blocks one line each, tool results, the result.
    expect(ours.map(signature)).toEqual(reference.map(signature));

    // First line: init.
    const [init, refInit] = [ours[0]!, reference[0]!];
    sameShape(init, refInit, ['type', 'subtype', 'cwd', 'session_id', 'tools', 'mcp_servers', 'model', 'permissionMode', 'apiKeySource', 'uuid'], 'init');
    expect(init.cwd).toBe(ws.dir);
    // Tools as Claude Code names them (huddle's own, such as spawn_teammate, keep their names).
    expect(init.tools).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit', 'Read', 'spawn_teammate']));
    expect(refInit.tools).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit', 'Read']));

    // Message lines.
    for (let i = 1; i < ours.length - 1; i++) {
      const where = `line ${i + 1} (${signature(reference[i]!)})`;
      sameShape(ours[i]!, reference[i]!, ['type', 'message', 'parent_tool_use_id', 'session_id', 'uuid'], where);
      expect(ours[i]!.parent_tool_use_id, `${where}: the lead's lines are the main thread`).toBeNull();
      expect(ours[i]!.session_id).toBe(init.session_id);
      const [message, refMessage] = [ours[i]!.message, reference[i]!.message];
      if (ours[i]!.type === 'assistant') {
        sameShape(message, refMessage, ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage'], `${where}.message`);
        sameShape(
          message.usage,
          refMessage.usage,
          ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'],
          `${where}.message.usage`,
        );
        const [block, refBlock] = [message.content[0], refMessage.content[0]];
        sameShape(block, refBlock, block.type === 'text' ? ['type', 'text'] : ['type', 'id', 'name', 'input'], `${where} block`);
        if (block.type === 'tool_use') {
          // Claude Code's tool names and input fields: Write {file_path (absolute), content}, Bash {command}.
          expect(block.name, `${where}: the tool's name`).toBe(refBlock.name);
          expect(Object.keys(block.input).length).toBeGreaterThan(0);
          expect(refBlock.input, `${where}: the tool's input`).toMatchObject(block.input);
        }
        // Blocks of one response carry that response's id, as Claude Code's do.
        expect(message.id).toMatch(/^msg_fake_\d+$/);
      } else {
        sameShape(message, refMessage, ['role', 'content'], `${where}.message`);
        sameShape(message.content[0], refMessage.content[0], ['type', 'tool_use_id', 'content'], `${where} tool_result`);
        // tool_use_result: the tool's result in its own shape; every field huddle gives, Claude Code gives too, of the same type.
        const [toolResult, refToolResult] = [ours[i]!.tool_use_result, reference[i]!.tool_use_result];
        expect(kind(toolResult), `${where}.tool_use_result`).toBe(kind(refToolResult));
        if (kind(refToolResult) === 'object') {
          expect(Object.keys(toolResult).length).toBeGreaterThan(1);
          sameShape(toolResult, refToolResult, Object.keys(toolResult), `${where}.tool_use_result`);
        }
      }
    }
    // The two blocks of the first response share its id.
    expect(ours[1]!.message.id).toBe(ours[2]!.message.id);
    expect(reference[1]!.message.id).toBe(reference[2]!.message.id);

    // Last line: the result.
    const [result, refResult] = [ours.at(-1)!, reference.at(-1)!];
    sameShape(result, refResult, RESULT_FIELDS, 'result');
    sameShape(result.usage, refResult.usage, ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'], 'result.usage');
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'All done.', session_id: init.session_id });
    expect(result.num_turns).toBe(refResult.num_turns);
    expect(result.total_cost_usd).toBeGreaterThan(0);
    expect(Object.keys(result.modelUsage)).toEqual([init.model]);
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('hi\n');
  });

  it('json: only the result object, as Claude Code prints it', async () => {
    const reference = lines(await claudeCode('json'));
    const ours = lines(await huddle('json'));
    expect(reference).toHaveLength(1);
    expect(ours).toHaveLength(1);
    sameShape(ours[0]!, reference[0]!, RESULT_FIELDS, 'json result');
    expect(ours[0]).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'All done.', num_turns: reference[0]!.num_turns });
  });
});

describe.skipIf(!CLAUDE)('stream-json sessions and denials, beside Claude Code', () => {
  /** One answer per request, whatever was asked. */
  function answers(...texts: string[]): void {
    let n = 0;
    fake.respond((request) => (request.path === '/v1/messages' ? replyText(texts[Math.min(n++, texts.length - 1)]!) : undefined));
  }
  const resultOf = (stdout: string) => lines(stdout).at(-1)!;
  const initOf = (stdout: string) => lines(stdout)[0]!;

  it('--continue keeps the session id, --resume ID finds it, --fork-session makes a new one; an unknown id is refused', async () => {
    const home = path.join(ws.dir, '..', `${path.basename(ws.dir)}-cc-home`);
    const claudeDir = path.join(ws.dir, 'claude');
    const huddleDir = path.join(ws.dir, 'huddle');
    for (const dir of [home, claudeDir, huddleDir]) mkdirSync(dir, { recursive: true });
    try {
      const claude = async (prompt: string, args: string[]) => {
        answers('Fine.');
        const run = await runClaudeCode({ bin: CLAUDE!, cwd: claudeDir, baseUrl: fake.url, prompt, home, args });
        expect(run.code, run.stderr).toBe(0);
        return resultOf(run.stdout).session_id as string;
      };
      const ours = async (prompt: string, args: string[]) => {
        answers('Fine.');
        const run = await runCli(['-p', prompt, '--output-format', 'stream-json', '--verbose', ...args], {
          cwd: huddleDir,
          env: { ANTHROPIC_BASE_URL: fake.url },
        });
        expect(run.code, run.stderr).toBe(0);
        const out = lines(run.stdout);
        expect(new Set(out.map((line) => line.session_id)).size).toBe(1);
        return out.at(-1)!.session_id as string;
      };
      for (const run of [claude, ours]) {
        const first = await run('one', []);
        expect(await run('two', ['--continue'])).toBe(first);
        expect(await run('three', ['--resume', first])).toBe(first);
        const forked = await run('four', ['--continue', '--fork-session']);
        expect(forked).not.toBe(first);
      }
      const unknown = await runCli(['-p', 'five', '--resume', '00000000-0000-4000-8000-000000000000'], {
        cwd: huddleDir,
        env: { ANTHROPIC_BASE_URL: fake.url },
      });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/^huddle: no session 00000000-0000-4000-8000-000000000000 in this workspace/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    // Nine CLI runs one after another: on a loaded machine they take most of the default 30 s.
  }, 120_000);

  it("mcp_servers in the init line: the workspace's MCP servers and their states, as Claude Code lists them", async () => {
    const everything = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
    const config = { mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } };
    writeFileSync(path.join(ws.dir, 'servers.json'), JSON.stringify(config));
    answers('Fine.');
    const reference = await runClaudeCode({
      bin: CLAUDE!,
      cwd: ws.dir,
      baseUrl: fake.url,
      prompt: 'hi',
      args: ['--no-session-persistence', '--mcp-config', path.join(ws.dir, 'servers.json'), '--strict-mcp-config'],
    });
    expect(reference.code, reference.stderr).toBe(0);
    writeFileSync(path.join(ws.dir, '.mcp.json'), JSON.stringify(config));
    answers('Fine.');
    const run = await runCli(['-p', 'hi', '--output-format', 'stream-json', '--verbose', '--trust'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(run.code, run.stderr).toBe(0);
    const [ours, refInit] = [initOf(run.stdout).mcp_servers, initOf(reference.stdout).mcp_servers];
    // Claude Code adds where a server came from (`source: "dynamic"` for --mcp-config).
    expect(refInit).toMatchObject([{ name: 'everything', status: 'connected' }]);
    expect(ours).toEqual([{ name: 'everything', status: 'connected' }]);
  });

  it('permission_denials: a command nobody is there to approve is listed, by both', async () => {
    const scriptDenied = (dialect: 'huddle' | 'claude-code') =>
      fake.respond((request) => {
        if (request.path !== '/v1/messages') return undefined;
        const done = (request.body?.messages ?? []).filter((m: { role: string }) => m.role === 'assistant').length;
        if (done === 0)
          return reply(
            dialect === 'huddle' ? toolUse('bash', { command: 'touch denied.txt' }) : toolUse('Bash', { command: 'touch denied.txt', description: 'make it' }),
          );
        return replyText('It was not allowed.');
      });
    scriptDenied('claude-code');
    const reference = await runClaudeCode({
      bin: CLAUDE!,
      cwd: ws.dir,
      baseUrl: fake.url,
      prompt: 'make denied.txt',
      args: ['--no-session-persistence', '--permission-mode', 'default'],
    });
    expect(reference.code, reference.stderr).toBe(0);
    scriptDenied('huddle');
    const run = await runCli(['-p', 'make denied.txt', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'default'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url },
    });
    expect(run.code, run.stderr).toBe(0);
    const [ours, refResult] = [resultOf(run.stdout), resultOf(reference.stdout)];
    expect(refResult.permission_denials).toHaveLength(1);
    expect(ours.permission_denials).toHaveLength(1);
    sameShape(ours.permission_denials[0], refResult.permission_denials[0], ['tool_name', 'tool_use_id', 'tool_input'], 'permission_denials[0]');
    expect(ours.permission_denials[0]).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'touch denied.txt' } });
    expect(refResult.permission_denials[0]).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'touch denied.txt' } });
    expect(initOf(run.stdout).permissionMode).toBe('default');
    expect(existsSync(path.join(ws.dir, 'denied.txt'))).toBe(false);
  });
});

describe('stream-json without Claude Code', () => {
  it('a failed run ends with an error result and exit 1', async () => {
    fake.enqueue({ kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'bad request' } } });
    const run = await runCli(['-p', 'hi', '--output-format', 'stream-json', '--verbose'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(run.code).toBe(1);
    const out = lines(run.stdout);
    expect(out[0]).toMatchObject({ type: 'system', subtype: 'init' });
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'error_during_execution', is_error: true, exit_code: 1 });
    expect(out.at(-1)!.result).toContain('failed');
  });

  it('refuses --json with --output-format stream-json, and an unknown format', async () => {
    const both = await runCli(['-p', 'hi', '--json', '--output-format', 'stream-json'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--json and --output-format stream-json exclude each other');
    const unknown = await runCli(['-p', 'hi', '--output-format', 'yaml'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--output-format takes text, json or stream-json, not 'yaml'");
    expect(fake.requests).toHaveLength(0);
  });
});

/** Runs the CLI with `input` on stdin. */
function withStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: ws.dir,
      env: { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function promptSent(): string {
  const first = fake.requests[0]!.body.messages[0];
  return first.content.map((block: { text?: string }) => block.text ?? '').join('');
}

describe('the prompt from stdin or a file', () => {
  it('`echo … | huddle -p` and `-p -` read the prompt from stdin', async () => {
    fake.enqueue(replyText('from stdin'), replyText('dash too'));
    const piped = await withStdin(['-p'], 'what is in stdin?\n');
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('from stdin\n');
    expect(promptSent()).toBe('what is in stdin?');
    const dash = await withStdin(['-p', '-', '--fresh'], 'the dash form');
    expect(dash.code, dash.stderr).toBe(0);
    expect(dash.stdout).toBe('dash too\n');
    expect(fake.requests[1]!.body.messages[0].content.map((b: { text?: string }) => b.text).join('')).toBe('the dash form');
  });

  it('-p followed by another option reads stdin too', async () => {
    fake.enqueue(replyText('{}'));
    const run = await withStdin(['-p', '--output-format', 'json'], 'json please');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'result', result: '{}' });
    expect(promptSent()).toBe('json please');
  });

  it('a 1 MB prompt on stdin arrives whole', async () => {
    fake.enqueue(replyText('read it all'));
    const big = `${'0123456789abcdef'.repeat(65_536)}END`;
    const run = await withStdin(['-p'], big);
    expect(run.code, run.stderr).toBe(0);
    expect(promptSent()).toBe(big);
  });

  it('--prompt-file reads the prompt from a file', async () => {
    fake.enqueue(replyText('from a file'));
    writeFileSync(path.join(ws.dir, 'prompt.md'), 'the prompt in a file\n');
    const run = await runCli(['--prompt-file', 'prompt.md'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('from a file\n');
    expect(promptSent()).toBe('the prompt in a file');
  });

  it('an empty stdin or a missing prompt file is one clear line and exit 2', async () => {
    const empty = await withStdin(['-p'], '  \n');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe("huddle: -p read an empty prompt from stdin\nRun 'huddle --help' for usage.\n");
    const missing = await runCli(['--prompt-file', 'nope.md'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read --prompt-file nope.md: no such file');
    expect(fake.requests).toHaveLength(0);
  });
});
