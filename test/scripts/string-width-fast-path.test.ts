// The bundle's patched string-width (scripts/string-width-fast-path.mjs) must measure every text as
// the published one does: each code point alone (both East Asian Width options), strings of
// characters that stand alone as graphemes, and strings mixing them with marks, joiners, emoji and
// Hangul jamo that take the published path.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_CLUSTERS, patchStringWidth } from '../../scripts/string-width-fast-path.mjs';

type StringWidth = (text: string, options?: { ambiguousIsNarrow?: boolean }) => number;

const require = createRequire(import.meta.url);
// Ink's string-width (8.x), the one the patch is written for.
const published = require.resolve('string-width', { paths: [path.dirname(require.resolve('ink'))] });
const dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-string-width-'));
let original: StringWidth;
let patched: StringWidth;

beforeAll(async () => {
  const source = readFileSync(published, 'utf8');
  const fast = patchStringWidth(source);
  expect(fast, 'the patch no longer matches string-width: update scripts/string-width-fast-path.mjs').toBeDefined();
  // Both copies import their dependencies by absolute path, from a directory of their own.
  const pinned = (text: string) =>
    text
      .replace("from 'strip-ansi'", `from ${JSON.stringify(pathToFileURL(require.resolve('strip-ansi', { paths: [path.dirname(published)] })).href)}`)
      .replace(
        "from 'get-east-asian-width'",
        `from ${JSON.stringify(pathToFileURL(require.resolve('get-east-asian-width', { paths: [path.dirname(published)] })).href)}`,
      );
  writeFileSync(path.join(dir, 'original.mjs'), pinned(source));
  writeFileSync(path.join(dir, 'patched.mjs'), pinned(fast!));
  original = ((await import(pathToFileURL(path.join(dir, 'original.mjs')).href)) as { default: StringWidth }).default;
  patched = ((await import(pathToFileURL(path.join(dir, 'patched.mjs')).href)) as { default: StringWidth }).default;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small deterministic generator: the same strings on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('the patched string-width', () => {
  it('measures every code point of the BMP (and a sample beyond it, which takes the published path) as the published one does', () => {
    const differences: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += codePoint < 0x10000 ? 1 : 97) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const text = String.fromCodePoint(codePoint);
      for (const options of [{}, { ambiguousIsNarrow: false }]) {
        if (patched(text, options) !== original(text, options)) differences.push(`U+${codePoint.toString(16)} ${JSON.stringify(options)}`);
      }
    }
    expect(differences.slice(0, 20)).toEqual([]);
  }, 300_000);

  it('takes its fast path only for characters that are each a grapheme of their own', () => {
    const own = new RegExp(OWN_CLUSTERS, 'u');
    const alone: string[] = [];
    for (let codePoint = 0; codePoint <= 0xffff; codePoint++) {
      const text = String.fromCodePoint(codePoint);
      if (own.test(text)) alone.push(text);
    }
    const segmenter = new Intl.Segmenter();
    const clusters = (text: string) => [...segmenter.segment(text)].length;
    // Every one next to the next, and in a shuffled order: never two in one cluster.
    expect(clusters(alone.join(''))).toBe(alone.length);
    const next = random(7);
    const shuffled = alone.slice();
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    expect(clusters(shuffled.join(''))).toBe(shuffled.length);
  }, 60_000);

  it('measures mixed strings as the published one does', () => {
    const next = random(11);
    const pieces = ['○', '✓', '⏺', '…', '한', '日本', 'e\u0301', '\u200d', '👍🏽', '🇫🇷', '⌚', '❤\ufe0f', '\u1100\u1161', '1\u20e3', '\x1b[31m', 'a', ' '];
    const differences: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = 1 + (n % 10);
      for (let i = 0; i < length; i++) text += next() < 0.5 ? pieces[Math.floor(next() * pieces.length)] : String.fromCodePoint(Math.floor(next() * 0x3000));
      if (patched(text) !== original(text)) differences.push(JSON.stringify(text));
    }
    expect(differences.slice(0, 20)).toEqual([]);
  }, 60_000);
});
