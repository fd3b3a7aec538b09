// Writes what the docs generate from the code: the settings' JSON Schema (settings.schema.json) and
// the settings reference in docs/configuration.md, from src/runtime/settings/schema.ts; the console's
// keys and slash commands in docs/console.md and the README's key cheat-sheet, from the keymap and
// the commands (src/tui/generated-docs.ts); the library's API reference in docs/library.md, from its
// declarations (library-docs.mjs). test/runtime/settings/reference.test.ts and
// test/tui/generated-docs.test.ts fail when a file is stale. `--check` writes nothing and exits 1
// when something would change.
import { build } from 'esbuild';
import { TEXT_LOADERS } from './bundle-options.mjs';
import { LIBRARY_DOC, updateLibraryDoc } from './library-docs.mjs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundled = await build({
  stdin: {
    contents: [
      "export { generatedFiles as settingsFiles } from './src/runtime/settings/generated-files.ts';",
      "export { consoleGeneratedFiles as consoleFiles } from './src/tui/generated-docs.ts';",
    ].join('\n'),
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  loader: TEXT_LOADERS,
  write: false,
  logLevel: 'warning',
});
const { settingsFiles, consoleFiles } = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);

const check = process.argv.includes('--check');
let stale = false;
for (const { file, update } of [...settingsFiles(), ...consoleFiles(), { file: LIBRARY_DOC, update: updateLibraryDoc }]) {
  const target = path.join(root, file);
  const current = await readFile(target, 'utf8').catch(() => '');
  const next = update(current);
  if (next === current) continue;
  stale = true;
  if (check) console.error(`${file} is stale; run npm run docs`);
  else {
    await writeFile(target, next);
    console.log(`wrote ${file}`);
  }
}
if (check && stale) process.exit(1);
