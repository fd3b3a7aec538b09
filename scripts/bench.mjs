// `npm run bench`: bundles bench/run.ts (and the child-process entries some benchmarks fork) with
// esbuild into a fresh directory under os.tmpdir(), then imports the bundle, which runs every
// benchmark, prints the table and writes bench/results.json. See bench/README.md.
import { build } from 'esbuild';
import { TEXT_LOADERS, toolInputSchemasAtBuild } from './bundle-options.mjs';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const requireFromRoot = createRequire(path.join(root, 'package.json'));
const outDir = mkdtempSync(path.join(os.tmpdir(), 'huddle-bench-'));

// The benchmarks run a private copy of the build `npm run build` just made (dist/ without source
// maps), so that another build in the same checkout (npm test rebuilds dist/) cannot swap or
// delete the CLI under a running benchmark. The built CLI imports nothing from node_modules
// unless devtools are on, so the copy runs anywhere.
if (!existsSync(path.join(root, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run npm run build first');
cpSync(path.join(root, 'dist'), path.join(outDir, 'dist'), { recursive: true, filter: (source) => !source.endsWith('.map') });

// Native or optional packages stay outside the bundle. The bundle lives in os.tmpdir(), where a
// bare `import 'node-pty'` would find no node_modules, so they are imported by absolute path.
const EXTERNAL = ['node-pty', '@xterm/headless', 'react-devtools-core', 'pg-native'];

/** @type {import('esbuild').Plugin} */
const externalsFromRepo = {
  name: 'externals-from-repo',
  setup(b) {
    const filter = new RegExp(`^(${EXTERNAL.map((name) => name.replace(/[/\\^$*+?.()|[\]{}]/g, '\\$&')).join('|')})(/.*)?$`);
    b.onResolve({ filter }, (args) => {
      try {
        return { path: requireFromRoot.resolve(args.path), external: true };
      } catch {
        // Not installed (react-devtools-core is optional): leave the bare name; it is never loaded.
        return { path: args.path, external: true };
      }
    });
  },
};

/**
 * Bundled code runs from os.tmpdir(), so `import.meta.url` / `import.meta.dirname` in the repo's
 * own sources are pinned to the source file they were written in — except that test/helpers sees
 * the snapshot directory as its repo root: pty-driver.ts (and run-cli.ts) find the CLI at
 * `../../dist/cli.js` from their own directory, which is then the copy above.
 */
/** @type {import('esbuild').Plugin} */
const pinImportMeta = {
  name: 'pin-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.(ts|tsx|mts)$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      let contents = readFileSync(args.path, 'utf8');
      if (contents.includes('import.meta')) {
        const helpers = path.join(root, 'test', 'helpers') + path.sep;
        const file = args.path.startsWith(helpers) ? path.join(outDir, path.relative(root, args.path)) : args.path;
        contents = contents
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(file)))
          .replaceAll('import.meta.filename', JSON.stringify(file))
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(file).href));
      }
      return { contents, loader: args.path.endsWith('x') ? 'tsx' : 'ts' };
    });
  },
};

const banner = [
  "import { createRequire as __benchCreateRequire } from 'node:module';",
  "import { fileURLToPath as __benchFileURLToPath } from 'node:url';",
  "import { dirname as __benchDirname } from 'node:path';",
  'const require = __benchCreateRequire(import.meta.url);',
  'const __filename = __benchFileURLToPath(import.meta.url);',
  'const __dirname = __benchDirname(__filename);',
].join(' ');

/** @param {string} entry @param {string} outfile @param {import('esbuild').Plugin[]} [extra] */
async function bundle(entry, outfile, extra = []) {
  await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(outDir, outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    sourcemap: 'inline',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [externalsFromRepo, pinImportMeta, ...extra],
    loader: TEXT_LOADERS,
    banner: { js: banner },
    logLevel: 'warning',
  });
}

// The runner, and the children it forks (they find each other through the runner's __dirname).
await Promise.all([
  // The runner's in-process teams offer huddle's tools with the JSON Schemas the CLI's build converted
  // (src/runtime/tools/registry.ts), as an installed huddle does, not converted by zod at run time.
  bundle('bench/run.ts', 'run.mjs', [toolInputSchemasAtBuild]),
  bundle('bench/children/bus-sender.ts', 'bus-sender.mjs'),
  bundle('bench/children/claimer.ts', 'claimer.mjs'),
  bundle('bench/children/pg-bus-sender.ts', 'pg-bus-sender.mjs'),
  bundle('bench/children/pg-claimer.ts', 'pg-claimer.mjs'),
  bundle('bench/children/team-cost-api.ts', 'team-cost-api.mjs'),
]);

process.env.HUDDLE_BENCH_ROOT = root;
process.env.HUDDLE_BENCH_CLI = path.join(outDir, 'dist', 'cli.js');
try {
  const { main } = await import(pathToFileURL(path.join(outDir, 'run.mjs')).href);
  process.exitCode = await main();
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
