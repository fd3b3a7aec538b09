// The test tree mirrors src so that a newcomer finds a module's tests by its path: the unit test of
// src/a/b/c.ts is test/a/b/c.test.ts (or a name that starts with `c`), a test of scripts/x.mjs is
// test/scripts/x*.test.ts, and tests of several modules together live in test/scenarios/. This
// fails on a file that breaks the mirror, so it stays one (CONTRIBUTING.md, section "Test").
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Folders of test/ that mirror nothing: end-to-end scenarios, shared helpers, checks of the docs. */
const FREE = ['scenarios', 'helpers', 'docs'];
/** Folders of support files (not tests) a mirrored folder may hold. */
const SUPPORT = new Set(['fixtures', 'contract', '__snapshots__']);

const ADVICE =
  "move a unit test next to its module's mirror (src/a/b/c.ts → test/a/b/c.test.ts), or a test of several modules together into test/scenarios/<area>/";

/** Where test/<first>/… mirrors: test/scripts mirrors scripts/, the rest mirrors src/. */
function mirrorOf(dirParts: string[]): string {
  return dirParts[0] === 'scripts' ? path.join(...dirParts) : path.join('src', ...dirParts);
}

function moduleNames(dir: string, exists: (p: string) => boolean, list: (p: string) => string[]): string[] {
  if (!exists(dir)) return [];
  return list(dir).map((name) => name.replace(/\.(ts|tsx|mjs|js|sh)$/, ''));
}

/**
 * The files under test/ (paths relative to test/) that have no module to mirror, each with what to do.
 * `exists` and `list` read the repository (injected so the rule can be tried on a made-up tree).
 */
function strays(testFiles: string[], exists: (p: string) => boolean, list: (p: string) => string[]): string[] {
  const found: string[] = [];
  for (const file of testFiles) {
    const parts = file.split('/');
    if (parts.length === 1 || FREE.includes(parts[0]!)) {
      if (parts.length === 1) found.push(`test/${file}: a test at the top of test/ mirrors no module; ${ADVICE}`);
      continue;
    }
    const dirParts = parts.slice(0, -1);
    const base = parts.at(-1)!;
    const isTest = /\.test\.tsx?$/.test(base);
    if (!isTest) {
      // A support file (a fixture, a contract suite) sits in a mirrored folder or its fixtures/contract folder.
      const owner = dirParts.filter((p, i) => !(SUPPORT.has(p) && i > 0));
      if (!exists(mirrorOf(owner))) found.push(`test/${file}: its folder mirrors no ${mirrorOf(owner)}/; ${ADVICE}`);
      continue;
    }
    const dir = mirrorOf(dirParts);
    const stem = base.slice(0, base.indexOf('.test.'));
    const modules = moduleNames(dir, exists, list);
    if (!modules.some((m) => m !== '' && stem.startsWith(m))) {
      found.push(`test/${file}: no module in ${dir}/ whose name starts "${stem}"; ${ADVICE}`);
    }
  }
  return found;
}

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(path.join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

const exists = (p: string) => existsSync(path.join(ROOT, p)) && statSync(path.join(ROOT, p)).isDirectory();
const list = (p: string) => readdirSync(path.join(ROOT, p));

it('every file under test/ outside scenarios, helpers and docs mirrors a module of src/ (or scripts/)', () => {
  expect(strays(walk(path.join(ROOT, 'test')), exists, list)).toEqual([]);
});

it('names the test that mirrors nothing, and the support file whose folder mirrors nothing', () => {
  const tree: Record<string, string[]> = {
    'src/tui': ['keys', 'run-console.ts'],
    'src/tui/keys': ['keymap.ts'],
    scripts: ['bench.mjs'],
  };
  const fake = (files: string[]) =>
    strays(
      files,
      (p) => p in tree,
      (p) => tree[p] ?? [],
    );
  expect(
    fake([
      'tui/keys/keymap.test.ts',
      'tui/keys/keymap-conditions.test.ts',
      'tui/run-console.pty.test.ts',
      'scripts/bench.test.ts',
      'tui/keys/fixtures/keys.txt',
      'scenarios/console/anything.pty.test.ts',
      'helpers/fake-api.test.ts',
    ]),
  ).toEqual([]);
  expect(fake(['tui/typing.test.ts', 'agents/fixtures/x.ts', 'console.test.ts']).map((s) => s.split(':')[0])).toEqual([
    'test/tui/typing.test.ts',
    'test/agents/fixtures/x.ts',
    'test/console.test.ts',
  ]);
});
