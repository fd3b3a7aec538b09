// The open team in the console (settings, hooks, roles), in a real terminal (the built CLI under node-pty, read
// through a headless xterm): what the repository runs is said in the lead's pane; /config shows
// the effective settings with where each came from; /mcp the servers, their state and tools; a
// call waiting for the person rings the bell, sends a desktop notification (OSC 9) and puts
// "needs you: 1" into the tab title, restored when it is answered.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { KEYS, PtyDriver } from '../../helpers/pty-driver.js';
import { REPO_ROOT } from '../../helpers/run-cli.js';
import { trustWorkspace } from '../../helpers/trust.js';

const EVERYTHING_BIN = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const CTRL_Y = '\x19';

describe('an open team in the console', () => {
  let fake: FakeApi | undefined;
  let driver: PtyDriver | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await driver?.kill();
    await fake?.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    driver = fake = undefined;
  });

  it('/config, /mcp, the start-up notice, and notifications with the tab title', async () => {
    fake = await startFakeApi();
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-open-console-')));
    const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-open-console-home-')));
    dirs.push(dir, home);
    writeFileSync(path.join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] } } }));
    mkdirSync(path.join(dir, '.team'));
    writeFileSync(path.join(dir, '.team', 'settings.json'), JSON.stringify({ maxTurns: 20, notifications: { desktop: 'osc9' } }));
    fake.script('lead', reply(toolUse('mcp__everything__toggle-simulated-logging', {})), replyText('Logging toggled.'));

    trustWorkspace(dir);
    driver = new PtyDriver({
      cwd: dir,
      cols: 200,
      rows: 40,
      env: { HOME: home, ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5' },
    });
    const tty = driver;
    const titles: string[] = [];
    const desktop: string[] = [];
    let bells = 0;
    tty.term.onTitleChange((title) => titles.push(title));
    tty.term.onBell(() => (bells += 1));
    tty.term.parser.registerOscHandler(9, (data) => (desktop.push(data), true));

    let screen = await tty.waitFor('ask the lead');
    expect(screen).toContain("this repository's settings run MCP servers everything (.mcp.json) on your machine without asking");

    await tty.type('/config');
    tty.write(KEYS.enter);
    screen = await tty.waitFor(/Settings \(\d+ set, \d+ defaults/);
    expect(screen).toMatch(/maxTurns\s+20\s+\.team\/settings\.json/);
    expect(screen).toMatch(/mcpServers\.everything\s+\{"command":.*\.mcp\.json/);
    tty.write(KEYS.escape);
    await tty.waitFor('ask the lead');
    await tty.type('/config hooks');
    tty.write(KEYS.enter);
    await tty.waitFor("no setting 'hooks'; /config lists them all");

    await tty.type('/mcp');
    tty.write(KEYS.enter);
    screen = await tty.waitFor('everything (stdio): ready');
    expect(screen).toMatch(/tools: mcp__everything__echo/);
    tty.write(KEYS.escape);
    await tty.waitFor('ask the lead');

    // The console's ask mode: a tool the server does not mark read-only waits for the person.
    await tty.type('toggle the logging');
    tty.write(KEYS.enter);
    await tty.waitFor('needs you: 1');
    await waitUntil(() => titles.includes('huddle — needs you: 1'));
    expect(bells).toBeGreaterThan(0);
    expect(desktop).toEqual([expect.stringMatching(/^huddle: lead waits for your approval: mcp__everything__toggle-simulated-logging/)]);
    tty.write(CTRL_Y);
    await tty.waitFor(/› lead\s+mcp__everything__toggle-simulated-logging/);
    tty.write('y');
    await tty.waitFor('Nothing is waiting for you.');
    tty.write(KEYS.escape);
    await tty.waitFor('Logging toggled.');
    await waitUntil(() => titles.at(-1) === 'huddle');
  }, 60_000);
});

/** Polls a condition on what the terminal reported (titles, bells), as waitFor polls the screen. */
async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the terminal never reported it');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
