// The console's hold on the terminal beyond what Ink does: a clean redraw after a resize, and
// mouse reporting (for the wheel) that can be switched off so the terminal's own selection works.
import { useApp, useStdout } from 'ink';
import { useEffect, useRef } from 'react';
import { atExit } from '../../runtime/process/at-exit.js';

const CLEAR_SCREEN = '\x1b[H\x1b[2J';
// Button presses (the wheel is buttons 64/65) in SGR form; no motion reports.
const MOUSE_ON = '\x1b[?1000h\x1b[?1006h';
const MOUSE_OFF = '\x1b[?1000l\x1b[?1006l';

/**
 * After the terminal changes size and the frame for the new size is written, clear the screen and
 * write that frame again from the top. A terminal reflows or cuts what was on screen when it
 * shrinks, so Ink's line-by-line update no longer matches it; a clean slate always does.
 */
export function useCleanRedrawOnResize(columns: number, rows: number, redraws = 0): void {
  const { write } = useStdout();
  const { waitUntilRenderFlush } = useApp();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    let cancelled = false;
    // Ink's own write: it erases its frame, writes ours, then writes its last frame again whole.
    void waitUntilRenderFlush().then(() => {
      if (!cancelled) write(CLEAR_SCREEN);
    });
    return () => {
      cancelled = true;
    };
  }, [columns, rows, redraws, write, waitUntilRenderFlush]);
}

/** Mouse reporting while `on` (and off again when the console closes, or the process exits). */
export function useMouseReporting(on: boolean): void {
  const { stdout } = useStdout();
  useEffect(() => {
    if (!on || !(stdout as NodeJS.WriteStream).isTTY) return;
    stdout.write(MOUSE_ON);
    const off = () => stdout.write(MOUSE_OFF);
    const cancel = atExit(off);
    return () => {
      cancel();
      off();
    };
  }, [on, stdout]);
}
