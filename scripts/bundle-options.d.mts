import type { BuildOptions, Loader } from 'esbuild';
export const TEXT_LOADERS: Record<string, Loader>;
export function bundleOptions(options: { outdir: string; version: string; minify?: boolean }): BuildOptions;
