// The library's declarations (docs/library.md): tsc emits them for src/library/index.ts and
// everything it imports, into a temp directory; only the files the entry's declarations reach
// (following their imports) are copied into dist/types/, so the package ships the public types and
// what they name, not the whole source tree. An import of a package that a user's install would not
// have (a dev dependency) fails the build: the published types must check in a strict project.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = 'library/index.d.ts';

/** Emits every declaration, then keeps what the entry reaches in `outDir`; returns the files kept (relative to outDir). */
export function buildLibraryTypes(outDir = path.join(root, 'dist', 'types')) {
  const temp = mkdtempSync(path.join(os.tmpdir(), 'huddle-types-'));
  try {
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    const run = spawnSync(tsc, ['-p', path.join(root, 'tsconfig.library.json'), '--outDir', temp], { cwd: root, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`tsc could not emit the library's declarations:\n${run.stdout}${run.stderr}`);
    const { dependencies = {}, optionalDependencies = {} } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    const shipped = new Set([...Object.keys(dependencies), ...Object.keys(optionalDependencies)]);
    const kept = reachable(temp, ENTRY, (specifier, from) => {
      if (specifier.startsWith('node:')) return;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      if (!shipped.has(name))
        throw new Error(`${from} imports '${specifier}', which is not a dependency of the package: keep it out of the library's public types`);
    });
    rmSync(outDir, { recursive: true, force: true });
    for (const file of kept) {
      mkdirSync(path.dirname(path.join(outDir, file)), { recursive: true });
      copyFileSync(path.join(temp, file), path.join(outDir, file));
    }
    return kept;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** The declaration files reachable from `entry` through relative imports; `external` hears each other import. */
function reachable(dir, entry, external) {
  const seen = new Set();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)) {
      const specifier = match[1];
      if (!specifier.startsWith('.')) {
        external(specifier, file);
        continue;
      }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier.replace(/\.js$/, '.d.ts')));
      if (!existsSync(path.join(dir, target))) throw new Error(`${file} imports '${specifier}', which has no declaration file`);
      queue.push(target);
    }
  }
  return [...seen].sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kept = buildLibraryTypes();
  console.log(`dist/types: ${kept.length} declaration files from src/library/index.ts`);
}
