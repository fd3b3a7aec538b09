// Bundles src/cli.ts into dist/ with esbuild. Code splitting keeps `--version` and `--help`
// from loading the SDK or Ink: the entry chunk is tiny and the rest is imported on demand.
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';

const { version } = JSON.parse(await readFile('package.json', 'utf8'));

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"', __HUDDLE_VERSION__: JSON.stringify(version) },
  // Native addons and devtools stay out of the bundle.
  external: ['node-pty', 'react-devtools-core'],
  banner: {
    // Some bundled CommonJS packages call require(); give them one.
    js: "import { createRequire as __huddleCreateRequire } from 'node:module'; const require = __huddleCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
