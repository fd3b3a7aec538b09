// A resize while an agent streams, 160→100→80 columns (45→30→24 rows): after
// each, the screen is whole again — tab bar, header, one input line, one status bar at the bottom,
// no word split across rows, nothing a terminal left behind — and it stays so while the stream
// goes on. A real terminal reflows or cuts rows when it shrinks; the emulator does not, so the test
// leaves such debris on its screen at the moment of the resize, and the console must paint it over.
// The built CLI in a real PTY.
import { describe, expect, it } from 'vitest';
import { useConsoles } from '../../helpers/console-pty.js';
import { text } from '../../helpers/fake-api.js';
import { countRows, rowOf, rowsOf, STATUS_BAR } from '../../helpers/console-screen.js';

const start = useConsoles();

/** Numbered words, twelve to a line: a cut word shows as a number with fewer than four digits. */
const WORDS = Array.from({ length: 900 }, (_, i) => `w${String(i + 1).padStart(4, '0')}${i % 12 === 11 ? '\n' : ' '}`).join('');

/** What a terminal may leave on screen when it shrinks: stray text on rows the console draws. */
const DEBRIS = '~~stale row~~';

/** What is wrong with the screen at this size (empty: nothing). */
function problems(screen: string, cols: number, rows: number): string[] {
  const lines = rowsOf(screen);
  const found: string[] = [];
  if (lines.length !== rows) found.push(`${lines.length} rows`);
  if (!/^ 1:\S lead/.test(lines[0] ?? '')) found.push('no tab bar on the first row');
  if (!/^\S lead \(lead\)/.test(lines[1] ?? '')) found.push('no header on the second row');
  if (countRows(screen, STATUS_BAR) !== 1 || !STATUS_BAR.test(lines[rows - 1] ?? '')) found.push('not one status bar, on the last row');
  if (countRows(screen, /^lead › /) !== 1 || rowOf(screen, /^lead › /) !== rows - 2) found.push('not one input line, above the status bar');
  if (lines.some((line) => line.length > cols)) found.push('a row wider than the terminal');
  const cut = screen.match(/\bw\d{0,3}\b|^\d+ w\d{4}/gm);
  if (cut) found.push(`words split across rows: ${cut.join(', ')}`);
  if (screen.includes(DEBRIS)) found.push('rows the terminal left behind');
  return found;
}

describe('a live resize while the lead streams', () => {
  it('redraws a whole screen at 160×45, then 100×30, then 80×24 (and 120×32), and keeps it whole as the stream goes on', async () => {
    const tty = await start({ cols: 160, rows: 45 });
    tty.fake.script('lead', { kind: 'message', content: [text(WORDS)], delayMs: 15, textChunk: 12 });
    await tty.waitForText('ask the lead');
    await tty.type('count slowly');
    tty.press('enter');
    let screen = await tty.waitForText('w0120');
    expect(problems(screen, 160, 45)).toEqual([]);

    for (const [cols, rows, later] of [
      [100, 30, 'w0240'],
      [80, 24, 'w0360'],
      // Wider again: a terminal that reflows leaves rows behind here too.
      [120, 32, 'w0480'],
    ] as const) {
      tty.resize(cols, rows);
      // On the tab bar, in the pane, on the status bar: rows that do not change with the next frame.
      tty.driver.scribble(`\x1b[1;1H${DEBRIS}\x1b[${Math.floor(rows / 2)};3H${DEBRIS}\x1b[${rows};1H${DEBRIS}`);
      screen = await tty
        .waitForScreen((s) => problems(s, cols, rows).length === 0)
        .catch(async (error: Error) => {
          throw new Error(`at ${cols}×${rows}: ${problems(await tty.screen(), cols, rows).join('; ')}\n${error.message}`);
        });
      // And it stays whole while new words arrive at the new size.
      screen = await tty.waitForText(later);
      expect(problems(screen, cols, rows), screen).toEqual([]);
    }
  }, 60_000);
});
