// Transcript items to terminal lines for a pane of a given width. Lines of finished items are
// cached per item (items are immutable), so a flush re-renders only the item that is streaming.
import chalk from 'chalk';
import type { TranscriptItem } from '../state/transcript.js';
import { renderDiff } from './diff.js';
import { isHighlighterLoaded, renderMarkdown } from './markdown.js';
import { truncateLine, visibleWidth, wrapLines } from './wrap.js';

interface Cached {
  width: number;
  expanded: boolean;
  /** Lines rendered before the highlighter loaded show code plain; render them again once. */
  highlighted: boolean;
  lines: string[];
}

const cache = new WeakMap<TranscriptItem, Cached>();

/** Collapsed tool results still show this many lines of an error: the reason is usually there. */
const ERROR_PREVIEW_LINES = 3;

export function itemLines(item: TranscriptItem, width: number, expanded: boolean): string[] {
  const highlighted = isHighlighterLoaded();
  const cached = cache.get(item);
  if (cached && cached.width === width && cached.expanded === expanded && cached.highlighted === highlighted) return cached.lines;
  const lines = render(item, Math.max(10, width), expanded);
  // A streaming item changes on every flush; caching it would only waste memory.
  if (!(item.kind === 'assistant' && item.streaming)) cache.set(item, { width, expanded, highlighted, lines });
  return lines;
}

/**
 * The last `rows` lines of a transcript, `scroll` rows up from the bottom. Walks from the end
 * and stops as soon as enough lines are collected: cost follows the screen, not the history.
 */
export function visibleLines(items: TranscriptItem[], width: number, rows: number, scroll: number, expanded: boolean): { lines: string[]; maxScroll: number | undefined } {
  const needed = rows + scroll;
  const collected: string[][] = [];
  let count = 0;
  let index = items.length - 1;
  for (; index >= 0 && count < needed; index--) {
    const lines = itemLines(items[index]!, width, expanded);
    collected.push(index > 0 ? ['', ...lines] : lines);
    count += lines.length + (index > 0 ? 1 : 0);
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
      return renderPrompt(item.text, item.source, width);
    case 'inbox':
      return item.messages.flatMap((m) => wrapLines(`${chalk.magenta('✉')} ${chalk.bold(m.from)}${m.type === 'message' ? '' : chalk.dim(` [${m.type}]`)}: ${m.content}`, width));
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

function renderPrompt(text: string, source: string, width: number): string[] {
  if (source === 'auto_claim') return wrapLines(chalk.magenta(`◆ ${text.replace(/<\/?(auto-claimed|review-requested)>/g, '')}`), width);
  const label = source === 'spawn' ? chalk.dim('prompt from the lead') : source === 'system' ? chalk.dim('huddle') : undefined;
  const body = wrapLines(text, width - 2).map((line, i) => (i === 0 ? chalk.cyan.bold('› ') : '  ') + chalk.cyan(line));
  return label ? [label, ...body] : body;
}

function renderTool(item: Extract<TranscriptItem, { kind: 'tool' }>, width: number, expanded: boolean): string[] {
  const mark = item.state === 'running' ? chalk.yellow('…') : item.state === 'ok' ? chalk.green('✓') : chalk.red('✗');
  const duration = item.durationMs !== undefined ? chalk.dim(` ${formatDuration(item.durationMs)}`) : '';
  const head = `${chalk.blue('⏺')} ${chalk.bold(item.name)} ${chalk.dim(item.summary)}`;
  const tail = ` ${mark}${duration}`;
  const lines = [truncateLine(head, Math.max(10, width - visibleWidth(tail))) + tail];
  const result = item.result ?? '';
  if (!result) return lines;
  if (expanded) {
    const body = item.name === 'edit_file' && item.state === 'ok' ? renderDiff(result, width - 4) : wrapLines(result, width - 4);
    return [...lines, ...body.map((line) => `    ${line}`)];
  }
  if (item.state === 'error') {
    const preview = wrapLines(result, width - 4).slice(0, ERROR_PREVIEW_LINES);
    return [...lines, ...preview.map((line) => `    ${chalk.red(line)}`)];
  }
  return lines;
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
