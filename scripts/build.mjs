// Bundles src/cli.ts into dist/ with esbuild (options in bundle-options.mjs).
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { bundleOptions } from './bundle-options.mjs';

const { version } = JSON.parse(await readFile('package.json', 'utf8'));
await rm('dist', { recursive: true, force: true });
await build(bundleOptions({ outdir: 'dist', version }));
