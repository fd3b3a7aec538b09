// The console in a real pseudo-terminal against the fake Messages API: what a person sees and
// does. The built CLI runs under node-pty; @xterm/headless keeps the screen.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYS, useConsoles } from '../../helpers/console-pty.js';
import { replyText, text, toolUse, reply } from '../../helpers/fake-api.js';
import { paneOf, rowOf } from '../../helpers/console-screen.js';
import { SCENARIO_FINAL, SCENARIO_PROMPT, installScenario, lastUserTexts } from '../../helpers/team-harness.js';

const start = useConsoles();

describe('the console in a terminal', () => {
  it('opens on the alternate screen with the input ready, and Ctrl+C twice quits restoring the terminal', async () => {
    const tty = await start();
    const screen = await tty.waitForText('ask the lead');
    expect(await tty.driver.bufferType()).toBe('alternate');
    expect(screen).toContain('1:○ lead');
    expect(screen).toMatch(/tasks 0 pending 0 active 0 done/);

    tty.press('ctrlC');
    await tty.waitForText('Press Ctrl+C again to quit');
    tty.press('ctrlC');
    const exit = await tty.exited;
    expect(exit.exitCode).toBe(0);
    expect(await tty.driver.bufferType()).toBe('normal');
  });

  it('without a key still opens and says what to set', async () => {
    const tty = await start({ env: { ANTHROPIC_API_KEY: undefined } });
    const screen = await tty.waitForText('No API key is set');
    expect(screen).toContain('ANTHROPIC_API_KEY');
    expect(screen).toContain('ANTHROPIC_BASE_URL');
    await tty.type('hello');
    tty.press('enter');
    await tty.waitForText(/✗ no API key/);
  });

  it('runs the three-task team: panes appear, Tab switches, the board and roster are live', async () => {
    const tty = await start();
    installScenario(tty.fake);
    await tty.waitForText('ask the lead');
    await tty.type(SCENARIO_PROMPT);
    tty.press('enter');

    // Teammates get tabs as they are spawned.
    await tty.waitForScreen((s) => s.includes(':alice') || s.includes('alice'));
    await tty.waitForText(/\d:. bob/);
    // The lead's final text arrives once both teammates answered the shutdown.
    await tty.waitForText(SCENARIO_FINAL.slice(0, 40));

    tty.press('ctrlT');
    const board = await tty.waitForText(/Tasks \(3: 0 pending, 0 in progress, 0 review, 3 completed\)/);
    expect(board).toMatch(/1\s+completed\s+Write the greeting/);
    expect(board).toMatch(/2\s+completed\s+Write the reply to the greeting/);
    // Esc and the next key can reach the console in one read, as Alt+key: wait for Esc to close the board.
    tty.press('escape');
    await tty.waitForScreen((s) => !/Tasks \(3:/.test(s) && /lead \(lead\)/.test(s));

    await tty.type('/team');
    tty.press('enter');
    const roster = await tty.waitForText(/alice\s+■ shutdown/);
    expect(roster).toMatch(/bob\s+■ shutdown/);
    tty.press('escape');
    await tty.waitForScreen((s) => !/alice\s+■ shutdown/.test(s) && /lead \(lead\)/.test(s));

    // Tab moves to alice's pane: its header names it and its transcript shows its tools.
    tty.press('tab');
    // Its header, on the second row (the lead's transcript names alice too).
    const pane = await tty.waitForScreen(paneOf('alice'));
    expect(pane).toMatch(/write_file out\/task-\d\.txt/);
    tty.press('shiftTab');
    await tty.waitForText(/lead \(lead\)/);
  });

  it('Esc interrupts a long stream, and the agent takes the next prompt', async () => {
    const tty = await start();
    tty.fake.script('lead', { kind: 'message', content: [text(`${'streaming words '.repeat(400)}`)], delayMs: 30, textChunk: 16 });
    tty.fake.script('lead', replyText('Back after the interruption.'));
    await tty.waitForText('ask the lead');
    await tty.type('talk for a long time');
    tty.press('enter');
    await tty.waitForText('streaming words');
    tty.press('escape');
    await tty.waitForText('• interrupted');
    await tty.type('are you there?');
    tty.press('enter');
    await tty.waitForText('Back after the interruption.');
  });

  it('typing in a teammate pane sends that text to the teammate', async () => {
    const tty = await start();
    const fake = tty.fake;
    fake.script('alice', reply(toolUse('idle', {})));
    fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const said = lastUserTexts(request).join('\n');
      return said.includes('please wave') ? replyText('alice waves back') : undefined;
    });
    await tty.waitForText('ask the lead');
    await tty.type('/spawn alice coder wait for instructions');
    tty.press('enter');
    await tty.waitForText(/spawned alice/);
    await tty.waitForText(/2:. alice/);
    tty.write(KEYS.alt(2));
    await tty.waitForText('alice › ');
    await tty.waitForText(/alice \(coder\) idle/);
    await tty.type('please wave');
    tty.press('enter');
    await tty.waitForText('alice waves back');
    const toAlice = fake.requests.filter((r) => r.agent === 'alice').flatMap((r) => lastUserTexts(r));
    expect(toAlice.some((t) => t.includes('"from":"user"') && t.includes('please wave'))).toBe(true);
  });

  it('re-lays the screen on resize', async () => {
    const tty = await start({ cols: 120, rows: 32 });
    let screen = await tty.waitForText('ask the lead');
    expect(rowOf(screen, 'tasks 0 pending')).toBe(31);
    tty.resize(80, 20);
    screen = await tty.waitForScreen((s) => rowOf(s, 'tasks 0 pending') === 19);
    expect(
      screen.split('\n').filter((line) => line.length > 80),
      screen,
    ).toEqual([]);
    expect(rowOf(screen, 'lead ›')).toBe(18);
  });
});

describe('huddle demo', () => {
  it('plays a labelled scripted team session with no key, and leaves its files', async () => {
    const tty = await start({ args: ['demo'], env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined, HUDDLE_DEMO_SPEED: '20' } });
    await tty.waitForText('DEMO · scripted model');
    await tty.waitForText(/2:. alice/);
    await tty.waitForText(/3:. bob/);
    await tty.waitForText('Summary');
    // Ctrl+C interrupts a lead that is still in its turn: quit once it has finished.
    await tty.waitForText(/lead \(lead\) idle/);
    tty.press('ctrlT');
    await tty.waitForText(/3 completed\)/);
    tty.press('ctrlC');
    await tty.waitForText('Press Ctrl+C again to quit');
    tty.press('ctrlC');
    const exit = await tty.exited;
    expect(exit.exitCode).toBe(0);
    const screen = await tty.screen();
    const kept = /huddle demo: the files the team wrote are in (\S+)/.exec(screen)?.[1];
    expect(kept).toBeTruthy();
    expect(existsSync(path.join(kept!, 'greet.js'))).toBe(true);
    rmSync(kept!, { recursive: true, force: true });
  });
});
