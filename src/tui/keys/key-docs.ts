// The console's keys as people read them, made from the keymap itself: /help shows these rows, and
// npm run docs writes them into docs/console.md#keys and the README's cheat-sheet, so the keys are
// written once, in console-keymap.ts.
import type { Binding } from './keymap.js';
import { TEXT } from './key-pattern.js';

export interface KeyRow {
  /** The keys as written for people ("Tab / Shift+Tab"). */
  keys: string;
  doc: string;
}

export interface KeySection {
  title: string;
  rows: KeyRow[];
}

/** Sections in the order people look for them; `of` says which bindings belong (the first section that claims one wins). */
const SECTIONS: Array<{ title: string; of: (binding: Binding) => boolean }> = [
  { title: 'Panes and the console', of: (b) => b.layer === 'global' },
  { title: 'The input line', of: (b) => b.layer === 'input' || b.layer === 'typing' },
  { title: 'The needs-you queue (Ctrl+Y)', of: (b) => b.views?.includes('approvals') === true },
  { title: 'Searching a pane (Ctrl+F)', of: (b) => b.views?.includes('search') === true },
  { title: 'The grid (Ctrl+G)', of: (b) => b.views?.includes('grid') === true },
  { title: 'The backlog (/backlog)', of: (b) => b.views?.includes('backlog') === true },
  { title: 'The workflow run (/workflows)', of: (b) => b.views?.includes('workflows') === true },
  { title: 'Views that scroll (/help, pages, the task board, /team)', of: (b) => b.views?.includes('help') === true },
  { title: 'Any view', of: (b) => b.layer === 'view' },
];

const NAMES: Record<string, string> = {
  enter: 'Enter',
  tab: 'Tab',
  escape: 'Esc',
  up: '↑',
  down: '↓',
  left: '←',
  right: '→',
  pageup: 'PgUp',
  pagedown: 'PgDn',
  home: 'Home',
  end: 'End',
  backspace: 'Backspace',
  delete: 'Delete',
  wheelup: 'wheel up',
  wheeldown: 'wheel down',
  [TEXT]: 'a character',
};

/** A key pattern as a person writes it: "ctrl+t" → "Ctrl+T", "shift+tab" → "Shift+Tab", "pageup" → "PgUp". */
export function keyLabel(pattern: string): string {
  const parts = pattern.split(/\+(?=.)/);
  const key = parts.pop()!;
  const modifiers = parts.map((m) => ({ ctrl: 'Ctrl', alt: 'Alt', meta: 'Alt', shift: 'Shift' })[m.toLowerCase()] ?? m);
  const name = NAMES[key.toLowerCase()] ?? (modifiers.length ? key.toUpperCase() : key);
  return [...modifiers, name].join('+');
}

function labelOf(binding: Binding): string[] {
  return binding.label ? [binding.label] : binding.keys.map(keyLabel);
}

/**
 * Bindings as rows, in the order they come: a binding whose line a row already has adds its keys to
 * that row; one whose keys a row already has adds its line to it, after "else" (within a layer the
 * first binding whose conditions hold takes the key).
 */
export function keyRows(bindings: readonly Binding[]): KeyRow[] {
  const rows: Array<{ labels: string[]; docs: string[] }> = [];
  for (const binding of bindings) {
    if (!binding.doc) continue;
    const labels = labelOf(binding);
    let row = rows.find((r) => r.docs.length === 1 && r.docs[0] === binding.doc) ?? rows.find((r) => r.labels.join() === labels.join());
    if (!row) rows.push((row = { labels: [], docs: [] }));
    for (const label of labels) if (!row.labels.includes(label)) row.labels.push(label);
    if (!row.docs.includes(binding.doc)) row.docs.push(binding.doc);
  }
  return rows.map(({ labels, docs }) => ({ keys: labels.join(' / '), doc: docs.join('; else ') }));
}

/** The keymap's bindings as sections of rows (a binding without a line is left out: every console binding has one). */
export function keySections(bindings: readonly Binding[]): KeySection[] {
  const claimed = new Set<Binding>();
  const sections: KeySection[] = [];
  for (const { title, of } of SECTIONS) {
    const mine = bindings.filter((binding) => !claimed.has(binding) && of(binding));
    for (const binding of mine) claimed.add(binding);
    const rows = keyRows(mine);
    if (rows.length) sections.push({ title, rows });
  }
  return sections;
}

/** A markdown table cell: pipes escaped, backslashes and backticks kept literal. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/`/g, '\\`');
}

/** docs/console.md's key tables: one per section. */
export function keysMarkdown(bindings: readonly Binding[]): string {
  return keySections(bindings)
    .map(({ title, rows }) => [`### ${title}`, '', '| key | does |', '|---|---|', ...rows.map((row) => `| ${cell(row.keys)} | ${cell(row.doc)} |`)].join('\n'))
    .join('\n\n');
}

/** The README's cheat-sheet: the bindings marked `cheat`, as rows. */
export function cheatSheetMarkdown(bindings: readonly Binding[]): string {
  const rows = keyRows(bindings.filter((binding) => binding.cheat));
  return ['| key | does |', '|---|---|', ...rows.map((row) => `| ${cell(row.keys)} | ${cell(row.doc)} |`)].join('\n');
}
