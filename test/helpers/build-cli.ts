// Bundles this tree's src/cli.ts into a temp directory with the options of `npm run build`
// (dist/ belongs to the build), for tests that run the CLI as built from the current source.
// Point HUDDLE_TEST_CLI at the result before importing run-cli.ts, or pass it to startConsole (`cli`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { bundleOptions } from '../../scripts/bundle-options.mjs';

export async function buildCliToTemp(): Promise<{ cli: string; cleanup(): void }> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'huddle-test-cli-'));
  await build({ ...bundleOptions({ outdir, version: '0.0.0-test', minify: false }), logLevel: 'error' });
  return { cli: path.join(outdir, 'cli.js'), cleanup: () => rmSync(outdir, { recursive: true, force: true }) };
}
