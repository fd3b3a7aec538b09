// Writes the settings' JSON Schema (settings.schema.json) and the README's settings reference from
// src/runtime/settings/schema.ts. test/settings/reference.test.ts fails when either is stale.
// `--check` writes nothing and exits 1 when something would change.
import { build } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundled = await build({
  entryPoints: [path.join(root, 'src/runtime/settings/generated-files.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'warning',
});
const { generatedFiles } = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);

const check = process.argv.includes('--check');
let stale = false;
for (const { file, update } of generatedFiles()) {
  const target = path.join(root, file);
  const current = await readFile(target, 'utf8').catch(() => '');
  const next = update(current);
  if (next === current) continue;
  stale = true;
  if (check) console.error(`${file} is stale; run npm run settings:docs`);
  else {
    await writeFile(target, next);
    console.log(`wrote ${file}`);
  }
}
if (check && stale) process.exit(1);
