import type { Plugin } from 'esbuild';
export function builtinImportsAsLookups(source: string): string;
export function builtinsWithoutFacade(root: string): Plugin;
