import { stripVTControlCharacters as strip } from 'node:util';
import { Lexer } from 'marked';
import stringWidth from 'string-width';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isHighlighterLoaded, loadHighlighter, loadMarkdown, preloadHighlighter, renderMarkdown } from '../../../src/tui/render/markdown.js';

// marked loads on demand (the console: after its first frame); markdown-loads-later.test.ts covers the time before.
beforeAll(() => loadMarkdown());

const plain = (md: string, width = 60): string[] => renderMarkdown(md, width, { color: false });
const widest = (lines: string[]): number => Math.max(0, ...lines.map((l) => stringWidth(l)));
const GUTTER = '\x1b[2m│\x1b[22m ';

// A realistic agent reply: prose, a list, a code block, a table and a quote (~1.5 KB).
const DOC = `## Plan for the **auth** refactor

I looked at \`src/auth/session.ts\` and the tests in [the suite](https://example.com/tests). The
session store is *mostly* fine, but token refresh races with logout — 日本語のコメント too 🎉.

1. Move refresh into \`SessionStore.refresh()\` so that there is one code path for it, with a lock.
2. Make logout cancel an in-flight refresh:
   - abort the pending fetch
   - clear the cached token
3. Add tests for both.

\`\`\`ts
export async function refresh(store: SessionStore, signal?: AbortSignal): Promise<Token> {
  const current = store.token; // may be stale
  if (current && current.expiresAt > Date.now() + 30_000) return current;
  const res = await fetch(store.url, { method: 'POST', signal });
  if (!res.ok) throw new Error(\`refresh failed: \${res.status}\`);
  return (store.token = (await res.json()) as Token);
}
\`\`\`

| File | Change | Risk |
|------|:------:|-----:|
| \`session.ts\` | refresh lock | low |
| \`logout.ts\` | cancel refresh in flight, and clear everything | medium |

> **Note:** the old \`refreshToken()\` helper stays exported for one release.

---

Done. Run \`npm test\` to check.
`;

describe('renderMarkdown layout', () => {
  it('renders headings, emphasis, code spans and links without markup', () => {
    expect(plain('# Title\n\nSome **bold**, *it*, `code` and [docs](https://x.dev).')).toEqual(['Title', '', 'Some bold, it, code and docs (https://x.dev).']);
    expect(plain('### Deep')).toEqual(['Deep']);
    // Headings stand out by style, not by their hashes: bold, the top level underlined too.
    expect(renderMarkdown('## Plan', 40, { color: true })).toEqual(['\x1b[1mPlan\x1b[22m']);
    expect(renderMarkdown('# Top', 40, { color: true })).toEqual(['\x1b[4m\x1b[1mTop\x1b[22m\x1b[24m']);
    expect(plain('see https://x.dev/a')).toEqual(['see https://x.dev/a']); // autolink: url once
  });

  it('wraps list items with hanging indents, including nested and ordered lists', () => {
    expect(plain('- one two three four five six\n- [x] done\n  1. nested item text', 16)).toEqual([
      '• one two three',
      '  four five six',
      '• [x] done',
      '      1. nested',
      '         item',
      '         text',
    ]);
    expect(plain('9. nine\n10. ten')).toEqual([' 9. nine', '10. ten']);
  });

  it('prefixes blockquotes with a thick bar, unlike the thin code gutter, and draws rules at full width', () => {
    expect(plain('> quoted text that wraps', 12)).toEqual(['▎ quoted', '▎ text that', '▎ wraps']);
    expect(plain('> quoted')[0]![0]).not.toBe(plain('```\ncode\n```')[0]![0]);
    expect(plain('---', 10)).toEqual(['──────────']);
  });

  it('aligns table columns and truncates them to the width', () => {
    const md = '| a | b |\n|---|--:|\n| long cell value | 1 |\n| x | 22 |';
    expect(plain(md)).toEqual(['a               │  b', '────────────────┼───', 'long cell value │  1', 'x               │ 22']);
    const narrow = plain(md, 12);
    expect(narrow[2]).toBe('long c… │  1');
    expect(widest(narrow)).toBeLessThanOrEqual(12);
  });

  it('renders code blocks behind a gutter and hard-wraps long lines', () => {
    expect(plain('```\nconst x = 1;\n  indented();\n```')).toEqual(['│ const x = 1;', '│   indented();']);
    const rows = plain('```\nabcdefghijklmnop\n```', 10);
    expect(rows).toEqual(['│ abcdefgh', '│ ijklmnop']);
  });

  it('drops escape sequences from model text', () => {
    expect(plain('hi \x1b[2J\x1b[31mthere\x1b[0m')).toEqual(['hi there']);
  });
});

describe('renderMarkdown colour', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('emits SGR styles when colour is on and none when off', () => {
    const [line] = renderMarkdown('a **bold** `code` *it*', 40, { color: true });
    expect(line).toContain('\x1b[1mbold\x1b[22m');
    expect(line).toContain('\x1b[33mcode\x1b[39m');
    expect(line).toContain('\x1b[3mit\x1b[23m');
    expect(renderMarkdown(DOC, 50, { color: false }).join('\n')).not.toContain('\x1b');
  });

  it('keeps the same layout with and without colour', () => {
    for (const w of [24, 50, 100]) {
      expect(renderMarkdown(DOC, w, { color: true }).map(strip)).toEqual(renderMarkdown(DOC, w, { color: false }));
    }
  });

  it('defaults to colour unless NO_COLOR is set', () => {
    vi.stubEnv('NO_COLOR', '1');
    expect(renderMarkdown('**b**', 20).join('')).toBe('b');
    vi.stubEnv('NO_COLOR', '');
    expect(renderMarkdown('**b**', 20).join('')).toContain('\x1b[1m');
  });
});

describe('renderMarkdown code highlighting', () => {
  beforeAll(async () => {
    expect(await loadHighlighter()).toBe(true);
    expect(await preloadHighlighter()).toBe(true);
  });

  it('highlights a fenced block by language', () => {
    expect(isHighlighterLoaded()).toBe(true);
    const lines = renderMarkdown('```ts\nconst x: number = 1; // hi\n```', 60, { color: true });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('\x1b[35mconst\x1b[39m');
    expect(lines[0]).toContain('\x1b[90m// hi\x1b[39m');
    expect(strip(lines[0] ?? '')).toBe('│ const x: number = 1; // hi');
  });

  it('falls back to plain code for an unknown language', () => {
    const lines = renderMarkdown('```nosuchlang\nconst x = 1;\n```', 60, { color: true });
    expect(lines).toEqual([`${GUTTER}const x = 1;`]);
  });

  it('keeps styles spanning lines (block comments) on every line', () => {
    const lines = renderMarkdown('```js\n/* one\n   two */\nx();\n```', 60, { color: true });
    expect(lines[0]).toBe(`${GUTTER}\x1b[90m/* one\x1b[39m`);
    expect(lines[1]).toBe(`${GUTTER}\x1b[90m   two */\x1b[39m`);
  });

  it('colours diff blocks as diffs', () => {
    const lines = renderMarkdown('```diff\n@@ -1 +1 @@\n-a\n+b\n```', 60, { color: true });
    expect(lines).toEqual([`${GUTTER}\x1b[36m@@ -1 +1 @@\x1b[39m`, `${GUTTER}\x1b[31m-a\x1b[39m`, `${GUTTER}\x1b[32m+b\x1b[39m`]);
  });
});

describe('renderMarkdown while streaming', () => {
  beforeAll(() => loadHighlighter());

  it('renders an unclosed fence as a code block, the line being typed plain', () => {
    const lines = renderMarkdown('Here:\n\n```ts\nconst a = 1;\nconst b', 40, { color: true });
    expect(lines.map(strip)).toEqual(['Here:', '', '│ const a = 1;', '│ const b']);
    expect(lines[2]).toContain('\x1b[35mconst\x1b[39m');
    expect(lines[3]).toBe(`${GUTTER}const b`);
  });

  it('shows a half-typed **bold plainly', () => {
    expect(plain('so **bol')).toEqual(['so **bol']);
    expect(plain('- ')).toEqual(['•']);
  });

  it('never throws or exceeds the width on any prefix of a document', () => {
    for (const width of [7, 33, 80]) {
      for (let n = 0; n <= DOC.length; n++) {
        const lines = renderMarkdown(DOC.slice(0, n), width, { color: true });
        const over = lines.find((l) => stringWidth(l) > width);
        expect(over, `prefix ${n} at width ${width}`).toBeUndefined();
      }
    }
  });

  it('stays within the width for CJK and emoji at every width', () => {
    const md = '# 日本語の見出し 🎉\n\n- 項目ひとつめの長いテキスト 👨‍👩‍👧\n\n| 列 | 値 |\n|---|---|\n| 日本語 | 🎉🎉🎉 |\n\n> 引用文です';
    for (let w = 1; w <= 30; w++) expect(widest(renderMarkdown(md, w, { color: true })), `width ${w}`).toBeLessThanOrEqual(w);
  });

  it('falls back to plain wrapped text when rendering fails', () => {
    const spy = vi.spyOn(Lexer.prototype, 'lex').mockImplementation(() => {
      throw new Error('boom');
    });
    try {
      expect(renderMarkdown('**a** b', 20, { color: true })).toEqual(['**a** b']);
    } finally {
      spy.mockRestore();
    }
  });
});
