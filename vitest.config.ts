import { readFile } from 'node:fs/promises';
import { defineConfig, type Plugin } from 'vitest/config';

/** Markdown imported by the code is its text, as esbuild's text loader bundles it (scripts/bundle-options.mjs). */
const markdownAsText: Plugin = {
  name: 'markdown-as-text',
  enforce: 'pre',
  async load(id) {
    if (!id.endsWith('.md')) return null;
    return `export default ${JSON.stringify(await readFile(id, 'utf8'))};`;
  },
};

export default defineConfig({
  plugins: [markdownAsText],
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Tests spawn real processes and servers; the machine has two cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Trust records and user settings in a throwaway config directory, never the real ~/.config.
    setupFiles: ['test/helpers/isolated-config.ts'],
  },
});
