// Reading back. A 40-step agent run paged from its end to its first line and
// back (bounded offsets, exact counts of the rows above and below, no near-blank page), the view
// pinned while the agent keeps writing, Home/End and g/G, the mouse wheel, and a search in the pane.
// The built CLI in a real PTY against the fake Messages API, at 80×24 and 160×45.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, replyText, startFakeApi, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { KEYS, PtyDriver } from '../../helpers/pty-driver.js';
import { rowOf, rowsOf, scrollFooter } from '../../helpers/console-screen.js';

const WHEEL_UP = '\x1b[<64;10;10M';
const WHEEL_DOWN = '\x1b[<65;10;10M';
const CTRL_F = '\x06';
const [HOME, END] = ['\x1b[H', '\x1b[F'];

let fake: FakeApi;
let dir: string;
let driver: PtyDriver | undefined;

beforeEach(async () => {
  fake = await startFakeApi();
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-scroll-'));
});

afterEach(async () => {
  await driver?.kill();
  driver = undefined;
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(cols: number, rows: number): PtyDriver {
  driver = new PtyDriver({
    cwd: dir,
    cols,
    rows,
    env: { ANTHROPIC_API_KEY: 'sk-test-pty-0123456789', ANTHROPIC_BASE_URL: fake.url, HUDDLE_RETRY_BASE_MS: '5' },
  });
  return driver;
}

/** A 40-step run of the lead: text, then a tool call, forty times; then its last words. */
function scriptFortySteps(): void {
  const steps = Array.from({ length: 40 }, (_, i) => reply(text(`Step ${i + 1} of 40: looking at the board once more.`), toolUse('task_list', {})));
  fake.script('lead', ...steps, replyText('All forty steps are done.'));
}

/** The pane's transcript rows on a scrolled screen: between its header (row 1) and its footer. */
function bodyRows(screen: string): string[] {
  const footer = scrollFooter(screen)!;
  return rowsOf(screen).slice(2, footer.row);
}

describe.each([
  [80, 24],
  [160, 45],
])('scrolling a pane at %i×%i', (cols, rows) => {
  it('pages from the end of a 40-step run to its first line and back, counting exactly, never a blank page', async () => {
    scriptFortySteps();
    const tty = open(cols, rows);
    await tty.waitFor('ask the lead');
    await tty.type('run forty steps');
    tty.write(KEYS.enter);
    await tty.waitFor('All forty steps are done.', 30_000);
    await tty.waitFor(/lead \(lead\) idle/);

    // Tab bar, header, the transcript, the footer, the input, the status bar.
    const paneRows = rows - 5;
    let previous: { above: number; below: number } | undefined;
    let total: number | undefined;
    for (let page = 0; ; page++) {
      expect(page, 'pages to the top').toBeLessThan(200);
      tty.write(KEYS.pageUp);
      const screen = await tty.waitFor((s) => {
        const footer = scrollFooter(s);
        return footer !== undefined && (previous === undefined || footer.above < previous.above || footer.above === 0);
      });
      const footer = scrollFooter(screen)!;
      // The footer sits on the pane's last row, right above the input.
      expect(footer.row).toBe(rows - 3);
      total ??= footer.above + paneRows + footer.below;
      expect(footer.above + paneRows + footer.below, 'rows above + shown + below is the whole transcript').toBe(total);
      if (previous) expect(footer.above).toBe(Math.max(0, previous.above - (paneRows - 1)));
      const shown = bodyRows(screen);
      expect(shown).toHaveLength(paneRows);
      expect(shown.filter((row) => row.trim() !== '').length, `a page with text on it:\n${screen}`).toBeGreaterThanOrEqual(Math.floor(paneRows / 3));
      previous = footer;
      if (footer.above === 0) {
        expect(screen).toContain('› run forty steps');
        expect(rowOf(screen, '› run forty steps')).toBe(2);
        break;
      }
    }
    // Further up there is nothing: the offset stays where it is.
    tty.write(KEYS.pageUp);
    tty.write(KEYS.pageUp);
    let screen = await tty.screen();
    expect(scrollFooter(screen)).toMatchObject({ above: 0 });

    // Back down, page by page, to the end: there the footer goes and the pane follows the end again.
    for (let page = 0; ; page++) {
      expect(page, 'pages to the end').toBeLessThan(200);
      tty.write(KEYS.pageDown);
      screen = await tty.waitFor((s) => scrollFooter(s) === undefined || scrollFooter(s)!.above > previous!.above);
      const footer = scrollFooter(screen);
      if (!footer) break;
      expect(footer.above + paneRows + footer.below).toBe(total);
      expect(bodyRows(screen).filter((row) => row.trim() !== '').length).toBeGreaterThanOrEqual(Math.floor(paneRows / 3));
      previous = footer;
    }
    expect(screen).toContain('All forty steps are done.');

    // Home to the first line, End back to the end; while scrolled g and G do the same.
    tty.write(HOME);
    screen = await tty.waitFor((s) => scrollFooter(s)?.above === 0);
    expect(screen).toContain('› run forty steps');
    tty.write(END);
    screen = await tty.waitFor((s) => scrollFooter(s) === undefined);
    expect(screen).toContain('All forty steps are done.');
    tty.write(KEYS.pageUp);
    await tty.waitFor((s) => scrollFooter(s) !== undefined);
    tty.write('g');
    await tty.waitFor((s) => scrollFooter(s)?.above === 0);
    tty.write('G');
    screen = await tty.waitFor((s) => scrollFooter(s) === undefined);
    // Typed while following the end, g is text.
    tty.write('g');
    await tty.waitFor('lead › g');
  }, 60_000);

  it('keeps a scrolled view where it is while the agent writes below it, and scrolls with the mouse wheel', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `- line ${String(i + 1).padStart(3, '0')} of a long answer`).join('\n');
    fake.script('lead', { kind: 'message', content: [text(lines)], delayMs: 10, textChunk: 12 });
    const tty = open(cols, rows);
    await tty.waitFor('ask the lead');
    await tty.type('write a long answer');
    tty.write(KEYS.enter);
    // More than a screenful, and still writing.
    await tty.waitFor('line 060', 20_000);

    tty.write(WHEEL_UP);
    let screen = await tty.waitFor((s) => scrollFooter(s) !== undefined);
    const pinned = bodyRows(screen).join('\n');
    const below = scrollFooter(screen)!.below;
    expect(below).toBeGreaterThan(0);
    // New rows arrive below; what is on screen stays.
    screen = await tty.waitFor((s) => (scrollFooter(s)?.below ?? 0) >= below + 10, 20_000);
    expect(bodyRows(screen).join('\n')).toBe(pinned);

    tty.write(WHEEL_UP);
    screen = await tty.waitFor((s) => bodyRows(s).join('\n') !== pinned);
    tty.write(WHEEL_DOWN);
    screen = await tty.waitFor((s) => bodyRows(s).join('\n') === pinned);
    tty.write(END);
    await tty.waitFor((s) => scrollFooter(s) === undefined);
    await tty.waitFor('line 200', 30_000);
  }, 60_000);

  it('searches the pane: Ctrl+F, the match in view and marked, Enter to the one before, Esc ends the search', async () => {
    scriptFortySteps();
    const tty = open(cols, rows);
    await tty.waitFor('ask the lead');
    await tty.type('run forty steps');
    tty.write(KEYS.enter);
    await tty.waitFor('All forty steps are done.', 30_000);

    tty.write(CTRL_F);
    await tty.waitFor('search:');
    await tty.type('Step 7 of');
    // The whole query applied (an earlier one, "Step 7", has one match too).
    let screen = await tty.waitFor((s) => s.includes('search: Step 7 of') && s.includes('match 1 of 1'));
    expect(screen).toContain('Step 7 of 40');
    expect(await tty.isInverse('Step 7 of')).toBe(true);
    expect(await tty.isInverse('40: looking')).toBe(false);
    expect(scrollFooter(screen)).toBeUndefined(); // the search footer is in its place
    await tty.type('\x7f\x7f\x7f\x7f\x7f');
    // "Step" (case-insensitive): the forty steps, the prompt and the last words ("forty steps");
    // the newest match first, numbered from the top.
    screen = await tty.waitFor('match 42 of 42');
    expect(screen).toContain('All forty steps are done.');
    tty.write(KEYS.enter);
    screen = await tty.waitFor('match 41 of 42');
    expect(screen).toContain('Step 40 of 40');
    tty.write(KEYS.escape);
    screen = await tty.waitFor((s) => scrollFooter(s) !== undefined && !s.includes('search:'));
  }, 60_000);
});
