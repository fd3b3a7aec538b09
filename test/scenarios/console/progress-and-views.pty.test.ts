// Live progress while agents work (spinner, phase, elapsed time,
// live token counts, "done in N s", busy tabs); /help laid out whole at 80×24, 90×28 and 160×45
// (every command, every key row the keymap documents);
// /team columns under their headers with the task filled; headings and quotes as text; protocol
// messages in words; /grid. The built CLI in a real PTY against the fake Messages API.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { KEYS, useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { rowOf, rowsOf } from '../../helpers/console-screen.js';
import { CONSOLE_BINDINGS } from '../../../src/tui/keys/console-keymap.js';
import { keySections } from '../../../src/tui/keys/key-docs.js';
import { SCENARIO_FINAL, SCENARIO_PROMPT, installScenario } from '../../helpers/team-harness.js';
import { COMMANDS } from '../../../src/tui/commands/commands.js';

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const CTRL_G = '\x07';

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-progress-'));
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

function open(cols: number, rows: number, args: string[] = []): Promise<ConsolePty> {
  return start({
    fake,
    workspace: dir,
    cols,
    rows,
    args,
  });
}

describe.each([
  [80, 24],
  [160, 45],
])('live progress at %i×%i', (cols, rows) => {
  it('shows a spinner, what the agent does, the elapsed time and live token counts, then "done in N s"', async () => {
    fake.script(
      'lead',
      // A tool that takes a while, then a slow stream: each phase can be seen.
      reply(toolUse('bash', { command: 'sleep 1.5' })),
      { kind: 'message', content: [text('A considered answer, written slowly. '.repeat(12))], delayMs: 60, textChunk: 9 },
    );
    const tty = await open(cols, rows, ['--permission-mode', 'auto']);
    await tty.waitForText('ask the lead');
    await tty.type('take your time');
    tty.press('enter');

    let screen = await tty.waitForText(/running bash · \d+ s/);
    const header = rowsOf(screen)[1]!;
    expect(header).toMatch(SPINNER);
    expect(rowsOf(screen)[0]).toMatch(new RegExp(`${SPINNER.source} lead`)); // the tab shows who is busy
    // Estimated output tokens grow while the text streams, before the model reports them.
    screen = await tty.waitForText(/writing · \d+ s/);
    screen = await tty.waitForScreen((s) => /~(\d+) out/.test(rowsOf(s)[1]!) && Number(/~(\d+) out/.exec(rowsOf(s)[1]!)![1]) > 20);
    expect(rowsOf(screen).at(-1)).toMatch(/~\d+(\.\d+k)? out/);
    screen = await tty.waitForText(/lead \(lead\) idle/);
    expect(rowsOf(screen)[1]).toMatch(/done in \d+ s/);
    expect(rowsOf(screen)[1]).not.toMatch(/~\d/);
    expect(rowsOf(screen)[0]).not.toMatch(SPINNER);
  }, 60_000);
});

describe.each([
  [80, 24],
  [90, 28],
  [160, 45],
])('/help at %i×%i', (cols, rows) => {
  it('lays out every command and key in two columns, wrapped under its own column, paged whole', async () => {
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('/help ');
    tty.press('enter');
    let screen = await tty.waitForText('Help · Esc closes');
    const seen: string[] = [];
    for (let page = 0; page < 20; page++) {
      const rowsShown = rowsOf(screen);
      const body = rowsShown.slice(2, rowOf(screen, /↓ \d+ more rows|^end$/) >= 0 ? rowOf(screen, /↓ \d+ more rows|^end$/) : rows - 3);
      seen.push(...body);
      const more = /↓ (\d+) more rows/.exec(screen);
      if (!more) break;
      tty.press('pageDown');
      screen = await tty.waitForScreen((s) => !s.includes(`↓ ${more[1]} more rows`));
    }
    for (const command of COMMANDS) {
      // The whole name: /workflow is not /workflows.
      const row = seen.find((line) => line.startsWith(`/${command.name} `) || line === `/${command.name}`);
      expect(row, `/${command.name} in:\n${seen.join('\n')}`).toBeDefined();
      // The usage and the description are apart, never run together.
      expect(row!).toMatch(new RegExp(`^/${command.name}(?: \\S+)*(?:\\s{2,}\\S|$)`));
    }
    // A wrapped description goes on under its own column, not under the command names.
    const commands = seen.slice(seen.indexOf('Commands'), seen.indexOf('Keys'));
    const column = commands.find((line) => line.startsWith('/help'))!.indexOf('list commands and keys');
    const continued = commands.filter((line) => /^\s+\S/.test(line));
    if (cols < 120) expect(continued.length).toBeGreaterThan(0);
    for (const line of continued) expect(line.search(/\S/), line).toBe(column);
    expect(seen.some((line) => line.startsWith('Ctrl+C'))).toBe(true);
    // Every key row of the keymap's docs is there, the same rows docs/console.md#keys lists.
    for (const { title, rows } of keySections(CONSOLE_BINDINGS)) {
      expect(seen).toContain(title);
      for (const row of rows)
        expect(
          seen.some((line) => line.startsWith(row.keys)),
          `${row.keys} in:\n${seen.join('\n')}`,
        ).toBe(true);
    }
  }, 60_000);
});

describe.each([
  [80, 24],
  [160, 45],
])('views and words at %i×%i', (cols, rows) => {
  it('/team puts every cell under its header, the status glyph counted, and fills the task of a working teammate', async () => {
    fake.script(
      'lead',
      reply(toolUse('task_create', { subject: 'Write the parser' }), toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Take task 1.' })),
      replyText('Spawned.'),
    );
    fake.script(
      'alice',
      reply(toolUse('claim_task', { task_id: 1 })),
      { kind: 'message', content: [text('Parsing carefully. '.repeat(60))], delayMs: 50, textChunk: 10 },
      reply(toolUse('idle', {})),
    );
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('make a parser');
    tty.press('enter');
    await tty.waitForText(/\d:\S alice/);
    await tty.type('/team ');
    tty.press('enter');
    // Once she has claimed it, alice is working on task #1.
    const screen = await tty.waitForText(/alice\s+● working.*#1/);
    const headers = rowsOf(screen)[rowOf(screen, /^name\s+status/)]!;
    const alice = rowsOf(screen)[rowOf(screen, /^alice\s/)]!;
    expect(alice.indexOf('working')).toBe(headers.indexOf('status'));
    expect(alice.slice(headers.indexOf('task')).trimStart()).toMatch(/^#1\b/);
    expect(alice[headers.indexOf('task')]).toBe('#');
    expect(alice[headers.indexOf('in/out')]).toMatch(/\d/);
  }, 60_000);

  it('renders headings without their hashes and quotes unlike code; protocol messages in words; /grid tiles every agent', async () => {
    installScenario(fake);
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type(SCENARIO_PROMPT);
    tty.press('enter');
    await tty.waitForText(SCENARIO_FINAL.slice(0, 30));
    let screen = await tty.screen();
    // The shutdown handshake, as people say it.
    expect(screen).toContain('asked alice to shut down');
    expect(screen).toMatch(/alice agreed to shut down/);
    expect(screen).not.toContain('Answer with');
    expect(screen).not.toContain('[shutdown_');
    tty.write(KEYS.alt(2));
    screen = await tty.waitForScreen((s) => /alice \(coder\)/.test(rowsOf(s)[1]!));
    expect(screen).toContain('lead asked alice to shut down');
    expect(screen).not.toContain('shutdown_response {request_id');

    // /grid: a tile per agent with its name and status; Enter on the second opens alice's pane.
    tty.write(KEYS.alt(1));
    await tty.waitForScreen((s) => /lead \(lead\)/.test(rowsOf(s)[1]!));
    tty.write(CTRL_G);
    screen = await tty.waitForText('Grid (3 agents)');
    for (const name of ['lead', 'alice', 'bob']) expect(screen).toMatch(new RegExp(`[○●■✗◐${SPINNER.source.slice(1, -1)}] ${name}`));
    tty.press('down');
    tty.press('enter');
    await tty.waitForScreen((s) => /alice \(coder\)/.test(rowsOf(s)[1]!));
  }, 60_000);

  it('shows markdown headings as text and block quotes with a bar of their own', async () => {
    fake.script('lead', replyText('## The plan\n\nFirst a paragraph.\n\n> A quoted remark.\n\n```\ncode line\n```'));
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('plan it');
    tty.press('enter');
    const screen = await tty.waitForText('code line');
    expect(rowsOf(screen).some((row) => row === 'The plan')).toBe(true);
    expect(screen).not.toContain('## The plan');
    expect(screen).toContain('▎ A quoted remark.');
    expect(screen).toContain('│ code line');
  }, 60_000);
});
