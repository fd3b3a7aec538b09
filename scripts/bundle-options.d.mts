import type { BuildOptions, Loader, Plugin } from 'esbuild';
export const TEXT_LOADERS: Record<string, Loader>;
/** Converts huddle's own tools' input schemas to JSON Schema at build time (__HUDDLE_TOOL_INPUT_SCHEMAS__). */
export const toolInputSchemasAtBuild: Plugin;
export function bundleOptions(options: { outdir: string; version: string; minify?: boolean }): BuildOptions;
