// Renders an agent's markdown, possibly still streaming, into pre-wrapped terminal lines
// (each at most `width` columns). Uses marked's lexer only: its HTML renderer is no use here.
// The streaming message is re-rendered on every flush, so everything is one linear pass and
// highlighted code is memoized; cli-highlight (~110 ms to import) loads lazily, and marked itself
// (its rule tables build as it loads) once the console's first frame is drawn (loadMarkdown).
import type { MarkedToken, Token, Tokens } from 'marked';
import { renderDiff } from './diff.js';
import { clampWidth, padLine, sanitize, truncateLine, visibleWidth, wrapClean } from './wrap.js';

export interface MarkdownOptions {
  /** ANSI styling; defaults to on unless NO_COLOR is set. Layout is identical either way. */
  color?: boolean;
}

type Paint = (s: string) => string;
const same: Paint = (s) => s;

// SGR open/close applied per line (wrap-ansi does not carry styles across \n), re-opening after
// a nested close so that bold text containing dim text stays bold afterwards.
function sgr(open: number, close: number): Paint {
  const o = `\x1b[${open}m`;
  const c = `\x1b[${close}m`;
  return (s) => {
    if (s === '') return s;
    const body = s.includes(c) ? s.replaceAll(c, c + o) : s;
    return body.includes('\n')
      ? body
          .split('\n')
          .map((l) => l && o + l + c)
          .join('\n')
      : o + body + c;
  };
}
const both =
  (a: Paint, b: Paint): Paint =>
  (s) =>
    a(b(s));

interface Styles {
  color: boolean;
  bold: Paint;
  italic: Paint;
  strike: Paint;
  code: Paint;
  link: Paint;
  dim: Paint;
  mark: Paint;
  underline: Paint;
  quote: Paint;
}
const COLORED: Styles = {
  color: true,
  bold: sgr(1, 22),
  italic: sgr(3, 23),
  strike: sgr(9, 29),
  code: sgr(33, 39),
  link: both(sgr(34, 39), sgr(4, 24)),
  dim: sgr(2, 22),
  mark: sgr(35, 39),
  underline: sgr(4, 24),
  quote: sgr(35, 39),
};
const PLAIN: Styles = { color: false, bold: same, italic: same, strike: same, code: same, link: same, dim: same, mark: same, underline: same, quote: same };

// ---- syntax highlighting -------------------------------------------------------------------

interface HighlightApi {
  highlight(code: string, options: { language: string; ignoreIllegals: boolean; theme: Record<string, Paint> }): string;
  supportsLanguage(name: string): boolean;
}
let highlighter: HighlightApi | undefined;
let loading: Promise<boolean> | undefined;
let demanded!: (loaded: Promise<boolean>) => void;
const firstDemand = new Promise<Promise<boolean>>((resolve) => (demanded = resolve));

/**
 * Start loading cli-highlight (highlight.js with all grammars) now, and resolve `true` once code
 * blocks can be highlighted. Rendering never waits for it: until it resolves, code renders plain.
 */
export function loadHighlighter(): Promise<boolean> {
  if (!loading) {
    loading = import('cli-highlight').then(
      (mod: unknown) => {
        highlighter = pickApi(mod) ?? pickApi((mod as { default?: unknown }).default);
        return highlighter !== undefined;
      },
      () => false,
    );
    demanded(loading);
  }
  return loading;
}

/**
 * Resolves `true` once code blocks can be highlighted, loading the highlighter only when the first
 * coloured code block asks for it: a team that writes no code never pays for highlight.js's
 * grammars (~10 MB). The console calls this after its first frame and re-renders cached items once
 * it resolves.
 */
export function preloadHighlighter(): Promise<boolean> {
  return firstDemand.then((loaded) => loaded);
}

export function isHighlighterLoaded(): boolean {
  return highlighter !== undefined;
}

function pickApi(mod: unknown): HighlightApi | undefined {
  const m = mod as Partial<HighlightApi> | undefined;
  return typeof m?.highlight === 'function' && typeof m.supportsLanguage === 'function' ? (m as HighlightApi) : undefined;
}

const fg = (n: number): Paint => sgr(n, 39);
// Every key cli-highlight may look up is set, so it never falls back to its chalk theme (whose
// colour level follows stdout and whose styles span lines).
const THEME: Record<string, Paint> = {
  default: same,
  keyword: fg(35),
  built_in: fg(36),
  builtin: fg(36),
  'builtin-name': fg(36),
  type: fg(36),
  literal: fg(34),
  number: fg(33),
  regexp: fg(31),
  string: fg(32),
  subst: same,
  symbol: fg(33),
  class: fg(33),
  function: same,
  title: fg(34),
  params: same,
  comment: fg(90),
  doctag: fg(90),
  meta: fg(90),
  'meta-keyword': fg(90),
  'meta-string': fg(90),
  section: fg(34),
  tag: fg(90),
  name: fg(34),
  attr: fg(33),
  attribute: fg(33),
  variable: same,
  bullet: fg(33),
  code: same,
  emphasis: sgr(3, 23),
  strong: sgr(1, 22),
  formula: same,
  link: sgr(4, 24),
  quote: fg(90),
  selector: fg(33),
  'selector-tag': fg(33),
  'selector-id': fg(33),
  'selector-class': fg(33),
  'selector-attr': fg(33),
  'selector-pseudo': fg(33),
  template: fg(33),
  'template-tag': fg(33),
  'template-variable': fg(33),
  addition: fg(32),
  deletion: fg(31),
};

const CACHE_SIZE = 200;
const MAX_HIGHLIGHT = 64 * 1024; // bigger blocks would cost a frame or more; show them plain
const highlighted = new Map<string, string[] | null>(); // insertion order = LRU order

/** Highlighted lines of `code`, or undefined to render plain (not loaded, unknown, failed). */
function highlightLines(lang: string, code: string): string[] | undefined {
  if (!highlighter) {
    void loadHighlighter();
    return undefined;
  }
  if (code.length > MAX_HIGHLIGHT) return undefined;
  const key = `${lang}\0${code}`;
  const hit = highlighted.get(key);
  if (hit !== undefined) {
    highlighted.delete(key);
    highlighted.set(key, hit);
    return hit ?? undefined;
  }
  let lines: string[] | null = null;
  try {
    if (highlighter.supportsLanguage(lang)) {
      lines = highlighter.highlight(code, { language: lang, ignoreIllegals: true, theme: THEME }).split('\n');
      if (lines.length !== countLines(code)) lines = null; // never misalign code with its gutter
    }
  } catch {
    lines = null; // remembered, so a failing block is not retried every frame
  }
  highlighted.set(key, lines);
  if (highlighted.size > CACHE_SIZE) highlighted.delete(highlighted.keys().next().value as string);
  return lines ?? undefined;
}

function countLines(s: string): number {
  let n = 1;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

// ---- blocks ----------------------------------------------------------------------------------

const BULLETS = ['•', '◦', '▪'];
const CLOSING_FENCE = /\n {0,3}(?:`{3,}|~{3,})[ \t]*\n*$/;
let marked: { Lexer: typeof import('marked').Lexer; defaults: ReturnType<typeof import('marked').getDefaults> } | undefined;
let markedLoading: Promise<void> | undefined;

/**
 * Loads marked, which renderMarkdown needs to show markdown as such; until then text renders as
 * plain wrapped lines. The console loads it after its first frame and before the session opens,
 * so no agent's text exists before it (docs/console.md#starting).
 */
export function loadMarkdown(): Promise<void> {
  markedLoading ??= import('marked').then(({ Lexer, getDefaults }) => {
    marked = { Lexer, defaults: getDefaults() };
  });
  return markedLoading;
}

export function isMarkdownLoaded(): boolean {
  return marked !== undefined;
}

/** Render markdown to lines of at most `width` columns (plain wrapped text before loadMarkdown). Never throws. */
export function renderMarkdown(text: string, width: number, opts: MarkdownOptions = {}): string[] {
  const w = clampWidth(width);
  const clean = sanitize(text, false); // model text must not move the cursor or fake colours
  if (!marked) return wrapClean(clean, w);
  try {
    // Fresh options: Lexer mutates them, and marked.use() elsewhere must not change our output.
    const tokens = new marked.Lexer({ ...marked.defaults, gfm: true }).lex(clean);
    const st = (opts.color ?? !process.env.NO_COLOR) ? COLORED : PLAIN;
    return blocks(tokens, w, st, 0, true);
  } catch {
    return wrapClean(clean, w);
  }
}

function blocks(tokens: readonly Token[], width: number, st: Styles, depth: number, spaced: boolean): string[] {
  const out: string[] = [];
  for (const tok of tokens) {
    const lines = block(tok as MarkedToken, width, st, depth);
    if (lines.length === 0) continue;
    if (spaced && out.length > 0) out.push('');
    for (const line of lines) out.push(line);
  }
  return out;
}

function block(t: MarkedToken, width: number, st: Styles, depth: number): string[] {
  switch (t.type) {
    case 'space':
    case 'def':
    case 'checkbox':
      return [];
    case 'paragraph':
      return wrapClean(inline(t.tokens, st), width, true);
    case 'text':
      return wrapClean(t.tokens ? inline(t.tokens, st) : decode(t.text), width, true);
    case 'heading': {
      // Shown as a heading, not as its markup: bold (and underlined for the top level).
      const text = st.bold(inline(t.tokens, st));
      return wrapClean(t.depth === 1 ? st.underline(text) : t.depth >= 3 ? st.italic(text) : text, width, true);
    }
    case 'code':
      return code(t, width, st);
    case 'blockquote': {
      // A thick bar and italic text: a quote must not look like a code block (thin │ gutter).
      const bar = st.quote('▎') + ' ';
      return indent((w) => blocks(t.tokens, w, st, depth, true).map((line) => st.italic(line)), width, bar, bar, 2);
    }
    case 'list':
      return list(t, width, st, depth);
    case 'table':
      return table(t, width, st);
    case 'hr':
      return [st.dim('─'.repeat(width))];
    case 'html':
      return wrapClean(t.text.replace(/\n+$/, ''), width);
    default: {
      const g = t as Tokens.Generic;
      return wrapClean(g.tokens ? inline(g.tokens, st) : String(g.text ?? g.raw ?? ''), width, true);
    }
  }
}

/** Lay out `render(innerWidth)` behind a prefix (first line) and a hanging indent (the rest). */
function indent(render: (w: number) => string[], width: number, first: string, rest: string, prefixWidth: number): string[] {
  const inner = width - prefixWidth;
  const lines = render(Math.max(1, inner)).map((l, i) => (i === 0 ? first : rest) + l);
  return inner < 1 ? lines.map((l) => truncateLine(l, width)) : lines; // pane narrower than the prefix
}

function code(t: Tokens.Code, width: number, st: Styles): string[] {
  const lang = (t.lang ?? '').trim().split(/\s/, 1)[0]?.toLowerCase() ?? '';
  const gutter = st.dim('│') + ' ';
  return indent(
    (w) => {
      if (lang === 'diff' || lang === 'patch') return renderDiff(t.text, w, { color: st.color });
      let src: string[] | undefined;
      if (st.color && lang) {
        // While a fence is still open its last line is being typed: highlight only the complete
        // lines (memoized, so that happens once per new line) and show the partial line plain.
        const closed = t.codeBlockStyle === 'indented' || CLOSING_FENCE.test(t.raw);
        const cut = closed ? -1 : t.text.lastIndexOf('\n');
        if (closed) src = highlightLines(lang, t.text);
        else if (cut >= 0) src = highlightLines(lang, t.text.slice(0, cut))?.concat(t.text.slice(cut + 1));
      }
      const out: string[] = [];
      for (const line of src ?? t.text.split('\n')) for (const row of wrapClean(line, w)) out.push(row);
      return out;
    },
    width,
    gutter,
    gutter,
    2,
  );
}

function list(t: Tokens.List, width: number, st: Styles, depth: number): string[] {
  const start = typeof t.start === 'number' ? t.start : 1;
  const numWidth = String(start + t.items.length - 1).length;
  const out: string[] = [];
  t.items.forEach((item, i) => {
    if (t.loose && i > 0) out.push('');
    // Numbers are right-aligned to a common width, so items' text lines up; the hanging
    // indent is per item so a task box only indents its own item.
    const marker = t.ordered ? `${String(start + i).padStart(numWidth)}.` : (BULLETS[depth % BULLETS.length] ?? '-');
    const box = item.task ? (item.checked ? '[x] ' : '[ ] ') : '';
    const headWidth = visibleWidth(marker) + 1 + box.length;
    const first = `${st.mark(marker)} ${st.dim(box)}`;
    const lines = indent((w) => blocks(item.tokens, w, st, depth + 1, item.loose), width, first, ' '.repeat(headWidth), headWidth);
    if (lines.length === 0)
      out.push(truncateLine(first.trimEnd(), width)); // "- " typed, item text not yet
    else for (const line of lines) out.push(line);
  });
  return out;
}

function table(t: Tokens.Table, width: number, st: Styles): string[] {
  const n = t.header.length;
  if (n === 0) return [];
  const cell = (c: Tokens.TableCell | undefined): string => (c ? inline(c.tokens, st).replaceAll('\n', ' ') : '');
  const head = t.header.map(cell);
  const rows = t.rows.map((r) => Array.from({ length: n }, (_, i) => cell(r[i])));
  const natural = head.map((h, i) => rows.reduce((m, r) => Math.max(m, visibleWidth(r[i] ?? '')), Math.max(1, visibleWidth(h))));
  const widths = fitColumns(natural, width - 3 * (n - 1));
  const sep = st.dim(' │ ');
  const line = (cells: string[], paint: Paint): string =>
    truncateLine(
      cells
        .map((c, i) => paint(padLine(c, widths[i] ?? 1, t.align[i] ?? 'left')))
        .join(sep)
        .trimEnd(),
      width,
    );
  const rule = truncateLine(st.dim(widths.map((w) => '─'.repeat(w)).join('─┼─')), width);
  return [line(head, st.bold), rule, ...rows.map((r) => line(r, same))];
}

/** Shrink the widest columns first (a water level) until the row fits `avail` columns. */
function fitColumns(natural: number[], avail: number): number[] {
  const total = natural.reduce((a, b) => a + b, 0);
  if (total <= avail) return natural;
  let lo = 1;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (natural.reduce((a, w) => a + Math.min(w, mid), 0) <= avail) lo = mid;
    else hi = mid - 1;
  }
  let spare = avail - natural.reduce((a, w) => a + Math.min(w, lo), 0);
  return natural.map((w) => {
    if (w <= lo) return w;
    const extra = spare > 0 ? 1 : 0;
    spare -= extra;
    return lo + extra;
  });
}

// ---- inline ----------------------------------------------------------------------------------

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };
const decode = (s: string): string => (s.includes('&') ? s.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (m, e: string) => ENTITIES[e] ?? m) : s);

// Soft line breaks are kept as line breaks: agents break lines on purpose far more often than
// they hard-wrap prose, and a terminal cannot reflow what they meant as separate lines.
function inline(tokens: readonly Token[] | undefined, st: Styles): string {
  let s = '';
  for (const tok of tokens ?? []) {
    const t = tok as MarkedToken;
    switch (t.type) {
      case 'text':
        s += t.tokens ? inline(t.tokens, st) : decode(t.text);
        break;
      case 'escape':
        s += t.text;
        break;
      case 'strong':
        s += st.bold(inline(t.tokens, st));
        break;
      case 'em':
        s += st.italic(inline(t.tokens, st));
        break;
      case 'del':
        s += st.strike(inline(t.tokens, st));
        break;
      case 'codespan':
        s += st.code(t.text);
        break;
      case 'br':
        s += '\n';
        break;
      case 'link': {
        s += st.link(inline(t.tokens, st));
        if (t.href && t.href !== t.text && t.href !== `mailto:${t.text}`) s += ` ${st.dim(`(${t.href})`)}`;
        break;
      }
      case 'image':
        s += st.dim(`[image: ${t.text || 'image'}]`) + (t.href ? ` ${st.dim(`(${t.href})`)}` : '');
        break;
      case 'html':
        s += t.text;
        break;
      case 'checkbox':
        break; // shown by the list marker
      default: {
        const g = tok as Tokens.Generic;
        s += g.tokens ? inline(g.tokens, st) : String(g.text ?? g.raw ?? '');
      }
    }
  }
  return s;
}
