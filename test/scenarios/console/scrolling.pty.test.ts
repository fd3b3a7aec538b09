// Reading back. A 40-step agent run paged from its end to its first line and
// back (bounded offsets, exact counts of the rows above and below, no near-blank page), the view
// pinned while the agent keeps writing, Home/End and g/G, the mouse wheel, and a search in the pane.
// The built CLI in a real PTY against the fake Messages API, at 80×24 and 160×45.
import { describe, expect, it } from 'vitest';
import { useConsoles, type ConsolePty } from '../../helpers/console-pty.js';
import { reply, replyText, text, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { rowOf, rowsOf, scrollFooter } from '../../helpers/console-screen.js';

const WHEEL_UP = '\x1b[<64;10;10M';
const WHEEL_DOWN = '\x1b[<65;10;10M';
const CTRL_F = '\x06';
const [HOME, END] = ['\x1b[H', '\x1b[F'];

const start = useConsoles();
let fake: FakeApi;

async function open(cols: number, rows: number, script: () => void): Promise<ConsolePty> {
  const tty = await start({ cols, rows });
  fake = tty.fake;
  script();
  return tty;
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
    const tty = await open(cols, rows, scriptFortySteps);
    await tty.waitForText('ask the lead');
    await tty.type('run forty steps');
    tty.press('enter');
    await tty.waitForText('All forty steps are done.');
    await tty.waitForText(/lead \(lead\) idle/);

    // Tab bar, header, the transcript, the footer, the input, the status bar.
    const paneRows = rows - 5;
    let previous: { above: number; below: number } | undefined;
    let total: number | undefined;
    for (let page = 0; ; page++) {
      expect(page, 'pages to the top').toBeLessThan(200);
      tty.press('pageUp');
      const screen = await tty.waitForScreen((s) => {
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
    tty.press('pageUp');
    tty.press('pageUp');
    let screen = await tty.screen();
    expect(scrollFooter(screen)).toMatchObject({ above: 0 });

    // Back down, page by page, to the end: there the footer goes and the pane follows the end again.
    for (let page = 0; ; page++) {
      expect(page, 'pages to the end').toBeLessThan(200);
      tty.press('pageDown');
      screen = await tty.waitForScreen((s) => scrollFooter(s) === undefined || scrollFooter(s)!.above > previous!.above);
      const footer = scrollFooter(screen);
      if (!footer) break;
      expect(footer.above + paneRows + footer.below).toBe(total);
      expect(bodyRows(screen).filter((row) => row.trim() !== '').length).toBeGreaterThanOrEqual(Math.floor(paneRows / 3));
      previous = footer;
    }
    expect(screen).toContain('All forty steps are done.');

    // Home to the first line, End back to the end; while scrolled g and G do the same.
    tty.write(HOME);
    screen = await tty.waitForScreen((s) => scrollFooter(s)?.above === 0);
    expect(screen).toContain('› run forty steps');
    tty.write(END);
    screen = await tty.waitForScreen((s) => scrollFooter(s) === undefined);
    expect(screen).toContain('All forty steps are done.');
    tty.press('pageUp');
    await tty.waitForScreen((s) => scrollFooter(s) !== undefined);
    tty.write('g');
    await tty.waitForScreen((s) => scrollFooter(s)?.above === 0);
    tty.write('G');
    screen = await tty.waitForScreen((s) => scrollFooter(s) === undefined);
    // Typed while following the end, g is text.
    tty.write('g');
    await tty.waitForText('lead › g');
  }, 60_000);

  it('keeps a scrolled view where it is while the agent writes below it, and scrolls with the mouse wheel', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `- line ${String(i + 1).padStart(3, '0')} of a long answer`).join('\n');
    const tty = await open(cols, rows, () => fake.script('lead', { kind: 'message', content: [text(lines)], delayMs: 10, textChunk: 12 }));
    await tty.waitForText('ask the lead');
    await tty.type('write a long answer');
    tty.press('enter');
    // More than a screenful, and still writing.
    await tty.waitForText('line 060');

    tty.write(WHEEL_UP);
    let screen = await tty.waitForScreen((s) => scrollFooter(s) !== undefined);
    const pinned = bodyRows(screen).join('\n');
    const below = scrollFooter(screen)!.below;
    expect(below).toBeGreaterThan(0);
    // New rows arrive below; what is on screen stays.
    screen = await tty.waitForScreen((s) => (scrollFooter(s)?.below ?? 0) >= below + 10);
    expect(bodyRows(screen).join('\n')).toBe(pinned);

    tty.write(WHEEL_UP);
    screen = await tty.waitForScreen((s) => bodyRows(s).join('\n') !== pinned);
    tty.write(WHEEL_DOWN);
    screen = await tty.waitForScreen((s) => bodyRows(s).join('\n') === pinned);
    tty.write(END);
    await tty.waitForScreen((s) => scrollFooter(s) === undefined);
    await tty.waitForText('line 200');
  }, 60_000);

  it('searches the pane: Ctrl+F, the match in view and marked, Enter to the one before, Esc ends the search', async () => {
    const tty = await open(cols, rows, scriptFortySteps);
    await tty.waitForText('ask the lead');
    await tty.type('run forty steps');
    tty.press('enter');
    await tty.waitForText('All forty steps are done.');

    tty.write(CTRL_F);
    await tty.waitForText('search:');
    await tty.type('Step 7 of');
    // The whole query applied (an earlier one, "Step 7", has one match too).
    let screen = await tty.waitForScreen((s) => s.includes('search: Step 7 of') && s.includes('match 1 of 1'));
    expect(screen).toContain('Step 7 of 40');
    expect(await tty.isInverse('Step 7 of')).toBe(true);
    expect(await tty.isInverse('40: looking')).toBe(false);
    expect(scrollFooter(screen)).toBeUndefined(); // the search footer is in its place
    await tty.type('\x7f\x7f\x7f\x7f\x7f');
    // "Step" (case-insensitive): the forty steps, the prompt and the last words ("forty steps");
    // the newest match first, numbered from the top.
    screen = await tty.waitForText('match 42 of 42');
    expect(screen).toContain('All forty steps are done.');
    tty.press('enter');
    screen = await tty.waitForText('match 41 of 42');
    expect(screen).toContain('Step 40 of 40');
    tty.press('escape');
    screen = await tty.waitForScreen((s) => scrollFooter(s) !== undefined && !s.includes('search:'));
  }, 60_000);
});
