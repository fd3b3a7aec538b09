// The committed JSON Schema and the README's settings reference are generated from the schema; this
// fails when either is stale (fix: npm run settings:docs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../src/runtime/settings/generated-files.js';
import { settingsJsonSchema } from '../../src/runtime/settings/json-schema.js';
import { REFERENCE_END, REFERENCE_START } from '../../src/runtime/settings/reference.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('generated settings docs', () => {
  for (const { file, update } of generatedFiles()) {
    it(`${file} is up to date (npm run settings:docs rewrites it)`, () => {
      const current = readFileSync(path.join(root, file), 'utf8');
      expect(update(current) === current, `${file} is stale: run npm run settings:docs`).toBe(true);
    });
  }

  it('the README reference lists every top-level key, and the schema rejects unknown keys', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const reference = readme.slice(readme.indexOf(REFERENCE_START), readme.indexOf(REFERENCE_END));
    const schema = settingsJsonSchema();
    for (const key of Object.keys(schema.properties ?? {}).filter((k) => k !== '$schema')) expect(reference).toContain(`| \`${key}`);
    expect(schema.additionalProperties).toBe(false);
    expect(reference).toContain('`HUDDLE_IDLE_TIMEOUT_MS`');
  });
});
