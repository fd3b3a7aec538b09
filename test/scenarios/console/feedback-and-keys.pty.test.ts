// Feedback is read in full above the input and stays until the next
// action; keys work as in Claude Code (Esc clears before it interrupts, Ctrl+C interrupts, then
// clears, then quits); long input wraps and grows; '/' opens a palette of commands; Tab cycles
// ambiguous arguments. The built CLI in a real PTY against the fake Messages API, at 80×24 and 160×45.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { rowOf, rowsOf, STATUS_BAR } from '../../helpers/console-screen.js';

let fake: FakeApi;
let dir: string;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-feedback-'));
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = useConsoles();

function open(cols: number, rows: number): Promise<ConsolePty> {
  return start({
    fake,
    workspace: dir,
    cols,
    rows,
  });
}

/** The notice: the rows between the pane and the input line, marks taken off, joined into one text. */
function notice(screen: string): string {
  const rows = rowsOf(screen);
  const input = rows.findIndex((row) => /^\S+ › /.test(row));
  const start = rows.findIndex((row, i) => i < input && /^[✗!•] /.test(row));
  if (start < 0) return '';
  return rows
    .slice(start, input)
    .map((row) => row.replace(/^[✗!•] /, '').trim())
    .join(' ');
}

/** A stream long enough to act on while it runs. */
const LONG_STREAM = { kind: 'message' as const, content: [text(`${'words keep coming '.repeat(300)}`)], delayMs: 25, textChunk: 18 };

describe.each([
  [80, 24],
  [160, 45],
])('feedback and keys at %i×%i', (cols, rows) => {
  it('shows command results, errors and hints whole above the input, until the next action', async () => {
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    const cases: Array<[string, string]> = [
      ['/foo', 'unknown command /foo; /help lists them'],
      ['/send nobody hi there', "no agent named 'nobody'; agents: lead"],
      ['/spawn', 'usage: /spawn NAME ROLE PROMPT'],
      ['/model', 'model: claude-sonnet-4-6'],
      ['/shutdown', 'usage: /shutdown NAME [--now]'],
      ['/worktree remove', 'usage: /worktree [list | remove NAME [--force]]'],
    ];
    for (const [line, said] of cases) {
      // A space after the command shuts the palette, so Enter runs the line as typed.
      await tty.type(`${line} `);
      await tty.waitForText(`lead › ${line}`);
      tty.press('enter');
      const screen = await tty.waitForScreen((s) => notice(s).includes(said));
      expect(rowOf(screen, STATUS_BAR), screen).toBe(rows - 1);
      // Typing does not take it away; the next action does.
      await tty.type('abc');
      expect(notice(await tty.waitForText('lead › abc'))).toContain(said);
      tty.press('escape');
      await tty.waitForScreen((s) => notice(s) === '' && s.includes('ask the lead'));
    }
    // The quit hint is a notice too, and any other key takes it back.
    tty.press('ctrlC');
    await tty.waitForScreen((s) => notice(s).includes('Press Ctrl+C again to quit'));
    tty.write('x');
    await tty.waitForScreen((s) => notice(s) === '' && s.includes('lead › x'));
  }, 60_000);

  it('Esc clears what is typed before it interrupts; Ctrl+C interrupts, then clears, then quits twice', async () => {
    fake.script('lead', LONG_STREAM, replyText('Back again.'), LONG_STREAM);
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    await tty.type('talk for a while');
    tty.press('enter');
    await tty.waitForText('words keep coming');
    // Half a sentence typed while the lead works: Esc clears it, the lead goes on.
    await tty.type('half a sente');
    await tty.waitForText('lead › half a sente');
    tty.press('escape');
    // The input is empty again: its hint says what the lead does while it works.
    let screen = await tty.waitForScreen((s) => /lead › +lead: (thinking|writing)/.test(s));
    expect(screen).not.toContain('interrupted');
    expect(screen).toMatch(/lead \(lead\) working/);
    // Nothing typed: Esc interrupts.
    tty.press('escape');
    await tty.waitForText('• interrupted');
    await tty.type('once more');
    tty.press('enter');
    // The reply on screen is not yet the end of the turn: wait for the lead to be idle, so the next
    // line starts a turn rather than queueing into the one that is ending.
    await tty.waitForScreen((s) => s.includes('Back again.') && /lead \(lead\) idle/.test(s));
    await tty.type('and talk again');
    tty.press('enter');
    // The new turn's stream, below its prompt (the first stream's words are still on screen above it).
    await tty.waitForScreen((s) => {
      const prompt = s.search(/^› and talk again/m);
      return prompt >= 0 && /lead \(lead\) working/.test(s) && s.slice(prompt).includes('words keep coming');
    });
    // Ctrl+C with text typed interrupts the agent first; what is typed stays.
    await tty.type('draft');
    await tty.waitForText('lead › draft');
    tty.press('ctrlC');
    screen = await tty.waitForText(/lead \(lead\) idle/);
    expect(screen).toContain('lead › draft');
    tty.press('ctrlC');
    await tty.waitForText('ask the lead');
    tty.press('ctrlC');
    await tty.waitForText('Press Ctrl+C again to quit');
    tty.press('ctrlC');
    expect((await tty.exited).exitCode).toBe(0);
  }, 60_000);

  it('wraps long input under its prompt and grows with it, never scrolling the prompt away', async () => {
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    const words = Array.from({ length: 40 }, (_, i) => `word${String(i).padStart(2, '0')}`).join(' ');
    await tty.type(words);
    const screen = await tty.waitForText('word39');
    const start = rowOf(screen, 'lead › ');
    const end = rowOf(screen, STATUS_BAR);
    expect(start).toBeGreaterThan(0);
    // Every character typed is on screen, in order, in the rows between the prompt and the status bar.
    const typed = rowsOf(screen)
      .slice(start, end)
      .map((row, i) => (i === 0 ? row.slice('lead › '.length) : row.trimStart()))
      .join('');
    expect(typed.replace(/\s+/g, '')).toBe(words.replace(/\s+/g, ''));
    expect(end - start).toBe(Math.ceil((words.length + 1) / (cols - 'lead › '.length - 1)));
    expect(rowOf(screen, STATUS_BAR)).toBe(rows - 1);
  }, 60_000);

  it("'/' lists the commands with what they do, filtered as you type; ↓ and Tab pick one", async () => {
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    tty.write('/');
    let screen = await tty.waitForText('list commands and keys');
    expect(screen).toMatch(/\/help\s+list commands and keys/);
    expect(screen).toMatch(/\/tasks\s+the task board/);
    await tty.type('t');
    screen = await tty.waitForScreen((s) => !s.includes('/help '));
    expect(screen).toMatch(/\/tasks\s+the task board/);
    expect(screen).toMatch(/\/team\s+the roster/);
    tty.press('down');
    tty.press('tab');
    // Completed with a space after it: the palette goes, the line waits for Enter.
    screen = await tty.waitForScreen((s) => s.includes('lead › /team') && !/\/tasks\s+the task board/.test(s));
    tty.press('enter');
    await tty.waitForText(/Team \(1 agents\)/);
  }, 60_000);

  it('Tab on an ambiguous argument cycles through the choices', async () => {
    fake.script('alice', reply(toolUse('idle', {})));
    fake.script('anna', reply(toolUse('idle', {})));
    const tty = await open(cols, rows);
    await tty.waitForText('ask the lead');
    for (const name of ['alice', 'anna']) {
      await tty.type(`/spawn ${name} coder wait`);
      await tty.waitForText(`lead › /spawn ${name} coder wait`);
      tty.press('enter');
      await tty.waitForText(new RegExp(`\\d:\\S ${name}`));
    }
    await tty.type('/send a');
    await tty.waitForText('lead › /send a');
    tty.press('tab');
    await tty.waitForText('lead › /send alice');
    tty.press('tab');
    await tty.waitForText('lead › /send anna');
    tty.press('tab');
    await tty.waitForText('lead › /send alice');
  }, 60_000);
});
