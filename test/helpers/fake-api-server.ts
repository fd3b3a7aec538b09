/**
 * Standalone fake Anthropic API (Node 24, type stripping):
 *
 *   node test/helpers/fake-api-server.ts [script.json]
 *
 * script.json is either an array of Scripted responses (the shared queue) or
 * `{ "shared": Scripted[], "agents": { "<name>": Scripted[] } }`.
 * Prints one JSON line `{"url":"http://127.0.0.1:<port>"}` on stdout, then
 * serves until SIGTERM/SIGINT. Point the app at it with ANTHROPIC_BASE_URL=<url>.
 */
import { readFileSync } from 'node:fs';
import { startFakeApi } from './fake-api.ts';
import type { Scripted } from './fake-api.ts';

type ScriptFile = Scripted[] | { shared?: Scripted[]; agents?: Record<string, Scripted[]> };

function loadScript(path: string | undefined): ScriptFile {
  if (path === undefined || path === '') return [];
  return JSON.parse(readFileSync(path, 'utf8')) as ScriptFile;
}

async function main(): Promise<void> {
  const script = loadScript(process.argv[2]);
  const fake = await startFakeApi();
  if (Array.isArray(script)) {
    fake.enqueue(...script);
  } else {
    fake.enqueue(...(script.shared ?? []));
    for (const [name, responses] of Object.entries(script.agents ?? {})) fake.script(name, ...responses);
  }

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    fake.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  process.stdout.write(JSON.stringify({ url: fake.url }) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`fake-api-server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
