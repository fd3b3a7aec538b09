import { stripVTControlCharacters as strip } from 'node:util';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { sanitize, truncateLine, visibleWidth, wrapLines } from '../../../src/tui/render/wrap.js';

const maxWidth = (lines: string[]): number => Math.max(0, ...lines.map((l) => stringWidth(l)));

describe('wrapLines', () => {
  it('splits on newlines and word-wraps at the width', () => {
    expect(wrapLines('hello world foo bar\nbaz', 11)).toEqual(['hello world', 'foo bar', 'baz']);
    expect(wrapLines('', 10)).toEqual(['']);
    expect(wrapLines('a\n\nb', 10)).toEqual(['a', '', 'b']);
  });

  it('hard-breaks words longer than the width and keeps indentation', () => {
    expect(wrapLines('abcdefghijklmnopqrstuvwxyz', 10)).toEqual(['abcdefghij', 'klmnopqrst', 'uvwxyz']);
    expect(wrapLines('    indented', 20)).toEqual(['    indented']);
  });

  it('expands tabs to two spaces and resolves carriage returns', () => {
    expect(wrapLines('\tx\ty', 20)).toEqual(['  x  y']);
    expect(wrapLines('a\r\nb', 20)).toEqual(['a', 'b']);
    expect(wrapLines('progress 10%\rprogress 99%', 20)).toEqual(['progress 99%']);
  });

  it('keeps colours but drops cursor movement and other control sequences', () => {
    const [line] = wrapLines('\x1b[31mred\x1b[39m\x1b[2K\x1b[1A\x07 \x1b]0;title\x07ok', 20);
    expect(line).toBe('\x1b[31mred\x1b[39m ok');
    expect(sanitize('\x1b[1mb\x1b[22m', false)).toBe('b');
  });

  it('counts wide characters and emoji as two columns at every width', () => {
    const text = '日本語のテキストを折り返す 👨‍👩‍👧 family 🎉 ok ｆｕｌｌｗｉｄｔｈ mixed ascii';
    for (let w = 1; w <= 30; w++) {
      const lines = wrapLines(text, w);
      expect(maxWidth(lines), `width ${w}`).toBeLessThanOrEqual(w);
      if (w >= 2) expect(lines.join('').replaceAll(' ', '')).toBe(text.replaceAll(' ', ''));
    }
  });

  it('re-opens styles on every wrapped row so a row can be shown on its own', () => {
    const lines = wrapLines('\x1b[1mbold text that wraps\x1b[22m after', 8);
    expect(lines.map(strip)).toEqual(['bold ', 'text ', 'that ', 'wraps ', 'after']);
    for (const l of lines.slice(0, 4)) expect(l.startsWith('\x1b[1m')).toBe(true);
    expect(maxWidth(lines)).toBeLessThanOrEqual(8);
  });
});

describe('truncateLine', () => {
  it('returns lines that fit unchanged and cuts others with an ellipsis', () => {
    expect(truncateLine('short', 10)).toBe('short');
    expect(truncateLine('exactly10!', 10)).toBe('exactly10!');
    expect(truncateLine('this is too long', 10)).toBe('this is t…');
    expect(truncateLine('abc', 1)).toBe('…');
  });

  it('never exceeds the width with wide characters', () => {
    for (let w = 1; w <= 8; w++) {
      const t = truncateLine('日本語テキスト', w);
      expect(stringWidth(t)).toBeLessThanOrEqual(w);
      expect(t.endsWith('…')).toBe(true);
    }
  });

  it('closes styles it cuts through', () => {
    const t = truncateLine('\x1b[1mhello world\x1b[22m', 6);
    expect(strip(t)).toBe('hello…');
    expect(t).toContain('\x1b[22m');
    expect(visibleWidth(t)).toBe(6);
  });
});
