import { stripVTControlCharacters as strip } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { classifyDiff, renderDiff } from '../../../src/tui/render/diff.js';

const before = 'line one\n-- a sql comment\nline three\nunchanged\n';
const after = 'line one\n++ changed\nline three\nunchanged\n日本語のテキストを追加 🎉\n';
const patch = createTwoFilesPatch('src/a.ts', 'src/a.ts', before, after);
const toolResult = `${patch}\nApplied 1 edit to src/a.ts.`;

describe('renderDiff', () => {
  it('colours added, removed, hunk and header lines', () => {
    const lines = renderDiff(toolResult, 80, { color: true });
    expect(lines).toContain('\x1b[32m+++ changed\x1b[39m');
    expect(lines).toContain('\x1b[31m--- a sql comment\x1b[39m'); // a removed line, not a header
    expect(lines.find((l) => strip(l).startsWith('@@'))).toMatch(/^\x1b\[36m@@ .* @@\x1b\[39m$/);
    expect(lines.find((l) => strip(l).startsWith('--- src/a.ts'))).toMatch(/^\x1b\[2m/);
    expect(lines.find((l) => strip(l).startsWith('+++ src/a.ts'))).toMatch(/^\x1b\[2m/);
    expect(lines).toContain(' line three'); // context stays plain
    expect(lines.at(-1)).toBe('Applied 1 edit to src/a.ts.'); // trailing text is not diff
  });

  it('classifies by hunk counts', () => {
    const kinds = classifyDiff(['--- a', '+++ b', '@@ -1,2 +1,2 @@', '--x', '++y', ' z', '--- after']);
    expect(kinds).toEqual(['header', 'header', 'hunk', 'del', 'add', 'plain', 'header']);
  });

  it('has the same layout without colour and respects NO_COLOR', () => {
    const plain = renderDiff(toolResult, 30, { color: false });
    expect(plain.join('\n')).not.toContain('\x1b');
    expect(renderDiff(toolResult, 30, { color: true }).map(strip)).toEqual(plain);
    process.env.NO_COLOR = '1';
    try {
      expect(renderDiff(toolResult, 30).join('')).not.toContain('\x1b');
    } finally {
      delete process.env.NO_COLOR;
    }
  });

  it('wraps long lines to the width and keeps each row coloured', () => {
    for (let w = 1; w <= 40; w++) {
      const lines = renderDiff(toolResult, w, { color: true });
      for (const l of lines) expect(stringWidth(l), `width ${w}: ${JSON.stringify(l)}`).toBeLessThanOrEqual(w);
    }
    const rows = renderDiff(`@@ -1 +1 @@\n+${'x'.repeat(25)}`, 12, { color: true });
    expect(rows.slice(1)).toHaveLength(3);
    for (const r of rows.slice(1)) expect(r.startsWith('\x1b[32m')).toBe(true);
  });
});
