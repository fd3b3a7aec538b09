// The highlighter (highlight.js with every grammar, ~10 MB) loads only when a coloured code block
// first asks for it; what the console waits on resolves then.
import { beforeAll, describe, expect, it } from 'vitest';
import { isHighlighterLoaded, loadMarkdown, preloadHighlighter, renderMarkdown } from '../../../src/tui/render/markdown.js';

beforeAll(() => loadMarkdown());

describe('the highlighter, on demand', () => {
  it('is not loaded for prose, and loads with the first code block', async () => {
    let ready = false;
    void preloadHighlighter().then((loaded) => (ready = loaded));
    renderMarkdown('Just **prose**, a list:\n\n- one\n- two', 40, { color: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isHighlighterLoaded()).toBe(false);
    expect(ready).toBe(false);
    // The first render of a block shows it plain and starts the load.
    expect(renderMarkdown('```js\nconst a = 1;\n```', 40, { color: true }).join('\n')).toContain('const a = 1;');
    expect(await preloadHighlighter()).toBe(true);
    expect(isHighlighterLoaded()).toBe(true);
    expect(renderMarkdown('```js\nconst a = 1;\n```', 40, { color: true }).join('\n')).toMatch(/\x1b\[3\dm/);
  });
});
