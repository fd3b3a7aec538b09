// A build-time rewrite of huddle's own imports of Node's builtins. `import { parseArgs } from
// 'node:util'` makes Node build an ES module facade of node:util, which reads every export once,
// so each lazy getter runs: node:util loads its text encoding and diff modules, node:fs its streams,
// node:child_process more; several milliseconds of every start for exports huddle never uses.
// Rewritten, the same import reads only the names it lists, from the module object itself:
//   import { parseArgs } from 'node:util';  →  const { parseArgs } = globalThis.process.getBuiltinModule('node:util');
//   import fs from 'node:fs';               →  const fs = globalThis.process.getBuiltinModule('node:fs');
// The bindings are the same objects (a builtin's exports never change), type-only imports are left
// to TypeScript, and src/cli.ts is not rewritten (it runs before anything else, on any Node).
// test/scripts/builtins-without-facade.test.ts checks the rewrite.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const IMPORT = /^import\s+(?!type\s)([^;'"]*?)\s+from\s+'(node:[a-z_/]+)';/gm;

/** One named-import clause (`a, b as c, type T`) as a destructuring pattern (`a, b: c`), types and comments dropped. */
function pattern(named) {
  return named
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part && !part.startsWith('type '))
    .map((part) => part.replace(/^(\S+)\s+as\s+(\S+)$/, '$1: $2'))
    .join(', ');
}

/** The source with each value import of a `node:` builtin turned into a read of `process.getBuiltinModule`. */
export function builtinImportsAsLookups(source) {
  return source.replace(IMPORT, (whole, clause, id) => {
    // globalThis.process: an import may itself bind the name `process` (node:process).
    const read = lookupOf(clause.trim(), `globalThis.process.getBuiltinModule('${id}')`);
    // As many lines as the import had, so that the source map's lines below it stay right.
    return read === undefined ? whole : read + '\n'.repeat(whole.split('\n').length - 1);
  });
}

/** The statement binding an import clause's names to the builtin `module`; undefined for a form not known here. */
function lookupOf(clause, module) {
  const named = /^(?:([A-Za-z_$][\w$]*)\s*,\s*)?\{([^}]*)\}$/.exec(clause);
  if (named) {
    const [, defaultName, list] = named;
    // `{ default as x }` names the ES module's default, which the module object has not: left as an import.
    if (/(^|[\s,])default\s+as\s/.test(list)) return undefined;
    const names = pattern(list);
    if (defaultName) return `const ${defaultName} = ${module};${names ? ` const { ${names} } = ${defaultName};` : ''}`;
    return names ? `const { ${names} } = ${module};` : '';
  }
  const single = /^(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)$/.exec(clause);
  return single ? `const ${single[1]} = ${module};` : undefined;
}

export function builtinsWithoutFacade(root) {
  const src = path.join(root, 'src') + path.sep;
  const entry = path.join(root, 'src', 'cli.ts');
  return {
    name: 'builtins-without-facade',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
        if (!args.path.startsWith(src) || args.path === entry) return undefined;
        const source = await readFile(args.path, 'utf8');
        return { contents: builtinImportsAsLookups(source), loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts' };
      });
    },
  };
}
