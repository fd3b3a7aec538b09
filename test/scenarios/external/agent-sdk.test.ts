// The official Claude Agent SDK drives huddle (docs/contract.md#agent-sdk-protocol): its `query()`
// with `pathToClaudeCodeExecutable` pointed at the built dist/cli.js, against the fake Messages API.
// One agent, a conversation of several user messages, an interrupt, a question answered by the
// SDK's canUseTool, and a team whose teammate's messages arrive in the SDK's stream.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { query, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { type FakeApi, reply, replyText, startFakeApi, text, toolUse } from '../../helpers/fake-api.js';
import { baseEnv, CLI_PATH, makeWorkspace, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-sdk-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

/** The SDK starts `node cli.js`: the Node running the tests comes first on its PATH (huddle needs 22.12+). */
function options(extra: Record<string, unknown> = {}) {
  const env = { ...baseEnv(), ANTHROPIC_BASE_URL: fake.url, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  return { pathToClaudeCodeExecutable: CLI_PATH, cwd: ws.dir, env, stderr: (line: string) => stderr.push(line), ...extra };
}
let stderr: string[] = [];
beforeEach(() => {
  stderr = [];
});

async function collect(messages: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const out: SDKMessage[] = [];
  for await (const message of messages) out.push(message);
  return out;
}

function texts(messages: SDKMessage[]): string[] {
  return messages.flatMap((m) => (m.type === 'assistant' ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));
}

describe('the Claude Agent SDK drives huddle', () => {
  it('built dist/cli.js exists', () => {
    expect(existsSync(CLI_PATH), 'run npm run build first').toBe(true);
  });

  it("one agent: init, the lead's answer and a result, one session id throughout", async () => {
    fake.script('lead', replyText('Hello from huddle.'));
    const messages = await collect(query({ prompt: 'Say hello.', options: options() }));
    const init = messages.find((m) => m.type === 'system' && m.subtype === 'init');
    expect(init, stderr.join('')).toBeDefined();
    expect(texts(messages)).toEqual(['Hello from huddle.']);
    const result = messages.at(-1)!;
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'Hello from huddle.', num_turns: 1, is_error: false });
    expect(new Set(messages.map((m) => m.session_id)).size).toBe(1);
    // The SDK's default system prompt (empty) leaves huddle's own instructions to the lead.
    expect(JSON.stringify(fake.requests[0]!.body.system)).toContain('You lead a team');
  });

  it("the SDK's resume option continues the team: the same session id, the lead's conversation kept", async () => {
    fake.script('lead', replyText('First.'), replyText('Second.'));
    const first = await collect(query({ prompt: 'Remember the word pelican.', options: options() }));
    const id = first.at(-1)!.session_id;
    const second = await collect(query({ prompt: 'Which word?', options: options({ resume: id }) }));
    expect(second.at(-1), stderr.join('')).toMatchObject({ type: 'result', subtype: 'success', result: 'Second.', session_id: id });
    expect(JSON.stringify(fake.requests.filter((r) => r.agent === 'lead')[1]!.body.messages)).toContain('Remember the word pelican.');
    // forkSession: the team goes on under a new id.
    fake.script('lead', replyText('Third.'));
    const forked = await collect(query({ prompt: 'Go on.', options: options({ resume: id, forkSession: true }) }));
    expect(forked.at(-1)!.session_id).not.toBe(id);
  });

  it('includePartialMessages: the text arrives as stream events before its assistant message', async () => {
    const answer = 'A longer answer that streams in several pieces.';
    fake.script('lead', replyText(answer));
    const messages = await collect(query({ prompt: 'Stream it.', options: options({ includePartialMessages: true }) }));
    const events = messages.flatMap((m) => (m.type === 'stream_event' ? [m.event] : []));
    const deltas = events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? [e.delta.text] : []));
    expect(deltas.length, stderr.join('')).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(answer);
    expect(events[0]!.type).toBe('message_start');
    expect(events.at(-1)!.type).toBe('message_stop');
    const lastEvent = messages.findLastIndex((m) => m.type === 'stream_event');
    expect(messages.findIndex((m) => m.type === 'assistant')).toBeGreaterThan(lastEvent);
  });

  it('several user messages: a turn and a result each, the lead keeping the conversation', async () => {
    fake.script('lead', replyText('First answer.'), replyText('Second answer.'));
    let answered!: () => void;
    const firstDone = new Promise<void>((resolve) => (answered = resolve));
    async function* prompts(): AsyncGenerator<SDKUserMessage> {
      yield { type: 'user', message: { role: 'user', content: 'First question.' }, parent_tool_use_id: null, session_id: '' };
      await firstDone;
      yield { type: 'user', message: { role: 'user', content: 'Second question.' }, parent_tool_use_id: null, session_id: '' };
    }
    const messages: SDKMessage[] = [];
    for await (const message of query({ prompt: prompts(), options: options() })) {
      messages.push(message);
      if (message.type === 'result') {
        answered();
        if (messages.filter((m) => m.type === 'result').length === 2) break;
      }
    }
    const results = messages.filter((m) => m.type === 'result');
    expect(results.map((r) => (r as { result: string }).result)).toEqual(['First answer.', 'Second answer.']);
    // As Claude Code's: num_turns counts each user turn's model calls; the cost adds up across turns.
    expect(results.map((r) => (r as { num_turns: number }).num_turns)).toEqual([1, 1]);
    const costs = results.map((r) => (r as { total_cost_usd: number }).total_cost_usd);
    expect(costs[1]).toBeGreaterThan(costs[0]!);
    // The second model call carries the first exchange.
    const second = JSON.stringify(fake.requests.filter((r) => r.agent === 'lead')[1]!.body.messages);
    expect(second).toContain('First question.');
    expect(second).toContain('First answer.');
  });

  it('setModel, setPermissionMode and mcpServerStatus: control requests answered, and the next turn follows them', async () => {
    fake.script('lead', replyText('Answered by haiku.'));
    let send!: () => void;
    const ready = new Promise<void>((resolve) => (send = resolve));
    async function* prompts(): AsyncGenerator<SDKUserMessage> {
      await ready;
      yield { type: 'user', message: { role: 'user', content: 'Which model?' }, parent_tool_use_id: null, session_id: '' };
    }
    const q = query({ prompt: prompts(), options: options() });
    await q.setModel('haiku');
    await q.setPermissionMode('plan');
    expect(await q.mcpServerStatus()).toEqual([]);
    await expect(q.setPermissionMode('yolo' as never)).rejects.toThrow(/huddle has no permission mode 'yolo'/);
    send();
    const messages: SDKMessage[] = [];
    for await (const message of q) {
      messages.push(message);
      if (message.type === 'result') break;
    }
    expect(fake.requests[0]!.body.model).toBe('claude-haiku-4-5');
    const init = messages.find((m) => m.type === 'system' && m.subtype === 'init') as { permissionMode: string } | undefined;
    expect(init?.permissionMode).toBe('plan');
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Answered by haiku.' });
  });

  it('an interrupt stops the turn under way and ends it with an error result', async () => {
    fake.script('lead', { kind: 'hang', content: [text('Thinking for a long time')] });
    const q = query({ prompt: 'Take your time.', options: options() });
    const messages: SDKMessage[] = [];
    const reading = (async () => {
      for await (const message of q) messages.push(message);
    })();
    await fake.waitForRequests(1, 30_000);
    await q.interrupt();
    await reading;
    expect(messages.at(-1), stderr.join('')).toMatchObject({ type: 'result', subtype: 'error_during_execution', is_error: true });
  });

  it("an interrupt reaches the whole team: the teammate's turn under way is interrupted too", async () => {
    fake.script('lead', reply(toolUse('spawn_teammate', { name: 'bob', role: 'coder', prompt: 'Work on it for a long time.' })), replyText('Waiting for bob.'));
    fake.script('bob', { kind: 'hang', content: [text('Working on it')] });
    // The input stays open until the test has looked: closing it would close the team (and stop bob anyway).
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    async function* prompts(): AsyncGenerator<SDKUserMessage> {
      yield { type: 'user', message: { role: 'user', content: 'Have bob work.' }, parent_tool_use_id: null, session_id: '' };
      await finished;
    }
    const q = query({ prompt: prompts(), options: options() });
    const bobInterrupted = () => {
      const logDir = path.join(ws.dir, '.team', 'logs', 'bob');
      const events = readdirSync(logDir).flatMap((name) =>
        readFileSync(path.join(logDir, name), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { type: string; interrupted?: boolean }),
      );
      return events.some((e) => e.type === 'error' && e.interrupted === true);
    };
    let result: SDKMessage | undefined;
    const reading = (async () => {
      for await (const message of q) {
        if (message.type !== 'result') continue;
        result = message;
        // bob's turn ends as interrupted while the team is still open: wait for its log to say so (the
        // bound only catches a hang, however busy the machine).
        for (let i = 0; i < 1_000 && !bobInterrupted(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
        expect(bobInterrupted()).toBe(true);
        finish();
      }
    })();
    await fake.waitForRequests(3, 30_000);
    expect(fake.requests.map((r) => r.agent)).toContain('bob');
    await q.interrupt();
    await reading;
    expect(result, stderr.join('')).toMatchObject({ type: 'result', subtype: 'error_during_execution' });
  });

  it("a command off the allow-list is put to the SDK's canUseTool, and its answer holds", async () => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch made-by-lead.txt' })), replyText('Made it.'));
    const asked: Array<{ tool: string; input: unknown }> = [];
    const messages = await collect(
      query({
        prompt: 'Make the file.',
        options: options({
          permissionMode: 'default',
          canUseTool: async (tool: string, input: Record<string, unknown>) => {
            asked.push({ tool, input });
            return { behavior: 'allow' as const, updatedInput: input };
          },
        }),
      }),
    );
    expect(asked, stderr.join('')).toEqual([{ tool: 'Bash', input: expect.objectContaining({ command: 'touch made-by-lead.txt' }) }]);
    expect(existsSync(path.join(ws.dir, 'made-by-lead.txt'))).toBe(true);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Made it.' });
  });

  it("a denial by canUseTool is the lead's tool error and a permission denial in the result", async () => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch never.txt' })), replyText('It was refused.'));
    const messages = await collect(
      query({
        prompt: 'Make the file.',
        options: options({ permissionMode: 'default', canUseTool: async () => ({ behavior: 'deny' as const, message: 'not today' }) }),
      }),
    );
    expect(existsSync(path.join(ws.dir, 'never.txt'))).toBe(false);
    const result = messages.at(-1) as { permission_denials: Array<{ tool_name: string }> };
    expect(result.permission_denials.map((d) => d.tool_name)).toEqual(['Bash']);
    expect(JSON.stringify(fake.requests.filter((r) => r.agent === 'lead')[1]!.body.messages)).toContain('not today');
  });

  it('an allow that changes the input is a refusal the agent hears: huddle runs only the call the agent made', async () => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch asked.txt' })), replyText('Understood.'));
    const messages = await collect(
      query({
        prompt: 'Make the file.',
        options: options({
          permissionMode: 'default',
          canUseTool: async (_tool: string, input: Record<string, unknown>) => ({
            behavior: 'allow' as const,
            updatedInput: { ...input, command: 'touch other.txt' },
          }),
        }),
      }),
    );
    expect(existsSync(path.join(ws.dir, 'asked.txt'))).toBe(false);
    expect(existsSync(path.join(ws.dir, 'other.txt'))).toBe(false);
    expect(JSON.stringify(fake.requests.filter((r) => r.agent === 'lead')[1]!.body.messages)).toContain('changed input, which huddle cannot apply');
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  });

  it("a team: the teammate's messages arrive in the SDK's stream under the lead's spawn call", async () => {
    fake.script(
      'lead',
      reply(text('Spawning bob.'), toolUse('spawn_teammate', { name: 'bob', role: 'coder', prompt: 'Say hi to the lead.' }, 'toolu_spawn_bob')),
      replyText('Waiting for bob.'),
      replyText('Bob said hi; done.'),
      replyText('Done.'),
    );
    fake.script('bob', reply(toolUse('send_message', { to: 'lead', content: 'Hi lead, bob here.' })), replyText('Said hi.'), replyText('Nothing more.'));
    const messages = await collect(query({ prompt: 'Have bob say hi.', options: options() }));
    const fromBob = messages.filter((m) => m.type === 'assistant' && (m as { agent?: string }).agent === 'bob');
    expect(fromBob.length, stderr.join('')).toBeGreaterThan(0);
    expect(fromBob.every((m) => (m as { parent_tool_use_id: string | null }).parent_tool_use_id === 'toolu_spawn_bob')).toBe(true);
    expect(texts(fromBob)).toContain('Said hi.');
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  });
});
