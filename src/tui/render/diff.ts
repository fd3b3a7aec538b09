// Colours a unified diff (the edit_file tool result, made by the `diff` package) for a pane.
// Hunk line counts decide where a hunk ends, so "--- x" inside a hunk is a removed line, not a
// header, and any text after the diff is shown plainly.
import { clampWidth, sanitize, wrapClean } from './wrap.js';

export interface DiffOptions {
  color?: boolean;
}

type Kind = 'add' | 'del' | 'hunk' | 'header' | 'meta' | 'plain';

const SGR: Record<Kind, [string, string]> = {
  add: ['\x1b[32m', '\x1b[39m'],
  del: ['\x1b[31m', '\x1b[39m'],
  hunk: ['\x1b[36m', '\x1b[39m'],
  header: ['\x1b[2m', '\x1b[22m'],
  meta: ['\x1b[2m', '\x1b[22m'],
  plain: ['', ''],
};

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const HEADER =
  /^(?:diff |index |Index: |={3,}|--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode|similarity index|rename from|rename to|Binary files)/;

export function defaultColor(): boolean {
  return !process.env.NO_COLOR;
}

/** Classify each line of a (possibly partial, possibly trailing-text) unified diff. */
export function classifyDiff(lines: readonly string[]): Kind[] {
  const kinds: Kind[] = [];
  let oldLeft = 0;
  let newLeft = 0;
  let open = false; // an "@@" hunk whose counts we could not parse ends at the first foreign line
  for (const line of lines) {
    const inHunk = open || oldLeft > 0 || newLeft > 0;
    const c = line[0];
    if (inHunk && c === '+') {
      newLeft--;
      kinds.push('add');
    } else if (inHunk && c === '-') {
      oldLeft--;
      kinds.push('del');
    } else if (inHunk && (c === ' ' || (line === '' && !open))) {
      oldLeft--;
      newLeft--;
      kinds.push('plain');
    } else if (c === '\\') {
      kinds.push('meta'); // "\ No newline at end of file"
    } else if (line.startsWith('@@')) {
      const m = HUNK.exec(line);
      open = !m;
      oldLeft = m ? Number(m[1] ?? 1) : 0;
      newLeft = m ? Number(m[2] ?? 1) : 0;
      kinds.push('hunk');
    } else {
      open = false;
      oldLeft = newLeft = 0;
      kinds.push(HEADER.test(line) ? 'header' : 'plain');
    }
  }
  return kinds;
}

/** Render a unified diff as coloured lines, each wrapped to at most `width` columns. */
export function renderDiff(unifiedDiff: string, width: number, opts: DiffOptions = {}): string[] {
  const color = opts.color ?? defaultColor();
  const w = clampWidth(width);
  const lines = sanitize(unifiedDiff, false).split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop(); // the diff's final newline is not a row
  const kinds = classifyDiff(lines);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const [open, close] = color ? SGR[kinds[i] ?? 'plain'] : SGR.plain;
    // Colour the whole source line before wrapping: wrap-ansi re-opens it on each row.
    const line = lines[i] ?? '';
    out.push(...wrapClean(open && line ? open + line + close : line, w));
  }
  return out;
}
