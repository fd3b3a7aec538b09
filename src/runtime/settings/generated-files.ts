// The files generated from the settings schema, for scripts/docs.mjs and the test that
// keeps them fresh: each says how to rewrite the committed file from its current text.
import { settingsJsonSchemaText } from './json-schema.js';
import { REFERENCE_FILE, withSettingsReference } from './reference.js';

export interface GeneratedFile {
  /** Relative to the repository root. */
  file: string;
  update(current: string): string;
}

export function generatedFiles(): GeneratedFile[] {
  return [
    { file: 'settings.schema.json', update: () => settingsJsonSchemaText() },
    { file: REFERENCE_FILE, update: (current) => withSettingsReference(current) },
  ];
}
