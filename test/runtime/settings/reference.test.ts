// The committed JSON Schema and the settings reference in docs/configuration.md are generated from the
// schema; this fails when either is stale (fix: npm run docs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../../src/runtime/settings/generated-files.js';
import { settingsJsonSchema } from '../../../src/runtime/settings/json-schema.js';
import { REFERENCE_END, REFERENCE_FILE, REFERENCE_START } from '../../../src/runtime/settings/reference.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('generated settings docs', () => {
  for (const { file, update } of generatedFiles()) {
    it(`${file} is up to date (npm run docs rewrites it)`, () => {
      const current = readFileSync(path.join(root, file), 'utf8');
      expect(update(current) === current, `${file} is stale: run npm run docs`).toBe(true);
    });
  }

  it('the reference is in docs/configuration.md, lists every top-level key, and the schema rejects unknown keys', () => {
    expect(REFERENCE_FILE).toBe('docs/configuration.md');
    const page = readFileSync(path.join(root, REFERENCE_FILE), 'utf8');
    const reference = page.slice(page.indexOf(REFERENCE_START), page.indexOf(REFERENCE_END));
    expect(page.indexOf(REFERENCE_START)).toBeGreaterThan(-1);
    const schema = settingsJsonSchema();
    for (const key of Object.keys(schema.properties ?? {}).filter((k) => k !== '$schema')) expect(reference).toContain(`| \`${key}`);
    expect(schema.additionalProperties).toBe(false);
    expect(reference).toContain('`HUDDLE_IDLE_TIMEOUT_MS`');
    // The README links the reference rather than carrying it.
    expect(readFileSync(path.join(root, 'README.md'), 'utf8')).not.toContain(REFERENCE_START);
  });
});
