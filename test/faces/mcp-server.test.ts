// `huddle mcp --as NAME` (docs/contract.md#tools) through a real MCP client over stdio: the team tools of
// an external teammate, named as huddle names them, the same over the workspace's store (a server
// wired by hand) and through a live huddle's channel for that teammate (`--socket`, how huddle
// starts it for its external teammates); the lifecycle answers (idle, shutdown_response,
// plan_approval) need the live huddle and say so without one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentChannel } from '../../src/agents/external/agent-channel.js';
import { teamChannel } from '../../src/agents/external/huddle-tools.js';
import { mintPersonKey } from '../../src/session/person-key.js';
import { baseEnv, CLI_PATH, makeWorkspace, runCli, type Workspace } from '../helpers/run-cli.js';
import { openTeamHarness, type TeamHarness } from '../helpers/team-harness.js';

let ws: Workspace;
let client: Client | undefined;
/** The live huddle whose channels the server works through (channel mode). */
let live: { h: TeamHarness; channels: Map<string, AgentChannel> } | undefined;

beforeEach(() => {
  ws = makeWorkspace('huddle-mcp-');
  // A team with lead and alice on its roster, as huddle leaves it.
  mkdirSync(path.join(ws.dir, '.team'), { recursive: true });
  const now = new Date().toISOString();
  const member = (name: string, role: string) => ({ name, role, status: 'idle', created_at: now, updated_at: now });
  writeFileSync(
    path.join(ws.dir, '.team', 'config.json'),
    JSON.stringify({ team_name: 'demo', lead: 'lead', members: [member('lead', 'lead'), member('alice', 'coder'), member('bob', 'coder')] }),
  );
  // As huddle leaves it when it has run the team: the person's key (the test is the person's shell).
  mintPersonKey(path.join(ws.dir, '.team'));
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  if (live) {
    for (const channel of live.channels.values()) await channel.close();
    await live.h.close();
    live = undefined;
  }
  ws.cleanup();
});

type Mode = 'store' | 'channel';

/** The team's directory: the workspace's (store mode) or the live huddle's. */
const teamRoot = () => live?.h.root ?? ws.dir;

async function goLive(): Promise<void> {
  const h = await openTeamHarness();
  await h.team.ctx.roster.add({ name: 'alice', role: 'coder', status: 'idle' });
  mintPersonKey(h.workspace.teamDir);
  live = { h, channels: new Map() };
}

async function connect(as: string, mode: Mode = 'store', channelOf: string = as): Promise<Client> {
  const args = [CLI_PATH, 'mcp', '--as', as, '--cwd', teamRoot()];
  if (mode === 'channel') {
    let channel = live!.channels.get(channelOf);
    if (!channel) {
      channel = teamChannel(live!.h.team.ctx, live!.h.team, channelOf);
      channel.open();
      await channel.ready;
      live!.channels.set(channelOf, channel);
    }
    args.push('--socket', channel.socket);
  }
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe', env: baseEnv() });
  client = new Client({ name: 'test', version: '0' });
  await client.connect(transport);
  return client;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text: string }>).map((block) => block.text).join('');
}

describe.each<[string, Mode]>([
  ['over the store', 'store'],
  ["through a live huddle's channel", 'channel'],
])('huddle mcp --as NAME, %s', (_how, mode) => {
  beforeEach(async () => {
    if (mode === 'channel') await goLive();
  });

  it('serves the team tools (not the file and shell tools) as server "huddle"', async () => {
    const mcp = await connect('alice', mode);
    expect(mcp.getServerVersion()?.name).toBe('huddle');
    const names = (await mcp.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(
      [
        'claim_task',
        'idle',
        'plan_approval',
        'read_inbox',
        'review_approve',
        'review_finding',
        'review_request_changes',
        'send_message',
        'shutdown_response',
        'task_create',
        'task_get',
        'task_list',
        'task_update',
      ].sort(),
    );
    const claim = (await mcp.listTools()).tools.find((tool) => tool.name === 'claim_task')!;
    expect(claim.inputSchema).toMatchObject({ type: 'object', properties: { task_id: expect.any(Object) } });
    // Read-only tools say so (MCP's readOnlyHint): a client may run them without asking.
    const readOnly = (await mcp.listTools()).tools
      .filter((tool) => tool.annotations?.readOnlyHint === true)
      .map((tool) => tool.name)
      .sort();
    expect(readOnly).toEqual(['task_get', 'task_list']);
  });

  it('acts as the teammate: creates, claims, messages, reads its inbox once', async () => {
    const mcp = await connect('alice', mode);
    expect(textOf(await mcp.callTool({ name: 'task_create', arguments: { subject: 'Write the parser' } }))).toContain('created task #1');
    expect(textOf(await mcp.callTool({ name: 'claim_task', arguments: { task_id: 1 } }))).toContain('claimed task #1');
    const task = JSON.parse(readFileSync(path.join(teamRoot(), '.tasks', 'task_1.json'), 'utf8'));
    expect(task).toMatchObject({ owner: 'alice', status: 'in_progress' });

    expect(textOf(await mcp.callTool({ name: 'send_message', arguments: { to: 'lead', content: 'on it' } }))).toMatch(/^sent to lead/);
    const inbox = readFileSync(path.join(teamRoot(), '.team', 'inbox', 'lead.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(inbox).toEqual([expect.objectContaining({ from: 'alice', to: 'lead', content: 'on it' })]);

    const unknown = await mcp.callTool({ name: 'send_message', arguments: { to: 'carol', content: 'hi' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("no teammate named 'carol'");

    // A message for alice is read once through read_inbox, then no more.
    const sent = await runCli(['send', 'alice', 'x', '--cwd', teamRoot()]);
    expect(sent.code).toBe(2); // no control socket is open: send through the lead's server instead
    const lead = await connect('lead', mode);
    await lead.callTool({ name: 'send_message', arguments: { to: 'alice', content: 'please also add tests' } });
    client = mcp;
    const first = textOf(await mcp.callTool({ name: 'read_inbox', arguments: {} }));
    expect(first).toContain('please also add tests');
    expect(textOf(await mcp.callTool({ name: 'read_inbox', arguments: {} }))).toBe('no new messages');
    await lead.close();
  });
});

describe('huddle mcp --as NAME', () => {
  it('says what is missing for the lifecycle tools when no huddle runs the team', async () => {
    const mcp = await connect('alice');
    const idle = await mcp.callTool({ name: 'idle', arguments: {} });
    expect(idle.isError).toBe(true);
    expect(textOf(idle)).toContain('idle needs the huddle running this team');
  });

  it('refuses a bad name with one line and exit 2', async () => {
    const result = await runCli(['mcp', '--as', 'Bad Name', '--cwd', ws.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("invalid agent name 'Bad Name'");
    const missing = await runCli(['mcp']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('huddle mcp needs --as NAME');
  });
});

describe('huddle mcp cannot act as another agent', () => {
  it('refuses a name not on the roster, in one line, exit 2', async () => {
    const result = await runCli(['mcp', '--as', 'mallory', '--cwd', ws.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `huddle mcp: 'mallory' is not on the roster of the team in ${ws.dir} (members: lead, alice, bob); huddle spawns a teammate before anyone acts as it`,
    );
  });

  it("over the store, refuses any name without the person's key (as inside an agent's sandbox), and changes nothing", async () => {
    rmSync(path.join(ws.dir, '.team', 'person-key.sha256'));
    mintPersonKey(path.join(ws.dir, '.team')); // a new key: the one this process could show is no longer the team's
    writeFileSync(path.join(ws.dir, '.team', 'person-key.sha256'), `${'0'.repeat(64)}\n`);
    for (const name of ['lead', 'alice']) {
      const result = await runCli(['mcp', '--as', name, '--cwd', ws.dir]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        `huddle mcp: --as ${name} over the team's store acts for the person, and this process cannot show the person's key (huddle keeps it where no agent's sandbox can read it); run it from your own shell, where huddle runs`,
      ]);
    }
    expect(existsSync(path.join(ws.dir, '.tasks'))).toBe(false);
  });

  it("through alice's channel, --as bob (or lead) is refused in one line; --as alice works", async () => {
    await goLive();
    await live!.h.team.ctx.roster.add({ name: 'bob', role: 'coder', status: 'idle' });
    const socket = async () => {
      await connect('alice', 'channel');
      await client!.close();
      client = undefined;
      return live!.channels.get('alice')!.socket;
    };
    const aliceSocket = await socket();
    for (const name of ['bob', 'lead']) {
      const result = await runCli(['mcp', '--as', name, '--cwd', teamRoot(), '--socket', aliceSocket]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        `huddle mcp: this channel is alice's: it cannot act as '${name}' (each teammate's huddle mcp acts as that teammate alone)`,
      );
    }
    const mcp = await connect('alice', 'channel');
    expect(textOf(await mcp.callTool({ name: 'task_create', arguments: { subject: 'mine' } }))).toContain('created task #1');
    expect(await live!.h.team.ctx.board.get(1)).toMatchObject({ subject: 'mine' });
    expect(live!.h.events.find((e) => e.type === 'task' && e.action === 'created')).toMatchObject({ agent: 'alice' });
  });
});
