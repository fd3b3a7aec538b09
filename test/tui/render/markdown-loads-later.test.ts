// marked loads on demand: the console loads it after its first frame and before its session opens, so before any
// agent's text exists (docs/console.md#starting). Text rendered before that is plain and wrapped, never lost, and a
// cached line of a transcript is rendered again once marked is there.
import { beforeAll, describe, expect, it } from 'vitest';
import { isMarkdownLoaded, loadMarkdown, renderMarkdown } from '../../../src/tui/render/markdown.js';
import { itemLines } from '../../../src/tui/render/transcript-lines.js';
import type { TranscriptItem } from '../../../src/tui/render/transcript-items.js';

const TEXT = 'Some **bold** words and `code` here';
const trimmed = (lines: string[]) => lines.map((line) => line.trimEnd());

describe('markdown before marked is loaded', () => {
  beforeAll(() => expect(isMarkdownLoaded()).toBe(false));

  it('renders the text plain and wrapped, then as markdown once loadMarkdown resolves', async () => {
    const item: TranscriptItem = { kind: 'assistant', id: 1, text: TEXT, streaming: false };
    expect(trimmed(renderMarkdown(TEXT, 20, { color: true }))).toEqual(['Some **bold** words', 'and `code` here']);
    expect(trimmed(itemLines(item, 20, false))).toEqual(['Some **bold** words', 'and `code` here']);
    await loadMarkdown();
    expect(isMarkdownLoaded()).toBe(true);
    expect(renderMarkdown(TEXT, 20, { color: true }).join('\n')).toContain('\x1b[1mbold\x1b[22m');
    expect(itemLines(item, 20, false).join('\n')).toContain('\x1b[1mbold\x1b[22m');
  });
});
