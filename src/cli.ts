#!/usr/bin/env node
// huddle's entry point, kept to what must come before any other code: the Node version check and
// V8's compile cache. Every other module, the command line's own included (src/cli-main.ts), is
// loaded after the cache is on, so that each start reuses the code the last one compiled
// (docs/console.md#starting); a module imported statically here would be compiled anew every time.
import module from 'node:module';

// huddle needs Node 22.12+ (Ink 8, execa 10 and their dependencies), and on an older Node it would
// fail deep inside one of them with a page of minified source.
const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split('.').map(Number);
if (nodeMajor < 22 || (nodeMajor === 22 && nodeMinor < 12)) {
  process.stderr.write(
    `huddle needs Node.js 22.12 or newer, and this is Node ${process.versions.node}: install a newer Node (nodejs.org, or \`nvm install 24\`) and run huddle again.\n`,
  );
  process.exit(2);
}

// Node's default place: $NODE_COMPILE_CACHE, else <os.tmpdir()>/node-compile-cache, one entry per file
// path and content (a global install reuses its entries from the second start on).
module.enableCompileCache?.();

// The bundle's chunks import one another as './<name>.js', ~200 imports before a headless run's first
// request. Each is resolved here to the file of that name beside this one, without Node's resolver
// (a URL parse, a stat and a realpath each: ~20 ms of CPU at every start). Only those: any other
// specifier, or one from a module elsewhere, goes to Node as before. Not when run from source.
declare const __HUDDLE_VERSION__: string | undefined;
if (typeof __HUDDLE_VERSION__ === 'string' && nodeMajor >= 24 && typeof module.registerHooks === 'function') {
  const bundleDir = new URL('.', import.meta.url).href;
  const inBundle = (url: string | undefined) => url?.startsWith(bundleDir) && !url.includes('/', bundleDir.length);
  module.registerHooks({
    resolve: (specifier, context, nextResolve) =>
      specifier.startsWith('./') && specifier.endsWith('.js') && !specifier.includes('/', 2) && inBundle(context.parentURL)
        ? { url: bundleDir + specifier.slice(2), shortCircuit: true }
        : nextResolve(specifier, context),
  });
}

const { runCli } = await import('./cli-main.js');
await runCli();
