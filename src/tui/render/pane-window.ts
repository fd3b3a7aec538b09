// Which rows of a transcript a pane shows. Following the end (no scroll), only the last rows are
// rendered, walking back from the end. Scrolled, the view starts at an anchor (an item and a row in
// it), so it stays where the person put it while the agent writes below; offsets are bounded by
// what is there, and the rows above and below are counted exactly.
import { stripVTControlCharacters } from 'node:util';
import sliceAnsi from 'slice-ansi';
import type { TranscriptItem } from './transcript-items.js';
import { blockLines } from './transcript-lines.js';
import { visibleWidth } from './wrap.js';

/**
 * Where a scrolled pane's view starts: `row` rows into the rows of item `itemId` (its blank
 * separator first). Anchored to an item, not counted from the bottom, so the view stays put while
 * the agent keeps writing below it, and survives a width change. No entry: the view follows the end.
 */
export interface PaneScroll {
  itemId: number;
  row: number;
}

export interface PaneGeometry {
  width: number;
  /** Rows the transcript gets. */
  rows: number;
  expanded: boolean;
}

export interface PaneWindow {
  /** The visible rows, at most `rows` of them. */
  lines: string[];
  /** Index of the first visible row in the whole transcript. */
  top: number;
  /** Rows in the whole transcript at this width. */
  total: number;
  above: number;
  below: number;
}

/** Where each item's rows start, and how many rows there are in all. */
export interface RowIndex {
  starts: number[];
  total: number;
}

export function rowIndex(items: readonly TranscriptItem[], width: number, expanded: boolean): RowIndex {
  const starts: number[] = [];
  let total = 0;
  for (let index = 0; index < items.length; index++) {
    starts.push(total);
    total += blockLines(items, index, width, expanded).length;
  }
  return { starts, total };
}

/** The row an anchor points at (its item may have been dropped from the front: then the top). */
export function anchorRow(items: readonly TranscriptItem[], index: RowIndex, scroll: PaneScroll): number {
  const position = findItem(items, scroll.itemId);
  if (position < 0) return 0;
  const end = position + 1 < items.length ? index.starts[position + 1]! : index.total;
  return Math.min(index.starts[position]! + scroll.row, Math.max(index.starts[position]!, end - 1));
}

/** The anchor of a row: the item whose rows hold it, and how far in. */
export function rowAnchor(items: readonly TranscriptItem[], index: RowIndex, row: number): PaneScroll | undefined {
  if (items.length === 0) return undefined;
  let lo = 0;
  let hi = items.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index.starts[mid]! <= row) lo = mid;
    else hi = mid - 1;
  }
  return { itemId: items[lo]!.id, row: Math.max(0, row - index.starts[lo]!) };
}

/** The largest top row: the last page. */
export function maxTop(index: RowIndex, rows: number): number {
  return Math.max(0, index.total - rows);
}

export function paneWindow(items: readonly TranscriptItem[], geometry: PaneGeometry, scroll: PaneScroll | undefined): PaneWindow {
  const { width, rows, expanded } = geometry;
  if (!scroll) return tail(items, width, rows, expanded);
  const index = rowIndex(items, width, expanded);
  const top = Math.min(anchorRow(items, index, scroll), maxTop(index, rows));
  const lines = rowsFrom(items, index, width, expanded, top, rows);
  return { lines, top, total: index.total, above: top, below: Math.max(0, index.total - top - lines.length) };
}

/** The last `rows` rows, rendering only the items they come from. */
function tail(items: readonly TranscriptItem[], width: number, rows: number, expanded: boolean): PaneWindow {
  const collected: string[][] = [];
  let count = 0;
  for (let index = items.length - 1; index >= 0 && count < rows; index--) {
    const lines = blockLines(items, index, width, expanded);
    collected.push(lines);
    count += lines.length;
  }
  const all = collected.reverse().flat();
  const lines = all.slice(Math.max(0, all.length - rows));
  // Rows above are not counted while following (that would render the whole history each frame).
  return { lines, top: -1, total: -1, above: Math.max(0, all.length - lines.length), below: 0 };
}

/** `count` rows from row `top` on. */
export function rowsFrom(items: readonly TranscriptItem[], index: RowIndex, width: number, expanded: boolean, top: number, count: number): string[] {
  const out: string[] = [];
  let position = findRowItem(index, top);
  if (position < 0) return out;
  let skip = top - index.starts[position]!;
  for (; position < items.length && out.length < count; position++) {
    const lines = blockLines(items, position, width, expanded);
    for (let row = skip; row < lines.length && out.length < count; row++) out.push(lines[row]!);
    skip = 0;
  }
  return out;
}

function findRowItem(index: RowIndex, row: number): number {
  if (index.starts.length === 0) return -1;
  let lo = 0;
  let hi = index.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index.starts[mid]! <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function findItem(items: readonly TranscriptItem[], id: number): number {
  // Ids grow along the transcript: a binary search finds the item.
  let lo = 0;
  let hi = items.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = items[mid]!.id;
    if (at === id) return mid;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return items.findIndex((item) => item.id === id);
}

// ---- search ---------------------------------------------------------------------------------

/** The rows whose text contains `query` (case-insensitive), top to bottom. */
export function searchRows(items: readonly TranscriptItem[], width: number, expanded: boolean, query: string): number[] {
  const needle = query.toLowerCase();
  if (!needle) return [];
  const found: number[] = [];
  let row = 0;
  for (let index = 0; index < items.length; index++) {
    for (const line of blockLines(items, index, width, expanded)) {
      if (line && stripVTControlCharacters(line).toLowerCase().includes(needle)) found.push(row);
      row++;
    }
  }
  return found;
}

/** Marks every occurrence of `query` in a styled line (reverse video), keeping its styles around it. */
export function highlightMatches(line: string, query: string): string {
  if (!query) return line;
  const plain = stripVTControlCharacters(line);
  const lower = plain.toLowerCase();
  const needle = query.toLowerCase();
  let at = lower.indexOf(needle);
  if (at < 0) return line;
  let out = '';
  let column = 0;
  let consumed = 0;
  while (at >= 0) {
    const start = visibleWidth(plain.slice(0, at));
    const end = visibleWidth(plain.slice(0, at + needle.length));
    out += sliceAnsi(line, column, start) + `\x1b[7m${plain.slice(at, at + needle.length)}\x1b[27m`;
    column = end;
    consumed = at + needle.length;
    at = lower.indexOf(needle, consumed);
  }
  return out + sliceAnsi(line, column);
}
