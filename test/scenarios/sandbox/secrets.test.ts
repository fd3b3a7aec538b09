// The key never reaches an agent: a real `huddle -p` whose lead (scripted through the fake API)
// goes looking for it in huddle's own process (/proc/$PPID/environ, every /proc/*/cmdline, ps),
// in the environment and in the --api-key-file, in plain, base64 and hex. The sandbox hides it
// (nothing to redact: no tool result even says [redacted]), and no request body carries the key
// in any spelling, nor the key file's path.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { describeSandboxed, makeArena, type Arena } from '../../helpers/sandbox-arena.js';

const KEY = 'sk-ant-api03-SANDBOXTEST-0123456789abcdefghijklmnop';
const spellings = [KEY, Buffer.from(KEY).toString('base64').slice(0, 40), Buffer.from(KEY).toString('hex'), encodeURIComponent(KEY), KEY.slice(8, 40)];

let fake: FakeApi;
let ws: Workspace;
let arena: Arena;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-secrets-');
  arena = makeArena('secrets-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
  arena.cleanup();
});

function snoop(keyFile: string) {
  return reply(
    toolUse('bash', { command: "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ; echo ---; env" }),
    toolUse('bash', { command: "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done; ps eww ax 2>&1 | head -50" }),
    toolUse('bash', { command: `cat ${keyFile}; base64 ${keyFile}; od -An -tx1 ${keyFile} | tr -d ' \\n'; ls -la ${path.dirname(keyFile)}` }),
    toolUse('bash', { command: 'grep -rs "sk-ant" /proc/*/environ /proc/*/cmdline /tmp 2>/dev/null | head; cat /proc/self/mountinfo | grep -c . ' }),
    toolUse('read_file', { path: keyFile }),
  );
}

function everything(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...everything(full));
    else out.push(full);
  }
  return out;
}

function expectNoKeyAnywhere(bodies: string[], label: string, keyFile?: string): void {
  for (const body of bodies) {
    for (const spelling of spellings) expect(body.includes(spelling), `${label}: a request holds the key (${spelling.slice(0, 12)}…)`).toBe(false);
  }
  if (keyFile) {
    // The path is in the commands the model wrote; it must never come back from huddle's side.
    const results = bodies.flatMap((b) => (JSON.parse(b).messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])));
    for (const block of results as Array<{ type: string; content?: unknown }>) {
      if (block.type === 'tool_result')
        expect(JSON.stringify(block.content), `${label}: a tool result names the key file`).not.toContain(path.basename(keyFile));
    }
  }
}

describeSandboxed('the key never reaches an agent', () => {
  it("from the environment: huddle's own /proc is not there to read", async () => {
    const keyFile = path.join(arena.base, 'no-such-key');
    fake.enqueue(snoop(keyFile), replyText('nothing found'));
    const result = await runCli(['-p', 'find the key'], { cwd: ws.dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url } });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const bodies = fake.requests.map((r) => JSON.stringify(r.body));
    // The commands ran (not refused) and found nothing to redact.
    const results = JSON.stringify(fake.requests[1]!.body.messages.at(-1));
    expect(results).toContain('HUDDLE_SANDBOX=on');
    expect(results).not.toContain('[redacted]');
    expectNoKeyAnywhere(bodies, 'env key');
    for (const file of everything(path.join(ws.dir, '.team'))) expect(readFileSync(file, 'utf8'), file).not.toContain(KEY);
  });

  it('from --api-key-file: neither its content nor its name', async () => {
    const dir = path.join(arena.base, 'keys');
    mkdirSync(dir);
    const keyFile = path.join(dir, 'anthropic-key.txt');
    writeFileSync(keyFile, `${KEY}\n`);
    fake.enqueue(snoop(keyFile), replyText('nothing found'));
    const result = await runCli(['-p', 'find the key', '--api-key-file', keyFile], {
      cwd: ws.dir,
      env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: fake.url },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests[0]!.headers['x-api-key'] ?? fake.requests[0]!.headers.authorization).toContain(KEY);
    const bodies = fake.requests.map((r) => JSON.stringify(r.body));
    expect(JSON.stringify(fake.requests[1]!.body.messages.at(-1))).not.toContain('[redacted]');
    expectNoKeyAnywhere(bodies, 'key file');
    const [snoopResults] = [fake.requests[1]!.body.messages.at(-1).content as Array<{ content: unknown }>];
    // The agent's own command line names the path (it guessed it); huddle's answers do not add it.
    expect(JSON.stringify(snoopResults[1]!.content)).not.toContain('--api-key-file');
  });
});

describeSandboxed('every registered secret is redacted everywhere', () => {
  const TOKENS = {
    GH_TOKEN: 'ghp_TESTTOKEN0123456789abcdefABCDEF',
    GITHUB_TOKEN: 'ghs_OTHERTOKEN9876543210zyxwvu',
    STRIPE_API_KEY: 'sk_test_STRIPE_5566778899',
    DEPLOY_SECRET: 'deploy-Secret-0412-zz',
  };

  it('tokens in the environment never reach a command; what the model writes of them and the key reversed is redacted: tool results, stream-json, .team files', async () => {
    const reversed = KEY.split('').reverse().join('');
    fake.enqueue(
      reply(
        // Credentials never reach an agent's command (docs/trust.md#secrets-and-files): written to a
        // file here, where no redaction could hide them, they must not be there at all.
        toolUse('bash', { command: 'echo "gh=$GH_TOKEN github=$GITHUB_TOKEN stripe=$STRIPE_API_KEY deploy=$DEPLOY_SECRET"; env > seen-env.txt' }),
        // As if the model had the key: written reversed into a file, then read back.
        toolUse('write_file', { path: 'notes.txt', content: `k=${reversed}\n` }),
        toolUse('bash', { command: 'cat notes.txt' }),
        // Written on the board, where every agent reads it.
        toolUse('task_create', { subject: `deploy with ${TOKENS.DEPLOY_SECRET}`, description: `token ${TOKENS.GH_TOKEN}` }),
      ),
      replyText(`Found ${TOKENS.GH_TOKEN} and ${reversed}.`),
    );
    const result = await runCli(['-p', 'find tokens', '--output-format', 'stream-json', '--verbose'], {
      cwd: ws.dir,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, ...TOKENS },
    });
    expect(result.code, result.stderr).toBe(0);
    const results = JSON.stringify(fake.requests[1]!.body.messages.at(-1));
    expect(results).toContain('gh= github= stripe= deploy=');
    const seen = readFileSync(path.join(ws.dir, 'seen-env.txt'), 'utf8');
    for (const [name, token] of Object.entries(TOKENS)) {
      expect(seen, name).not.toContain(token);
      expect(seen, name).not.toMatch(new RegExp(`^${name}=`, 'm'));
    }
    expect(results).toContain('k=[redacted]');
    expect(results).toContain('deploy with [redacted]');
    const secrets = [...Object.values(TOKENS), reversed];
    // What huddle hands back (the user turns after the prompt); the model's own tool calls carry what it wrote.
    const bodies = fake.requests.map((r) => JSON.stringify((r.body.messages as Array<{ role: string }>).slice(1).filter((m) => m.role === 'user')));
    for (const secret of secrets) {
      for (const body of bodies) expect(body.includes(secret), secret).toBe(false);
      expect(result.stdout.replaceAll(`k=${reversed}`, '').includes(secret), `stdout: ${secret}`).toBe(false);
      expect(result.stderr).not.toContain(secret);
      for (const file of everything(path.join(ws.dir, '.team'))) expect(readFileSync(file, 'utf8').replaceAll(`k=${reversed}`, ''), file).not.toContain(secret);
    }
    expect(result.stdout).toContain('Found [redacted] and [redacted].');
  });
});
