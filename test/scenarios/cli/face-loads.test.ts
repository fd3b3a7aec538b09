// Each face loads only what it needs (docs/architecture.md#import-rules): the bundle is split into chunks
// (scripts/bundle-options.mjs), and what a face loads at start is the closure of static imports from its
// entry chunk. A headless run loads no Ink or React, nor execa or tinyglobby before it uses them; the console loads no node-postgres, no MCP SDK, no Agent
// SDK face, no external agents (their drivers, terminals: node-pty, @xterm/headless), and neither face the Messages SDK
// before its first model call. A static import across one of these seams fails here.
import { build, type Metafile } from 'esbuild';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleOptions } from '../../../scripts/bundle-options.mjs';

let outputs: Metafile['outputs'];
let inputsOf: Metafile['inputs'];

beforeAll(async () => {
  const result = await build({
    ...bundleOptions({ outdir: path.join(process.cwd(), '.face-loads'), version: '0.0.0-test' }),
    write: false,
    metafile: true,
    sourcemap: false,
    logLevel: 'silent',
  });
  outputs = result.metafile.outputs;
  inputsOf = result.metafile.inputs;
}, 60_000);

function chunkOf(source: string): string {
  const found = Object.keys(outputs).find((output) => outputs[output]!.entryPoint === source);
  if (!found) throw new Error(`no chunk has ${source} as its entry`);
  return found;
}

/**
 * The source files and packages a face loads before its first dynamic import: the static closure of its entry
 * chunks (src/cli.ts, then the command line's src/cli-main.ts, then the face's own entries).
 */
function loadedAtStart(...entries: string[]): string[] {
  const seen = new Set<string>();
  const queue = [chunkOf('src/cli.ts'), chunkOf('src/cli-main.ts'), ...entries.map(chunkOf)];
  while (queue.length) {
    const chunk = queue.pop()!;
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    for (const imported of outputs[chunk]!.imports) if (imported.kind === 'import-statement' && !imported.external) queue.push(imported.path);
  }
  const inputs = new Set<string>();
  for (const chunk of seen) for (const input of Object.keys(outputs[chunk]!.inputs)) inputs.add(input);
  // External packages (node-pty) are imported by path from the chunk itself.
  for (const chunk of seen)
    for (const imported of outputs[chunk]!.imports) if (imported.external && imported.kind === 'import-statement') inputs.add(`external:${imported.path}`);
  return [...inputs];
}

const packageOf = (input: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? (input.startsWith('external:') ? input.slice(9) : undefined);
const loads = (inputs: string[], what: string) => inputs.filter((input) => packageOf(input) === what || input === what || input.startsWith(`${what}/`));

describe('what a face loads at start', () => {
  it('cli.js imports nothing before the compile cache is on: every other module is loaded after it', () => {
    const cli = outputs[chunkOf('src/cli.ts')]!;
    expect(cli.imports.filter((imported) => imported.kind === 'import-statement' && !imported.external)).toEqual([]);
    expect(Object.keys(cli.inputs)).toEqual(['src/cli.ts']);
  });

  it('headless (huddle -p) loads no Ink, React, node-postgres, MCP SDK or external terminals', () => {
    const inputs = loadedAtStart('src/headless.ts');
    expect(loads(inputs, 'src/headless.ts')).not.toEqual([]);
    for (const what of [
      'ink',
      'react',
      'react-reconciler',
      'yoga-layout',
      'src/tui',
      'pg',
      'src/runtime/store/postgres',
      '@modelcontextprotocol/sdk',
      'src/runtime/mcp/mcp-servers.ts',
      'node-pty',
      '@xterm/headless',
      'src/agents/external/external-teammate.ts',
    ])
      expect(loads(inputs, what), what).toEqual([]);
  });

  it("headless loads neither execa nor the glob tools' crawler before its first git call or search", () => {
    // execa is imported by huddle's first git call (runtime/git/host-git.ts); tinyglobby (whose crawler
    // loads picomatch from disk when evaluated) by the first glob or grep.
    const inputs = loadedAtStart('src/headless.ts');
    for (const what of ['execa', 'tinyglobby', 'fdir', 'picomatch']) expect(loads(inputs, what), what).toEqual([]);
  });

  it('headless evaluates no yaml at start: front matter is parsed through a require() evaluated on first use', () => {
    // yaml is CommonJS: bundled into a chunk, it is evaluated only where a module `import`s it; a require()
    // (src/runtime/settings/lazy-yaml.ts) calls its wrapper when a file with front matter is read.
    const eager = loadedAtStart('src/headless.ts').filter((input) =>
      (inputsOf[input]?.imports ?? []).some((imported) => packageOf(imported.path) === 'yaml' && imported.kind !== 'require-call'),
    );
    expect(eager).toEqual([]);
    expect(inputsOf['src/runtime/settings/lazy-yaml.ts']!.imports.filter((imported) => packageOf(imported.path) === 'yaml')).toEqual([
      expect.objectContaining({ kind: 'require-call' }),
    ]);
  });

  it('the console loads no node-postgres, MCP SDK, Agent SDK face, headless face or external terminals', () => {
    // What it loads to draw the first frame, then the session core it opens behind it.
    const inputs = [...loadedAtStart('src/tui/run-console.ts'), ...loadedAtStart('src/tui/console-session.ts')];
    expect(loads(inputs, 'src/tui/console-session.ts')).not.toEqual([]);
    for (const what of [
      'pg',
      'src/runtime/store/postgres',
      '@modelcontextprotocol/sdk',
      'src/runtime/mcp/mcp-servers.ts',
      'src/faces/sdk-stdio.ts',
      'src/headless.ts',
      'src/session/stream-json.ts',
      'node-pty',
      '@xterm/headless',
      'src/agents/external/external-teammate.ts',
      'src/agents/external/model-relay.ts',
    ]) {
      expect(loads(inputs, what), what).toEqual([]);
    }
  });

  it("the console's first frame waits for no session core: settings, stores, agents, zod, yaml or execa load after it", () => {
    // What the first frame loads: run-console.ts, then Ink and the App it renders (docs/console.md#starting).
    const inputs = loadedAtStart('src/tui/run-console.ts', 'src/tui/components/App.tsx');
    expect(loads(inputs, 'src/tui/run-console.ts')).not.toEqual([]);
    expect(loads(inputs, 'ink')).not.toEqual([]);
    for (const what of [
      'src/session/settings.ts',
      'src/session/open-session.ts',
      'src/session/team-session.ts',
      'src/agents',
      'src/runtime/settings',
      'src/runtime/store/file',
      'src/runtime/store/board',
      'src/runtime/record/best-of-record.ts',
      'src/runtime/sandbox/network-rules.ts',
      'zod',
      'yaml',
      'execa',
      'minimatch',
      'marked',
    ])
      expect(loads(inputs, what), what).toEqual([]);
  });

  it('neither face loads the Messages SDK before its first model call', () => {
    for (const entry of ['src/headless.ts', 'src/tui/run-console.ts', 'src/tui/console-session.ts'])
      expect(loads(loadedAtStart(entry), '@anthropic-ai/sdk'), entry).toEqual([]);
  });

  it("a model call loads the SDK's MessageStream, never its client (whose requests load undici)", () => {
    const first = Object.keys(outputs).find((output) => 'src/runtime/model/messages-request.ts' in outputs[output]!.inputs);
    expect(first).toBeDefined();
    const seen = new Set<string>();
    const queue = [first!];
    while (queue.length) {
      const chunk = queue.pop()!;
      if (seen.has(chunk)) continue;
      seen.add(chunk);
      for (const imported of outputs[chunk]!.imports) if (!imported.external) queue.push(imported.path);
    }
    const sdk = [...seen].flatMap((chunk) => Object.keys(outputs[chunk]!.inputs)).filter((input) => packageOf(input) === '@anthropic-ai/sdk');
    expect(sdk.filter((input) => input.endsWith('/@anthropic-ai/sdk/lib/MessageStream.mjs'))).toHaveLength(1);
    expect(sdk.filter((input) => /\/sdk\/(client|index)\.mjs$/.test(input))).toEqual([]);
  });
});
