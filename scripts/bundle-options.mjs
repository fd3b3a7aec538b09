// The esbuild options of huddle's bundle, shared by `npm run build` and the tests that bundle the
// current source into a temp directory (dist/ belongs to the build).
import { build as esbuild } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinsWithoutFacade } from './builtins-without-facade.mjs';
import { stringWidthFastPath } from './string-width-fast-path.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// yoga-layout (Ink's layout engine) fetch()es its embedded wasm from a data: URL whenever fetch
// exists, which loads undici (~30 ms) before the first frame; its synchronous path needs neither.
const yogaWithoutFetch = {
  name: 'yoga-without-fetch',
  setup(build) {
    build.onLoad({ filter: /yoga-wasm-base64-esm\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const patched = source.replace('"function"!=typeof fetch', '"function"!=typeof undefined');
      if (patched === source) console.warn('yoga-without-fetch: pattern not found; the bundle still works, only slower to start');
      return { contents: patched, loader: 'js' };
    });
  },
};

// The chunks are ES modules, and say so next to them: with no package.json of type module above a
// copy of dist/ (the benchmarks run one from a temp directory), Node would read each chunk as
// CommonJS first, fail, and parse it again as a module.
const esmPackageMarker = {
  name: 'esm-package-marker',
  setup(build) {
    build.onEnd(async (result) => {
      const { outdir, write } = build.initialOptions;
      if (result.errors.length || write === false || !outdir) return;
      await writeFile(path.join(outdir, 'package.json'), '{ "type": "module" }\n');
    });
  },
};

// huddle's own tools' input schemas as JSON Schema (src/agents/tools/built-input-schemas.ts), converted
// here once instead of with zod at every start: a bundle of that module is run, and its answer becomes
// the JSON text __HUDDLE_TOOL_INPUT_SCHEMAS__ (read by src/runtime/tools/registry.ts).
export const toolInputSchemasAtBuild = {
  name: 'tool-input-schemas-at-build',
  async setup(build) {
    const bundled = await esbuild({
      entryPoints: [path.join(root, 'src/agents/tools/built-input-schemas.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      loader: TEXT_LOADERS,
      external: ['node-pty', 'react-devtools-core', 'pg-native'],
      // Run from a data: URL: a bundled CommonJS package's require resolves from the repository.
      banner: {
        js: `import { createRequire as __huddleCreateRequire } from 'node:module'; const require = __huddleCreateRequire(${JSON.stringify(path.join(root, 'package.json'))});`,
      },
      write: false,
      logLevel: 'warning',
    });
    const { builtInputSchemas } = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);
    // As a string: esbuild inlines it where it is read; an object this size would become a module of
    // its own that every entry imports (cli.js before the compile cache is on).
    build.initialOptions.define = { ...build.initialOptions.define, __HUDDLE_TOOL_INPUT_SCHEMAS__: JSON.stringify(JSON.stringify(builtInputSchemas())) };
  },
};

/** Files bundled as their text: the prompts in src/agents/prompts (no file is read at run time). */
export const TEXT_LOADERS = { '.md': 'text' };

/** Code splitting keeps `--version` and `--help` from loading the SDK or Ink. */
export function bundleOptions({ outdir, version, minify = true }) {
  return {
    plugins: [yogaWithoutFetch, stringWidthFastPath, builtinsWithoutFacade(root), esmPackageMarker, toolInputSchemasAtBuild],
    loader: TEXT_LOADERS,
    // The library (docs/library.md) shares the CLI's chunks: one copy of the session core.
    entryPoints: { cli: path.join(root, 'src/cli.ts'), library: path.join(root, 'src/library/index.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    minify,
    sourcemap: minify ? 'linked' : false,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"', __HUDDLE_VERSION__: JSON.stringify(version) },
    // Native addons and devtools stay out of the bundle (pg-native: pg's optional native driver, never loaded).
    external: ['node-pty', 'react-devtools-core', 'pg-native'],
    banner: {
      // Bundled CommonJS packages may use require, __filename and __dirname; ESM has none of them.
      js: [
        "import { createRequire as __huddleCreateRequire } from 'node:module';",
        "import { fileURLToPath as __huddleFileURLToPath } from 'node:url';",
        'const require = __huddleCreateRequire(import.meta.url);',
        'const __filename = __huddleFileURLToPath(import.meta.url);',
        "const __dirname = __huddleFileURLToPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
    logLevel: 'warning',
  };
}
