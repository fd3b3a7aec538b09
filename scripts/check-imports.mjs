// Fails (exit 1) when src/ breaks one of huddle's import rules (docs/architecture.md#import-rules): an import
// cycle; a floor importing one above it (runtime < agents < session < faces) or a face reaching into the agents
// instead of through the session; runtime/tools importing runtime/permissions; or a room of src/agents,
// src/runtime or src/tui importing a room above it in that folder's inner order (INNER_ORDERS).
//
// The import graph comes from esbuild's metafile: esbuild is already how huddle is bundled, so it
// resolves every specifier exactly as the build does (`.js` → `.ts`, index files, packages).
// madge was the alternative; it parses TypeScript through the `typescript` package's JS API, which
// TypeScript 7 (this repo's compiler) no longer ships. esbuild drops type-only imports before it
// resolves anything, so each file is fed to it with one extra side-effect import per `import`/
// `export … from` statement: a type-only import is a dependency of the design too (a cycle
// through `import type` is still two modules that cannot be understood apart).
//
//   node scripts/check-imports.mjs          (part of `npm test` and `npm run typecheck`)
import { build } from 'esbuild';
import { TEXT_LOADERS } from './bundle-options.mjs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { glob } from 'node:fs/promises';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const isFace = (file) =>
  file === 'src/cli.ts' || file === 'src/cli-main.ts' || file === 'src/headless.ts' || file.startsWith('src/faces/') || file.startsWith('src/tui/');

/**
 * The floors (docs/architecture.md#import-rules): [who, what it must not import, why]. Each floor imports only the
 * floors below it, and a face reaches the team through the session core, never into the agents.
 */
export const FLOOR_RULES = [
  [(from) => from.startsWith('src/runtime/'), (to) => to.startsWith('src/tui/'), 'src/runtime imports no console (src/tui)'],
  [(from) => from.startsWith('src/runtime/'), (to) => to.startsWith('src/agents/'), 'src/runtime imports no agents'],
  [(from) => from.startsWith('src/runtime/'), (to) => to.startsWith('src/session/'), 'src/runtime imports no session core'],
  [(from) => from.startsWith('src/runtime/'), isFace, 'src/runtime imports no face'],
  [(from) => from.startsWith('src/runtime/'), (to) => to === 'ink' || to.startsWith('ink/'), 'src/runtime imports no ink'],
  [(from) => from.startsWith('src/runtime/'), (to) => to === 'react' || to.startsWith('react/') || to === 'react-dom', 'src/runtime imports no react'],
  [(from) => from.startsWith('src/agents/'), (to) => to.startsWith('src/session/') || isFace(to), 'src/agents imports no session core and no face'],
  [(from) => from.startsWith('src/session/'), isFace, 'src/session imports no face'],
  [isFace, (to) => to.startsWith('src/agents/'), 'a face reaches the team through src/session, not into the agents'],
  [
    (from) => from.startsWith('src/runtime/tools/'),
    (to) => to.startsWith('src/runtime/permissions/'),
    'the tools are below the permission gate that reads their declarations',
  ],
];

/**
 * Inner orders (docs/architecture.md#import-rules): inside a parent folder, rooms in tiers listed low to high.
 * A tier is one room or several peers. A file in a room may import its own room and the rooms of lower tiers;
 * never a peer of its tier, never a room of a higher one. A room is a folder (`fs/`) or a file (`config.ts`),
 * matched by the longest prefix, so `store/file/` is a room of its own above `store/`. Files of the parent in no
 * listed room (shared vocabulary such as `src/agents/team-context.ts`) are free to be imported by every room.
 */
export const INNER_ORDERS = [
  {
    parent: 'src/agents/',
    rooms: ['prompts/', 'loop/', 'tools/', 'lifecycle/'],
    why: 'the wings of src/agents build upward: prompts < loop < tools < lifecycle',
  },
  {
    parent: 'src/runtime/',
    rooms: [
      ['vocabulary.ts', 'secrets.ts', 'generated-section.ts', 'model/model-aliases.ts'],
      ['fs/', 'git/', 'process/'],
      'store/',
      'events/',
      ['store/team-store.ts', 'store/memory-approvals.ts', 'store/bus-rules.ts', 'inbox.ts', 'budget/', 'record/', 'sandbox/', 'verify/'],
      'workspace/',
      'tools/',
      'permissions/',
      'config.ts',
      'settings/',
      ['model/', 'hooks/', 'mcp/', 'notify/'],
      ['store/file/', 'store/postgres/'],
    ],
    why: 'src/runtime builds upward: words and the OS < store records < events < the team store, sandbox, workspace < tools < permissions < config < settings < model, hooks, MCP < store backends',
  },
  {
    parent: 'src/tui/',
    rooms: [
      ['render/', 'terminal/'],
      'state/',
      'commands/',
      'console-controller.ts',
      'keys/',
      'hooks/',
      'components/',
      'console-session.ts',
      ['run-console.ts', 'generated-docs.ts'],
    ],
    why: 'src/tui builds upward: render, terminal < state < commands < console-controller < keys < hooks < components < console-session < run-console',
  },
];

// Every static `import … from 'x'` / `export … from 'x'` at the start of a line (type-only or not).
const STATEMENT = /^[ \t]*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm;

const typeImportsVisible = {
  name: 'type-imports-visible',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]src[\\/].*\.tsx?$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const extra = [...source.matchAll(STATEMENT)]
        .map((match) => match[1])
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => `import ${JSON.stringify(specifier)};`);
      return { contents: `${source}\n${extra.join('\n')}\n`, loader: args.path.endsWith('x') ? 'tsx' : 'ts' };
    });
  },
};

export async function importGraph() {
  const entryPoints = [];
  for await (const file of glob('src/**/*.{ts,tsx}', { cwd: root })) entryPoints.push(path.join(root, file));
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    write: false,
    metafile: true,
    outdir: path.join(root, '.import-check'),
    format: 'esm',
    platform: 'node',
    packages: 'external',
    jsx: 'automatic',
    logLevel: 'silent',
    plugins: [typeImportsVisible],
    loader: TEXT_LOADERS,
  });
  /** file (relative to the repo) → the files and packages it imports, with how. */
  const graph = new Map();
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    if (!file.startsWith('src/')) continue;
    graph.set(
      file,
      input.imports.map((imported) => ({ to: imported.external ? imported.path : imported.path.replace(/\\/g, '/'), kind: imported.kind })),
    );
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): the cycles. */
export function cycles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const { to } of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!indices.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node), indices.get(to)));
      }
    }
    if (low.get(node) !== indices.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = (graph.get(node) ?? []).some(({ to }) => to === node);
    if (component.length > 1 || selfLoop) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

/** One path around a cycle, for the message: a → b → … → a. */
function cyclePath(graph, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const node = queue.shift();
    for (const { to } of graph.get(node) ?? []) {
      if (to === start) {
        const route = [start];
        for (let at = node; at !== start; at = previous.get(at)) route.splice(1, 0, at);
        return [...route, start].join(' → ');
      }
      if (members.has(to) && !previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return component.join(', ');
}

/** The room of `file` under one order and its tier (undefined when the file is in none of its rooms). */
function roomOf(order, file) {
  if (!file.startsWith(order.parent)) return undefined;
  const rest = file.slice(order.parent.length);
  let found;
  order.rooms.forEach((tier, rank) => {
    for (const room of [tier].flat()) if (rest.startsWith(room) && (!found || room.length > found.room.length)) found = { room, rank };
  });
  return found;
}

export function orderViolations(graph, orders = INNER_ORDERS) {
  const found = [];
  for (const [file, imports] of graph) {
    for (const order of orders) {
      const from = roomOf(order, file);
      if (!from) continue;
      for (const { to } of imports) {
        const into = roomOf(order, to);
        if (!into || into.room === from.room) continue;
        if (into.rank > from.rank) found.push(`${file} imports ${to} (${order.why})`);
        else if (into.rank === from.rank) found.push(`${file} imports ${to} (${from.room} and ${into.room} are peers: neither imports the other)`);
      }
    }
  }
  return found;
}

export function layerViolations(graph, rules = FLOOR_RULES) {
  const found = [];
  for (const [file, imports] of graph) {
    for (const { to } of imports) for (const [from, into, why] of rules) if (from(file) && into(to)) found.push(`${file} imports ${to} (${why})`);
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = await importGraph();
  const problems = [
    ...cycles(graph).map((component) => `import cycle: ${cyclePath(graph, component)}`),
    ...layerViolations(graph).map((line) => `layer: ${line}`),
    ...orderViolations(graph).map((line) => `order: ${line}`),
  ];
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\ncheck-imports: ${problems.length} problem(s) in ${graph.size} files of src/\n`);
    process.exit(1);
  }
  process.stdout.write(
    `check-imports: ${graph.size} files of src/: no import cycles; floors kept (runtime < agents < session < faces, faces only through the session, runtime/tools no runtime/permissions); inner orders kept (${INNER_ORDERS.map((order) => `${order.parent} ${order.rooms.length} tiers`).join(', ')})\n`,
  );
}
