// The README is the front page a newcomer reads whole: what huddle is, setting up, a first run, the
// keys to know, and links. Topics live in docs/; this keeps it from growing back into a manual.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('README.md', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

  it('stays at most 12 KB', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
  });

  it('links every page under docs/', () => {
    const pages = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(10);
    for (const page of pages) expect(readme, page).toContain(`](docs/${page})`);
  });
});
