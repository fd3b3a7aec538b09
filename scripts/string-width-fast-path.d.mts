import type { Plugin } from 'esbuild';
export const OWN_CLUSTERS: string;
export function patchStringWidth(source: string): string | undefined;
export const stringWidthFastPath: Plugin;
