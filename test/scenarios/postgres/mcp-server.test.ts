// `huddle mcp --as NAME` on a team in PostgreSQL (a server wired by hand, e.g. for an agent huddle
// did not start): it works on the team named by --team or HUDDLE_TEAM_URL, not on the files of the
// directory it runs in.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventHub } from '../../../src/runtime/events/events.js';
import { postgresBackend } from '../../../src/runtime/store/postgres/pg-store.js';
import type { TeamStore } from '../../../src/runtime/store/team-store.js';
import { Workspace } from '../../../src/runtime/workspace/workspace.js';
import { mintPersonKey } from '../../../src/session/person-key.js';
import { describePostgres, teamUrl } from '../../helpers/postgres.js';
import { baseEnv, CLI_PATH, runCli } from '../../helpers/run-cli.js';

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text: string }>).map((block) => block.text).join('');
}

describePostgres('huddle mcp on a team in PostgreSQL', (base) => {
  let root: string;
  let lead: TeamStore | undefined;
  const clients: Client[] = [];
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'huddle-pg-mcp-'));
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await lead?.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function connect(as: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, 'mcp', '--as', as, '--cwd', root, ...args],
      env: { ...baseEnv(), ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it('creates and claims tasks and sends messages on that team, by --team and by HUDDLE_TEAM_URL', { timeout: 60_000 }, async () => {
    const { url } = teamUrl(base, 'mcp');
    lead = await postgresBackend(url, new Workspace(root)).open({ hub: new EventHub(), secrets: [] });
    await lead.roster.add({ name: 'alice', role: 'coder', status: 'idle' });
    mintPersonKey(path.join(root, '.team')); // as huddle does when it runs the team (the test is the person's shell)

    const alice = await connect('alice', ['--team', url]);
    expect(textOf(await alice.callTool({ name: 'task_create', arguments: { subject: 'Write the parser' } }))).toContain('created task #1');
    expect(textOf(await alice.callTool({ name: 'claim_task', arguments: { task_id: 1 } }))).toContain('claimed task #1');
    expect(await lead.board.get(1)).toMatchObject({ owner: 'alice', status: 'in_progress' });
    expect(textOf(await alice.callTool({ name: 'send_message', arguments: { to: 'lead', content: 'on it' } }))).toMatch(/^sent to lead/);
    expect((await lead.bus.take('lead')).map((m) => [m.from, m.content])).toEqual([['alice', 'on it']]);
    // Nothing went to files in the directory it ran in.
    expect(existsSync(path.join(root, '.tasks'))).toBe(false);

    const byEnv = await connect('lead', [], { HUDDLE_TEAM_URL: url });
    await byEnv.callTool({ name: 'send_message', arguments: { to: 'alice', content: 'add tests too' } });
    expect(textOf(await alice.callTool({ name: 'read_inbox', arguments: {} }))).toContain('add tests too');
  });

  it("refuses --as lead (or anyone) without the person's key, before it connects: nothing forged on the team", { timeout: 60_000 }, async () => {
    const { url } = teamUrl(base, 'forge');
    const team = await postgresBackend(url, new Workspace(root)).open({ hub: new EventHub(), secrets: [] });
    mintPersonKey(path.join(root, '.team'));
    try {
      // A directory like an agent's sandbox sees it: the team's hash, but not the person's key.
      const elsewhere = mkdtempSync(path.join(tmpdir(), 'huddle-pg-forge-'));
      mkdirSync(path.join(elsewhere, '.team'));
      writeFileSync(path.join(elsewhere, '.team', 'person-key.sha256'), readFileSync(path.join(root, '.team', 'person-key.sha256')));
      for (const name of ['lead', 'alice']) {
        const result = await runCli(['mcp', '--as', name, '--team', url, '--cwd', elsewhere], { cwd: elsewhere });
        expect(result.code).toBe(2);
        expect(result.stderr.trim()).toMatch(
          new RegExp(`^huddle mcp: --as ${name} over the team's store acts for the person, and this process cannot show the person's key`),
        );
      }
      rmSync(elsewhere, { recursive: true, force: true });
      expect(await team.board.list()).toEqual([]);
    } finally {
      await team.close();
    }
  });
});
