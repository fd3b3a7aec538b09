// The "needs you" queue in a real terminal against the fake API: the status-bar badge, Ctrl+Y,
// ↑/↓, y / n / a, and the result reaching the agent (the built CLI in a PTY, test/helpers/console-pty.ts).
// The store's side: test/tui/state/event-bridge-approvals.test.ts.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reply, replyText, toolUse } from '../../helpers/fake-api.js';
import { useConsoles, WAIT_MS } from '../../helpers/console-pty.js';

const CTRL_Y = '\x19';

describe('the "needs you" view in a terminal', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const start = useConsoles();

  it('shows the badge, opens with Ctrl+Y, and y / n / a answer the selected request', async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-approvals-')));
    // Wide enough for the status bar's flash message after the model, tokens and counts.
    const tty = await start({ workspace: dir, cols: 220 });
    const fake = tty.fake;
    fake.script(
      'lead',
      reply(toolUse('bash', { command: 'touch first.txt' }), toolUse('bash', { command: 'touch second.txt' })),
      reply(toolUse('bash', { command: 'mkdir made' })),
      reply(toolUse('bash', { command: 'mkdir -p made/again' })),
      replyText('All answered.'),
    );
    await tty.waitForText('ask the lead');
    await tty.type('make some files');
    tty.press('enter');

    // The console defaults to ask mode: the lead waits, the status bar says so.
    let screen = await tty.waitForText('needs you: 1');
    expect(screen).toContain('asked you to approve: bash touch first.txt');
    expect(screen).toMatch(/lead.*permission: touch first\.txt/);
    tty.write(CTRL_Y);
    screen = await tty.waitForText('Needs you (1 waiting)');
    expect(screen).toMatch(/› lead\s+bash touch first\.txt/);
    expect(screen).toContain("'touch first.txt' is not on the allow-list · a adds 'touch' to the allow-list");
    tty.write('y');
    await tty.waitForText('approved: touch first.txt');

    // The second call of the same response comes next (the first has run by then); n denies it.
    await tty.waitForText(/› lead\s+bash touch second\.txt/);
    expect(existsSync(path.join(dir, 'first.txt'))).toBe(true);
    tty.write('n');
    await tty.waitForText('denied: touch second.txt');
    // a: approve and allow-list; the next mkdir then runs without a question.
    await tty.waitForText(/› lead\s+bash mkdir made/);
    tty.write('a');
    await tty.waitForText("'mkdir' added to .team/settings.local.json");
    tty.press('escape');
    screen = await tty.waitForText('All answered.');
    expect(screen).not.toContain('needs you:');
    expect(existsSync(path.join(dir, 'second.txt'))).toBe(false);
    expect(existsSync(path.join(dir, 'made', 'again'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, '.team', 'settings.local.json'), 'utf8'))).toEqual({ permissions: { allow: ['mkdir'] } });
    // The model was told of the denial.
    const denied = JSON.stringify(fake.requests.filter((r) => r.agent === 'lead')[1]!.body.messages.at(-1));
    expect(denied).toContain('the person denied this (bash: touch second.txt)');
  });

  it('lists requests of several agents; ↑/↓ pick which one y or n answers', async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-approvals-')));
    // Wide enough for the status bar's flash message after the model, tokens and counts.
    const tty = await start({ workspace: dir, cols: 220 });
    const fake = tty.fake;
    fake.script(
      'lead',
      reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Make your file.' }), toolUse('bash', { command: 'touch by-lead.txt' })),
      replyText('Lead done.'),
    );
    fake.script('alice', reply(toolUse('bash', { command: 'touch by-alice.txt' })), replyText('Alice done.'));
    await tty.waitForText('ask the lead');
    await tty.type('go');
    tty.press('enter');
    await tty.waitForText('needs you: 2');
    tty.write(CTRL_Y);
    // Oldest first; which agent asked first is a race, so read it off the screen (once fully drawn).
    const requestRows = (text: string) => text.split('\n').filter((line) => /^[› ] (lead|alice)\s+bash touch by-/.test(line));
    const screen = await tty.waitForScreen((text) => text.includes('Needs you (2 waiting)') && requestRows(text).length === 2);
    const rows = requestRows(screen);
    expect(rows[0]).toMatch(/^› /);
    const [first, second] = rows.map((line) => /touch (by-\w+\.txt)/.exec(line)![1]!);
    tty.press('down');
    await tty.waitForText(new RegExp(`› \\w+\\s+bash touch ${second!.replace('.', '\\.')}`));
    tty.write('n');
    await tty.waitForText('Needs you (1 waiting)');
    tty.press('up'); // already at the top: stays
    tty.write('y');
    expect(await tty.waitForText('Needs you (0 waiting)')).toContain('Nothing is waiting for you.');
    tty.press('escape');
    await tty.waitForText('Lead done.');
    // The approved command ran (its agent may still be on it: wait on the file; the bound only catches a hang).
    await vi.waitFor(() => expect(existsSync(path.join(dir!, first!))).toBe(true), { timeout: WAIT_MS, interval: 25 });
    expect(existsSync(path.join(dir, second!))).toBe(false);
  });
});
