import type { BuildOptions } from 'esbuild';
export function bundleOptions(options: { outdir: string; version: string; minify?: boolean }): BuildOptions;
