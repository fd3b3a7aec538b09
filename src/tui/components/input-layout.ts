// The input as rows on screen: each line of the text wrapped to the width left after the prompt
// mark, and where the cursor is, so long input grows downwards (up to a limit, then scrolls with
// the cursor) instead of running off the right edge and taking the prompt with it.
import type { InputBuffer } from '../state/input-buffer.js';
import { visibleWidth } from '../render/wrap.js';

export interface InputRow {
  text: string;
  /** Where the cursor sits in this row, in characters of `text` (`text.length`: after the last one). */
  cursor?: number;
}

export function layoutInput(buffer: InputBuffer, width: number): { rows: InputRow[]; cursorRow: number } {
  const w = Math.max(4, width);
  const rows: InputRow[] = [];
  let cursorRow = 0;
  let offset = 0;
  for (const line of buffer.text.split('\n')) {
    let row = '';
    let used = 0;
    let cursorInRow: number | undefined;
    const lineEnd = offset + line.length;
    for (const char of line) {
      const charWidth = visibleWidth(char);
      if (used + charWidth > w) {
        rows.push(cursorInRow === undefined ? { text: row } : { text: row, cursor: cursorInRow });
        row = '';
        used = 0;
        cursorInRow = undefined;
      }
      if (offset === buffer.cursor) {
        cursorInRow = row.length;
        cursorRow = rows.length;
      }
      row += char;
      used += charWidth;
      offset += char.length;
    }
    if (buffer.cursor === lineEnd) {
      // After the last character: on this row if there is room, else at the start of a new one.
      if (used + 1 > w) {
        rows.push({ text: row });
        row = '';
      }
      cursorInRow = row.length;
      cursorRow = rows.length;
    }
    rows.push(cursorInRow === undefined ? { text: row } : { text: row, cursor: cursorInRow });
    offset = lineEnd + 1;
  }
  return { rows, cursorRow };
}

/** The rows shown when there are more than `max`: a window that keeps the cursor in it. */
export function visibleInputRows(layout: { rows: InputRow[]; cursorRow: number }, max: number): { rows: InputRow[]; first: number } {
  if (layout.rows.length <= max) return { rows: layout.rows, first: 0 };
  const first = Math.max(0, Math.min(layout.cursorRow - max + 1, layout.rows.length - max));
  return { rows: layout.rows.slice(first, first + max), first };
}
