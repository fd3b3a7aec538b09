// Transcript items to terminal lines for a pane of a given width. Lines of finished items are
// cached per item (items are immutable), so a flush re-renders only the item that is streaming.
import chalk from 'chalk';
import type { TranscriptItem } from './transcript-items.js';
import { renderDiff } from './diff.js';
import { describeInboxMessage, describePrompt, describeToolCall } from './human-words.js';
import { isHighlighterLoaded, isMarkdownLoaded, renderMarkdown } from './markdown.js';
import { truncateLine, visibleWidth, wrapLines } from './wrap.js';

interface Cached {
  width: number;
  expanded: boolean;
  /** Lines rendered before the highlighter (or marked) loaded show code (or all text) plain; render them again once. */
  highlighted: boolean;
  markdown: boolean;
  lines: string[];
}

// A few widths per item: the pane in view and the tiles of /grid render the same items at
// different widths, and one entry per item would re-render both on every switch.
const WIDTHS_PER_ITEM = 3;
const cache = new WeakMap<TranscriptItem, Cached[]>();

/** Collapsed tool results still show this many lines of an error: the reason is usually there. */
const ERROR_PREVIEW_LINES = 3;
/** An edit shows this many lines of its diff before Ctrl+O. */
const EDIT_PREVIEW_LINES = 8;
/** A command shows this many lines of its output before Ctrl+O. */
const BASH_PREVIEW_LINES = 4;

/** Lines added and removed by a unified diff (its file headers not counted). */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) added++;
    else if (line.startsWith('-') && !line.startsWith('---')) removed++;
  }
  return { added, removed };
}

export function itemLines(item: TranscriptItem, width: number, expanded: boolean): string[] {
  const highlighted = isHighlighterLoaded();
  const markdown = isMarkdownLoaded();
  const entries = cache.get(item);
  const hit = entries?.find((c) => c.width === width && c.expanded === expanded && c.highlighted === highlighted && c.markdown === markdown);
  if (hit) return hit.lines;
  const lines = render(item, Math.max(10, width), expanded);
  // A streaming item changes on every flush; caching it would only waste memory.
  if (item.kind === 'assistant' && item.streaming) return lines;
  const kept = (entries ?? []).filter((c) => c.highlighted === highlighted && c.markdown === markdown);
  kept.unshift({ width, expanded, highlighted, markdown, lines });
  cache.set(item, kept.slice(0, WIDTHS_PER_ITEM));
  return lines;
}

/** Rows item `index` takes in a pane: its lines, after a blank row separating it from the item before. */
export function blockLines(items: readonly TranscriptItem[], index: number, width: number, expanded: boolean): string[] {
  const lines = itemLines(items[index]!, width, expanded);
  return index > 0 ? ['', ...lines] : lines;
}

/**
 * The last `rows` lines of a transcript, `scroll` rows up from the bottom. Walks from the end
 * and stops as soon as enough lines are collected: cost follows the screen, not the history.
 */
export function visibleLines(
  items: TranscriptItem[],
  width: number,
  rows: number,
  scroll: number,
  expanded: boolean,
): { lines: string[]; maxScroll: number | undefined } {
  const needed = rows + scroll;
  const collected: string[][] = [];
  let count = 0;
  let index = items.length - 1;
  for (; index >= 0 && count < needed; index--) {
    const lines = blockLines(items, index, width, expanded);
    collected.push(lines);
    count += lines.length;
  }
  const all = collected.reverse().flat();
  const end = Math.max(0, all.length - scroll);
  const start = Math.max(0, end - rows);
  // When the whole history fits, we know exactly how far one can scroll.
  const maxScroll = index < 0 ? Math.max(0, all.length - rows) : undefined;
  return { lines: all.slice(start, end), maxScroll };
}

function render(item: TranscriptItem, width: number, expanded: boolean): string[] {
  switch (item.kind) {
    case 'prompt':
      return renderPrompt(item, width);
    case 'inbox':
      return item.messages.flatMap((m) => {
        const said = describeInboxMessage(m, item.to);
        const head = said.protocol ? chalk.magenta(`⇄ ${said.text}`) : `${chalk.magenta('✉')} ${chalk.bold(said.from)}: ${said.text}`;
        return wrapLines(head, width);
      });
    case 'assistant':
      return renderMarkdown(item.text, width);
    case 'tool':
      return renderTool(item, width, expanded);
    case 'notice': {
      const paint = item.tone === 'error' ? chalk.red : item.tone === 'warn' ? chalk.yellow : chalk.dim;
      return wrapLines(item.text, width - 2).map((line, i) => paint(`${i === 0 ? (item.tone === 'error' ? '✗ ' : '• ') : '  '}${line}`));
    }
    case 'diff':
      return [...wrapLines(chalk.bold(item.title), width), ...renderDiff(item.diff, width)];
  }
}

function renderPrompt(item: Extract<TranscriptItem, { kind: 'prompt' }>, width: number): string[] {
  const shown = describePrompt(item.text, item.source, item.by);
  if (shown.kind === 'claim') return wrapLines(chalk.magenta(`◆ ${shown.text}`), width);
  if (shown.kind === 'internal') return wrapLines(chalk.dim(`◇ ${shown.text}`), width);
  const body = wrapLines(shown.text, width - 2).map((line, i) => (i === 0 ? chalk.cyan.bold('› ') : '  ') + chalk.cyan(line));
  return shown.label ? [chalk.dim(shown.label), ...body] : body;
}

function renderTool(item: Extract<TranscriptItem, { kind: 'tool' }>, width: number, expanded: boolean): string[] {
  const mark =
    item.state === 'running'
      ? item.waitingSince !== undefined
        ? chalk.yellow('◐ waiting for you')
        : chalk.yellow('…')
      : item.state === 'ok'
        ? chalk.green('✓')
        : chalk.red('✗');
  // The tool's own time: what it spent waiting for the person's approval is not the tool's.
  const waited = item.waitedMs ?? 0;
  const duration =
    item.durationMs !== undefined
      ? chalk.dim(` ${formatDuration(Math.max(0, item.durationMs - waited))}${waited >= 1000 ? ` (after ${formatDuration(waited)} waiting for you)` : ''}`)
      : '';
  const isEdit = item.name === 'edit_file' && item.state === 'ok' && item.result !== undefined;
  const changes = isEdit ? diffStat(item.result!) : undefined;
  // write_file's result says how many lines it wrote (runtime/tools/write-file.ts); logs from before also give bytes.
  const wrote = item.name === 'write_file' && item.state === 'ok' ? /\((\d+) lines?[,)]/.exec(item.result ?? '')?.[1] : undefined;
  const described = describeToolCall(item.name, item.summary);
  const head = `${chalk.blue('⏺')} ${chalk.bold(described.name)}${described.detail ? ` ${chalk.dim(described.detail)}` : ''}`;
  const tail = ` ${mark}${changes ? ` ${chalk.green(`+${changes.added}`)} ${chalk.red(`−${changes.removed}`)}` : ''}${wrote !== undefined ? ` wrote ${wrote} line${wrote === '1' ? '' : 's'}` : ''}${duration}`;
  const lines = [truncateLine(head, Math.max(10, width - visibleWidth(tail))) + tail];
  // An explore call's helpers while they run: one line each, what it does last.
  if (item.state === 'running' && item.helpers)
    for (const [id, doing] of Object.entries(item.helpers)) lines.push(truncateLine(chalk.dim(`    ⎿ ${id}: ${doing}`), width));
  const result = item.result ?? '';
  if (!result) return lines;
  if (expanded) {
    const body = isEdit ? renderDiff(result, width - 4) : wrapLines(result, width - 4);
    return [...lines, ...body.map((line) => `    ${line}`)];
  }
  if (isEdit) {
    // An edit shows its change by default: the first lines of its diff (all of it with Ctrl+O).
    const body = renderDiff(result, width - 4).filter((line) => !/^(\x1b\[2m)?(edited |--- |\+\+\+ |=+$)/.test(line));
    const shown = body.slice(0, EDIT_PREVIEW_LINES).map((line) => `    ${line}`);
    return body.length > EDIT_PREVIEW_LINES
      ? [...lines, ...shown, chalk.dim(`    … ${body.length - EDIT_PREVIEW_LINES} more lines (Ctrl+O)`)]
      : [...lines, ...shown];
  }
  if (item.name === 'bash') {
    // A command's output shows by default, its first lines (all of it with Ctrl+O); `[exit code 0]`, in logs from before bash left it out, says nothing the ✓ does not.
    const output = item.state === 'ok' ? result.replace(/\n?\[exit code 0\]$/, '') : result;
    const body = wrapLines(output, width - 4);
    const paint = item.state === 'error' ? chalk.red : chalk.dim;
    const shown = body.slice(0, BASH_PREVIEW_LINES).map((line) => `    ${paint(line)}`);
    return body.length > BASH_PREVIEW_LINES
      ? [...lines, ...shown, chalk.dim(`    … +${body.length - BASH_PREVIEW_LINES} lines (Ctrl+O)`)]
      : [...lines, ...shown];
  }
  if (item.state === 'error') {
    const preview = wrapLines(result, width - 4).slice(0, ERROR_PREVIEW_LINES);
    return [...lines, ...preview.map((line) => `    ${chalk.red(line)}`)];
  }
  return lines;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
