// Bundles src/cli.ts and the library (src/library/index.ts) into dist/ with esbuild (options in
// bundle-options.mjs), then writes the library's declarations into dist/types/ (build-types.mjs).
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { bundleOptions } from './bundle-options.mjs';
import { buildLibraryTypes } from './build-types.mjs';

const { version } = JSON.parse(await readFile('package.json', 'utf8'));
await rm('dist', { recursive: true, force: true });
await build(bundleOptions({ outdir: 'dist', version }));
buildLibraryTypes();
