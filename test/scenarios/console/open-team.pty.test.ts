// The open team in the console (settings, hooks, roles), in a real terminal (the built CLI under node-pty, read
// through a headless xterm): what the repository runs is said in the lead's pane; /config shows
// the effective settings with where each came from; /mcp the servers, their state and tools; a
// call waiting for the person rings the bell, sends a desktop notification (OSC 9) and puts
// "needs you: 1" into the tab title, restored when it is answered.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { useConsoles, WAIT_MS } from '../../helpers/console-pty.js';
import { REPO_ROOT } from '../../helpers/run-cli.js';
import { trustWorkspace } from '../../helpers/trust.js';

const EVERYTHING_BIN = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const CTRL_Y = '\x19';

describe('an open team in the console', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const start = useConsoles();

  it('/config, /mcp, the start-up notice, and notifications with the tab title', async () => {
    const fake = await startFakeApi();
    onTestFinished(() => fake.close());
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-open-console-')));
    const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-open-console-home-')));
    dirs.push(dir, home);
    writeFileSync(path.join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] } } }));
    mkdirSync(path.join(dir, '.team'));
    writeFileSync(path.join(dir, '.team', 'settings.json'), JSON.stringify({ maxTurns: 20, notifications: { desktop: 'osc9' } }));
    fake.script('lead', reply(toolUse('mcp__everything__toggle-simulated-logging', {})), replyText('Logging toggled.'));

    trustWorkspace(dir);
    const tty = await start({ fake, workspace: dir, cols: 200, rows: 40, env: { HOME: home } });
    const titles: string[] = [];
    const desktop: string[] = [];
    let bells = 0;
    tty.term.onTitleChange((title) => titles.push(title));
    tty.term.onBell(() => (bells += 1));
    tty.term.parser.registerOscHandler(9, (data) => (desktop.push(data), true));

    let screen = await tty.waitForText('ask the lead');
    expect(screen).toContain("this repository's settings run MCP servers everything (.mcp.json) on your machine without asking");

    await tty.type('/config');
    tty.press('enter');
    screen = await tty.waitForText(/Settings \(\d+ set, \d+ defaults/);
    expect(screen).toMatch(/maxTurns\s+20\s+\.team\/settings\.json/);
    expect(screen).toMatch(/mcpServers\.everything\s+\{"command":.*\.mcp\.json/);
    // Esc and the next key can reach the console in one read (Alt+key): wait for the page to close.
    tty.press('escape');
    await tty.waitForScreen((s) => !/Settings \(\d+ set/.test(s) && s.includes('ask the lead'));
    await tty.type('/config hooks');
    tty.press('enter');
    await tty.waitForText("no setting 'hooks'; /config lists them all");

    await tty.type('/mcp');
    tty.press('enter');
    screen = await tty.waitForText('everything (stdio): ready');
    expect(screen).toMatch(/tools: mcp__everything__echo/);
    tty.press('escape');
    await tty.waitForScreen((s) => !s.includes('everything (stdio): ready') && s.includes('ask the lead'));

    // The console's ask mode: a tool the server does not mark read-only waits for the person.
    await tty.type('toggle the logging');
    tty.press('enter');
    await tty.waitForText('needs you: 1');
    await waitUntil(() => titles.includes('huddle — needs you: 1'));
    expect(bells).toBeGreaterThan(0);
    expect(desktop).toEqual([expect.stringMatching(/^huddle: lead waits for your approval: mcp__everything__toggle-simulated-logging/)]);
    tty.write(CTRL_Y);
    await tty.waitForText(/› lead\s+mcp__everything__toggle-simulated-logging/);
    tty.write('y');
    await tty.waitForText('Nothing is waiting for you.');
    tty.press('escape');
    await tty.waitForText('Logging toggled.');
    await waitUntil(() => titles.at(-1) === 'huddle');
  }, 60_000);
});

/** Waits on what the terminal reported (titles, bells), as the console's waits poll the screen. */
async function waitUntil(condition: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(condition(), 'the terminal never reported it').toBe(true), { timeout: WAIT_MS, interval: 25 });
}
