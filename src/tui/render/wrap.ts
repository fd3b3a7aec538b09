// Line wrapping for pane content. Every function here returns lines whose visible width
// (wide CJK characters and emoji count as two columns) is at most `width`, because the
// console prints a pane as one pre-wrapped <Text> and a single overlong line would break it.
import { stripVTControlCharacters } from 'node:util';
import sliceAnsi from 'slice-ansi';
import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

export const ELLIPSIS = '…';

// Printable ASCII is one column per UTF-16 unit, so `length` is its width: the common fast path.
const ASCII_PRINTABLE = /^[ -~]*$/;
// Characters string-width always counts as one column and that never join a wider grapheme
// (Latin, punctuation such as • … —, box drawing): lines of them skip its grapheme segmentation,
// which otherwise dominates render time for coloured lines with gutters and bullets.
const NARROW = /^[\x20-\x7e\u00a1-\u00ac\u00ae-\u024f\u2010-\u2027\u2030-\u205e\u2500-\u25fc]*$/;
const SGR_ALL = /\x1b\[[0-9;:]*m/g;
// Anything an SGR-only sanitizer must look at: escape sequences, C0/C1 controls except \t and \n.
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[^[\]]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const SGR = /^\x1b\[[0-9;:]*m$/;
const BREAK_SPACE = /^((?:\x1b\[[0-9;:]*m)*) /;
const C0 = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Visible columns of a (possibly ANSI-styled) string. */
export function visibleWidth(text: string): number {
  if (ASCII_PRINTABLE.test(text)) return text.length;
  const bare = text.includes('\x1b') ? text.replace(SGR_ALL, '') : text;
  return NARROW.test(bare) ? bare.length : stringWidth(text);
}

/** Widths below one column cannot hold anything; NaN/Infinity would make wrap-ansi misbehave. */
export function clampWidth(width: number): number {
  return Number.isFinite(width) ? Math.max(1, Math.floor(width)) : 80;
}

/**
 * Make untrusted text safe to lay out: CRLF becomes LF, a bare CR keeps only what a terminal
 * would show last (progress-bar output), tabs become two spaces (tab stops would depend on
 * the pane's gutter, and panes are narrow), and escape sequences other than colours (cursor
 * moves, clears, OSC titles) plus other control characters are dropped, since they would
 * move the real cursor. With `keepSgr: false` colours are dropped too.
 */
export function sanitize(text: string, keepSgr: boolean): string {
  let s = text.includes('\r') ? resolveCarriageReturns(text) : text;
  if (s.includes('\t')) s = s.replaceAll('\t', '  ');
  if (!keepSgr) return stripVTControlCharacters(s).replace(C0, '');
  return s.replace(CONTROL, (m) => (SGR.test(m) ? m : ''));
}

function resolveCarriageReturns(text: string): string {
  return text
    .replaceAll('\r\n', '\n')
    .split('\n')
    .map((line) => (line.includes('\r') ? line.slice(line.lastIndexOf('\r') + 1) : line))
    .join('\n');
}

/**
 * Hard-wrap ANSI-styled text to `width` columns: split on \n, break at spaces where possible
 * and inside words when a word is longer than the width. Whitespace is kept (trim: false) so
 * indentation in tool output survives. Input is sanitized first (see `sanitize`).
 */
export function wrapLines(text: string, width: number): string[] {
  return wrapClean(sanitize(text, true), width, false);
}

/**
 * `wrapLines` for text that is already sanitized (the markdown and diff renderers sanitize
 * their input once). `prose` trims the spaces at row boundaries that word wrapping leaves.
 */
export function wrapClean(text: string, width: number, prose = false): string[] {
  const w = clampWidth(width);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.length <= w && ASCII_PRINTABLE.test(line)) {
      out.push(line);
      continue;
    }
    const ascii = ASCII_PRINTABLE.test(line);
    if (!ascii && visibleWidth(line) <= w) {
      out.push(line);
      continue;
    }
    const rows = wrapAnsi(line, w, { hard: true, trim: prose, wordWrap: true }).split('\n');
    for (let i = 0; i < rows.length; i++) {
      // Without trim, wrap-ansi starts a continuation row with the space it broke at: drop it.
      let row = i > 0 && !prose ? (rows[i] ?? '').replace(BREAK_SPACE, '$1') : (rows[i] ?? '');
      // A two-column character cannot fit a one-column pane; truncation keeps the invariant.
      if (!ascii && w < 2 && visibleWidth(row) > w) row = truncateLine(row, w);
      out.push(row);
    }
  }
  return out;
}

/** Cut a styled line to `width` columns, ending with an ellipsis when something was cut. */
export function truncateLine(line: string, width: number): string {
  const w = clampWidth(width);
  if (visibleWidth(line) <= w) return line;
  if (w === 1) return ELLIPSIS;
  // slice-ansi closes any style it cut through, so the ellipsis is unstyled.
  return sliceAnsi(line, 0, w - 1) + ELLIPSIS;
}

/** Pad a styled string with spaces to exactly `width` columns (truncating if longer). */
export function padLine(line: string, width: number, align: 'left' | 'right' | 'center' = 'left'): string {
  const fitted = truncateLine(line, width);
  const gap = width - visibleWidth(fitted);
  if (gap <= 0) return fitted;
  if (align === 'right') return ' '.repeat(gap) + fitted;
  if (align === 'center') return ' '.repeat(gap >> 1) + fitted + ' '.repeat(gap - (gap >> 1));
  return fitted + ' '.repeat(gap);
}
