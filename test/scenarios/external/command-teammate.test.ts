// A `command` teammate: a small interactive program in a real PTY (node-pty), its screen kept by a
// headless terminal. Its spawn prompt and its messages are typed into it when it waits for input
// (delivered exactly once, like every message), keys reach it directly, huddle answers a shutdown
// request for it and ends the program, and a program that exits ends the teammate.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { trustWorkspace } from '../../helpers/trust.js';

let h: TeamHarness;

const PROGRAM = `
import readline from 'node:readline';
const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
const ask = () => rl.question('name? ', (name) => {
  if (name === 'quit') { console.log('bye'); process.exit(0); }
  console.log('hello ' + name.toUpperCase());
  ask();
});
ask();
`;

beforeEach(async () => {
  h = await openTeamHarness();
  writeFileSync(path.join(h.root, 'greeter.mjs'), PROGRAM);
});
afterEach(async () => {
  await h.close();
});

const screen = (name: string) => (h.session.terminal(name)?.lines() ?? []).join('\n');

describe('a command teammate (a program in a PTY)', () => {
  it("the person's shell pane types the person's messages, never an agent's", async () => {
    await h.spawn('shell', 'alice', { agent: 'command', command: `${JSON.stringify(process.execPath)} greeter.mjs`, role: 'shell' });
    await h.waitFor('the greeting of alice', () => screen('shell').includes('hello ALICE'), 20_000);
    await h.waitForStatus('shell', 'idle', 20_000);
    await h.team.bus.send({ from: 'lead', to: 'shell', content: 'mallory' });
    await h.waitForEvent(
      'the refusal',
      (e) => e.agent === 'shell' && e.type === 'warning' && String(e.message).includes("lead's message to shell was not typed"),
    );
    await h.session.send('shell', 'bob');
    await h.waitFor('the greeting of bob', () => screen('shell').includes('hello BOB'), 20_000);
    expect(screen('shell')).not.toContain('MALLORY');
  }, 60_000);

  it('types its prompt and its messages into the program, takes keys, and is shut down by huddle for it', async () => {
    await h.spawn('greeter', 'alice', { agent: 'command', command: `${JSON.stringify(process.execPath)} greeter.mjs`, role: 'helper' });
    await h.waitFor('the greeting of alice', () => screen('greeter').includes('hello ALICE'), 20_000);
    await h.waitForStatus('greeter', 'idle', 20_000);
    expect(h.team.ctx.roster.get('greeter')).toMatchObject({ agent: 'command', role: 'helper' });

    // A message is typed when the program waits; logged as delivered once.
    await h.session.send('greeter', 'bob');
    await h.waitFor('the greeting of bob', () => screen('greeter').includes('hello BOB'), 20_000);
    const deliveries = h.events.filter((e) => e.agent === 'greeter' && e.type === 'message_delivered');
    expect(deliveries).toHaveLength(1);
    expect((deliveries[0]!.messages as Array<{ content: string }>)[0]!.content).toBe('bob');
    // What it showed is in the log as its text.
    await h.waitForEvent('its screen as text', (e) => e.agent === 'greeter' && e.type === 'text' && String(e.text).includes('hello BOB'));

    // Keys from the console go straight to it.
    h.session.terminal('greeter')!.write('carol\r');
    await h.waitFor('the greeting of carol', () => screen('greeter').includes('hello CAROL'), 20_000);

    // The shutdown protocol, answered by huddle on its behalf; the program ends with it.
    await h.session.shutdown('greeter', { now: false });
    await h.waitForStatus('greeter', 'shutdown', 20_000);
    const answer = h.inbox('lead').find((m) => m.type === 'shutdown_response');
    expect(answer).toMatchObject({ from: 'greeter', approve: true });
    await h.waitFor('the program to end', () => h.session.terminal('greeter') === undefined);
  }, 60_000);

  it('ends the teammate when its program exits', async () => {
    await h.spawn('greeter', 'quit', { agent: 'command', command: `${JSON.stringify(process.execPath)} greeter.mjs`, role: 'helper' });
    const member = await h.waitForStatus('greeter', 'shutdown', 20_000);
    expect(member.status_reason).toContain('exited with code 0');
  }, 30_000);

  it('never claims tasks from the board, and is no reason for a run to go on', async () => {
    await h.spawn('greeter', '', { agent: 'command', command: `${JSON.stringify(process.execPath)} greeter.mjs`, role: 'helper' });
    await h.waitForStatus('greeter', 'idle', 20_000);
    await h.team.ctx.board.create({ subject: 'something for a model' }, 'lead');
    await h.waitFor('the board to show the task', async () => (await h.team.ctx.board.claimable()).length === 1);
    expect(h.team.ctx.roster.get('greeter')!.status).toBe('idle');
    expect((await h.team.ctx.board.get(1)).owner).toBeNull();
  }, 30_000);

  it('says what to install when its program is not there, and records nothing', async () => {
    mkdirSync(path.join(h.root, '.team'), { recursive: true });
    writeFileSync(path.join(h.root, '.team', 'settings.json'), JSON.stringify({ agents: { codex: { command: '/nonexistent/codex' } } }));
    trustWorkspace(h.root);
    await expect(h.team.spawn({ name: 'cx', role: 'coder', prompt: 'x', agent: 'codex' }, 'lead')).rejects.toThrow(
      "cannot start a codex teammate: '/nonexistent/codex' (agents.codex.command in the settings) was not found; install it with `npm install -g @openai/codex`",
    );
    expect(h.team.ctx.roster.get('cx')).toBeUndefined();
  });
});
