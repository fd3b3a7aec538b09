// The bundle's chunks find one another without Node's resolver (src/cli.ts): a headless run whose
// every import Node resolves passes through a hook registered before huddle's own (hooks run last
// registered first), which records what reaches it. The chunks' imports of their siblings never do;
// every other specifier (a builtin imported when it is first needed) still goes to Node; the run
// works as before.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
let dir: string;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-bundle-imports-');
  dir = mkdtempSync(path.join(os.tmpdir(), 'huddle-resolve-log-'));
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

// The hook is registered on Node 24 and later (src/cli.ts); an older Node resolves every import itself.
const hooked = Number(process.versions.node.split('.')[0]) >= 24;

it.skipIf(!hooked)("resolves the chunks' imports of one another itself, and leaves every other import to Node", async () => {
  const log = path.join(dir, 'resolved.ndjson');
  const preload = path.join(dir, 'record-resolves.mjs');
  writeFileSync(
    preload,
    [
      "import { registerHooks } from 'node:module';",
      "import { appendFileSync } from 'node:fs';",
      'registerHooks({ resolve(specifier, context, next) {',
      `  appendFileSync(${JSON.stringify(log)}, JSON.stringify({ specifier, parent: context.parentURL ?? null }) + '\\n');`,
      '  return next(specifier, context);',
      '} });',
    ].join('\n'),
  );
  fake.enqueue(replyText('hello from the bundle'));
  const result = await runCli(['-p', 'hi'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url, NODE_OPTIONS: `--import=${preload}` } });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain('hello from the bundle');

  const reached = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { specifier: string; parent: string | null });
  const bundle = new URL('.', `file://${path.resolve(CLI_PATH)}`).href;
  const fromBundle = reached.filter((entry) => entry.parent?.startsWith(bundle));
  const chunks = new Set(readdirSync(path.dirname(path.resolve(CLI_PATH))).filter((name) => name.endsWith('.js')));
  expect(fromBundle.filter((entry) => entry.specifier.startsWith('./'))).toEqual([]);
  // What goes to Node still gets there: the builtins the run imports when it first needs them.
  expect(fromBundle.some((entry) => entry.specifier.startsWith('node:'))).toBe(true);
  expect(chunks.size).toBeGreaterThan(20);
});
