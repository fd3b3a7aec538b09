// V8's compile cache covers every module of the bundle but the entry (docs/console.md#starting): src/cli.ts turns
// it on before anything else loads, so that the second start of an installed huddle reads the code the first
// compiled instead of compiling it again. Node's own report of the cache (NODE_DEBUG_NATIVE=COMPILE_CACHE) says,
// module by module, whether a cached copy was found and accepted. The cache lives where Node keeps it by default,
// under os.tmpdir() (TMPDIR here, so that the test starts from an empty one).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH } from '../../helpers/run-cli.js';

let tmp: string | undefined;
afterEach(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

/** The file names of a chunk of dist/ and of every chunk it imports statically, transitively. */
function staticClosure(dist: string, chunk: string): string[] {
  const seen = new Set<string>();
  const queue = [chunk];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(path.join(dist, file), 'utf8');
    for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*)["']\.\/([^"']+\.js)["']/g)) queue.push(match[1]!);
  }
  return [...seen];
}

/** `huddle --version` with the cache under `dir`; Node's cache report, from stderr. */
function start(dir: string): string {
  const env: Record<string, string | undefined> = { ...process.env, TMPDIR: dir, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  const run = spawnSync(process.execPath, [CLI_PATH, '--version'], { env, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stderr;
}

describe('the compile cache', () => {
  it("covers every module a start loads after the entry: the second start accepts each one's cached code", () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'huddle-compile-cache-'));
    start(tmp);
    expect(readdirSync(tmp)).toContain('node-compile-cache');
    const report = start(tmp);
    const accepted = new Set([...report.matchAll(/V8 code cache for ESM (file:\S+) was accepted/g)].map((match) => match[1]!));
    // The command line (src/cli-main.ts, loaded by the entry once the cache is on) and every chunk it imports.
    const dist = path.dirname(CLI_PATH);
    const commandLine = readdirSync(dist).find((file) => /^cli-main-[A-Z0-9]+\.js$/.test(file));
    expect(commandLine, 'dist/ has a chunk for src/cli-main.ts').toBeDefined();
    const chunks = staticClosure(dist, commandLine!);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.filter((file) => !accepted.has(pathToFileURL(path.join(dist, file)).href))).toEqual([]);
  });
});
