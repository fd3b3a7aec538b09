// The console in a real pseudo-terminal against the fake Messages API: what a person sees and
// does. The built CLI runs under node-pty; @xterm/headless keeps the screen.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replyText, startFakeApi, text, toolUse, reply, type FakeApi } from '../../helpers/fake-api.js';
import { KEYS, PtyDriver } from '../../helpers/pty-driver.js';
import { SCENARIO_FINAL, SCENARIO_PROMPT, installScenario, lastUserTexts } from '../../helpers/team-harness.js';

let fake: FakeApi;
let dir: string;
let driver: PtyDriver | undefined;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-pty-'));
});

afterEach(async () => {
  await driver?.kill();
  driver = undefined;
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(options: { cols?: number; rows?: number; env?: Record<string, string | undefined> } = {}): PtyDriver {
  driver = new PtyDriver({
    cwd: dir,
    cols: options.cols ?? 120,
    rows: options.rows ?? 32,
    env: { ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5', ...options.env },
  });
  return driver;
}

/** The row of the screen that contains `needle`, or -1. */
function rowOf(screen: string, needle: string): number {
  return screen.split('\n').findIndex((line) => line.includes(needle));
}

describe('the console in a terminal', () => {
  it('opens on the alternate screen with the input ready, and Ctrl+C twice quits restoring the terminal', async () => {
    const tty = open();
    const screen = await tty.waitFor('ask the lead');
    expect(await tty.bufferType()).toBe('alternate');
    expect(screen).toContain('1:○ lead');
    expect(screen).toMatch(/tasks 0 pending 0 active 0 done/);

    tty.write(KEYS.ctrlC);
    await tty.waitFor('Press Ctrl+C again to quit');
    tty.write(KEYS.ctrlC);
    const exit = await tty.exited;
    expect(exit.exitCode).toBe(0);
    expect(await tty.bufferType()).toBe('normal');
  });

  it('without a key still opens and says what to set', async () => {
    const tty = open({ env: { ANTHROPIC_API_KEY: undefined } });
    const screen = await tty.waitFor('No API key is set');
    expect(screen).toContain('ANTHROPIC_API_KEY');
    expect(screen).toContain('ANTHROPIC_BASE_URL');
    await tty.type('hello');
    tty.write(KEYS.enter);
    await tty.waitFor(/✗ no API key/);
  });

  it('runs the three-task team: panes appear, Tab switches, the board and roster are live', async () => {
    installScenario(fake);
    const tty = open();
    await tty.waitFor('ask the lead');
    await tty.type(SCENARIO_PROMPT);
    tty.write(KEYS.enter);

    // Teammates get tabs as they are spawned.
    await tty.waitFor((s) => s.includes(':alice') || s.includes('alice'), 15_000);
    await tty.waitFor(/\d:. bob/, 15_000);
    // The lead's final text arrives once both teammates answered the shutdown.
    await tty.waitFor(SCENARIO_FINAL.slice(0, 40), 20_000);

    tty.write(KEYS.ctrlT);
    const board = await tty.waitFor(/Tasks \(3: 0 pending, 0 in progress, 0 review, 3 completed\)/);
    expect(board).toMatch(/1\s+completed\s+Write the greeting/);
    expect(board).toMatch(/2\s+completed\s+Write the reply to the greeting/);
    tty.write(KEYS.escape);
    await tty.waitFor(/lead \(lead\)/);

    await tty.type('/team');
    tty.write(KEYS.enter);
    const roster = await tty.waitFor(/alice\s+■ shutdown/);
    expect(roster).toMatch(/bob\s+■ shutdown/);
    tty.write(KEYS.escape);

    // Tab moves to alice's pane: its header names it and its transcript shows its tools.
    tty.write(KEYS.tab);
    const pane = await tty.waitFor(/alice \(coder\)/);
    expect(pane).toMatch(/write_file out\/task-\d\.txt/);
    tty.write(KEYS.shiftTab);
    await tty.waitFor(/lead \(lead\)/);
  });

  it('Esc interrupts a long stream, and the agent takes the next prompt', async () => {
    fake.script('lead', { kind: 'message', content: [text(`${'streaming words '.repeat(400)}`)], delayMs: 30, textChunk: 16 });
    fake.script('lead', replyText('Back after the interruption.'));
    const tty = open();
    await tty.waitFor('ask the lead');
    await tty.type('talk for a long time');
    tty.write(KEYS.enter);
    await tty.waitFor('streaming words');
    tty.write(KEYS.escape);
    await tty.waitFor('• interrupted');
    await tty.type('are you there?');
    tty.write(KEYS.enter);
    await tty.waitFor('Back after the interruption.');
  });

  it('typing in a teammate pane sends that text to the teammate', async () => {
    fake.script('alice', reply(toolUse('idle', {})));
    fake.respond((request) => {
      if (request.agent !== 'alice') return undefined;
      const said = lastUserTexts(request).join('\n');
      return said.includes('please wave') ? replyText('alice waves back') : undefined;
    });
    const tty = open();
    await tty.waitFor('ask the lead');
    await tty.type('/spawn alice coder wait for instructions');
    tty.write(KEYS.enter);
    await tty.waitFor(/spawned alice/);
    await tty.waitFor(/2:. alice/);
    tty.write(KEYS.alt(2));
    await tty.waitFor('alice › ');
    await tty.waitFor(/alice \(coder\) idle/);
    await tty.type('please wave');
    tty.write(KEYS.enter);
    await tty.waitFor('alice waves back');
    const toAlice = fake.requests.filter((r) => r.agent === 'alice').flatMap((r) => lastUserTexts(r));
    expect(toAlice.some((t) => t.includes('"from":"user"') && t.includes('please wave'))).toBe(true);
  });

  it('re-lays the screen on resize', async () => {
    const tty = open({ cols: 120, rows: 32 });
    let screen = await tty.waitFor('ask the lead');
    expect(rowOf(screen, 'tasks 0 pending')).toBe(31);
    tty.resize(80, 20);
    screen = await tty.waitFor((s) => rowOf(s, 'tasks 0 pending') === 19);
    expect(
      screen.split('\n').filter((line) => line.length > 80),
      screen,
    ).toEqual([]);
    expect(rowOf(screen, 'lead ›')).toBe(18);
  });
});

describe('huddle demo', () => {
  it('plays a labelled scripted team session with no key, and leaves its files', async () => {
    driver = new PtyDriver({ cwd: dir, args: ['demo'], env: { ANTHROPIC_API_KEY: undefined, HUDDLE_DEMO_SPEED: '20' } });
    const tty = driver;
    await tty.waitFor('DEMO · scripted model');
    await tty.waitFor(/2:. alice/, 15_000);
    await tty.waitFor(/3:. bob/, 15_000);
    await tty.waitFor('Summary', 30_000);
    // Ctrl+C interrupts a lead that is still in its turn: quit once it has finished.
    await tty.waitFor(/lead \(lead\) idle/);
    tty.write(KEYS.ctrlT);
    await tty.waitFor(/3 completed\)/);
    tty.write(KEYS.ctrlC);
    tty.write(KEYS.ctrlC);
    const exit = await tty.exited;
    expect(exit.exitCode).toBe(0);
    const screen = await tty.screen();
    const kept = /huddle demo: the files the team wrote are in (\S+)/.exec(screen)?.[1];
    expect(kept).toBeTruthy();
    expect(existsSync(path.join(kept!, 'greet.js'))).toBe(true);
    rmSync(kept!, { recursive: true, force: true });
  });
});
