// Fails (exit 1) when src/ has an import cycle, or when src/runtime imports what it must not know:
// the console (src/tui, ink, react), the agents (src/agents), the session core or the faces; or when
// src/runtime/tools imports src/runtime/permissions (the gate reads the tools, never the reverse).
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

/** Layers src/runtime must not import: [what, how to recognise an import path]. */
const RUNTIME_MUST_NOT_IMPORT = [
  ['src/tui (the console)', (to) => to.startsWith('src/tui/')],
  ['src/agents', (to) => to.startsWith('src/agents/')],
  ['src/session', (to) => to.startsWith('src/session/')],
  ['a face (cli.ts, headless.ts)', (to) => to === 'src/cli.ts' || to === 'src/headless.ts'],
  ['ink', (to) => to === 'ink' || to.startsWith('ink/')],
  ['react', (to) => to === 'react' || to.startsWith('react/') || to === 'react-dom'],
];

/**
 * Rooms of src/runtime that must not import another room: [from, to, why]. The permission gate reads
 * what tools declare (runtime/permissions → runtime/tools); tools know nothing of the gate.
 */
const ROOM_MUST_NOT_IMPORT = [['src/runtime/tools/', 'src/runtime/permissions/', 'the tools are below the permission gate that reads their declarations']];

/**
 * Inner orders (docs/architecture.md): inside a parent folder, rooms listed low to high. A file in a room may
 * import its own room and the rooms listed before it, never one listed after it. Files of the parent that are in
 * no listed room (shared vocabulary such as `src/agents/team-context.ts`) are free to be imported by every room.
 */
export const INNER_ORDERS = [
  {
    parent: 'src/agents/',
    rooms: ['prompts/', 'loop/', 'tools/', 'lifecycle/'],
    why: 'the wings of src/agents build upward: prompts < loop < tools < lifecycle',
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

/** The room of `file` under one order, and its rank (undefined when the file is in none of its rooms). */
function roomRank(order, file) {
  if (!file.startsWith(order.parent)) return undefined;
  const rest = file.slice(order.parent.length);
  const rank = order.rooms.findIndex((room) => rest.startsWith(room));
  return rank === -1 ? undefined : rank;
}

export function orderViolations(graph, orders = INNER_ORDERS) {
  const found = [];
  for (const [file, imports] of graph) {
    for (const order of orders) {
      const from = roomRank(order, file);
      if (from === undefined) continue;
      for (const { to } of imports) {
        const into = roomRank(order, to);
        if (into !== undefined && into > from) found.push(`${file} imports ${to} (${order.why})`);
      }
    }
  }
  return found;
}

export function layerViolations(graph) {
  const found = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith('src/runtime/')) continue;
    for (const { to } of imports) {
      for (const [what, matches] of RUNTIME_MUST_NOT_IMPORT) if (matches(to)) found.push(`${file} imports ${to} (${what})`);
      for (const [from, room, why] of ROOM_MUST_NOT_IMPORT) if (file.startsWith(from) && to.startsWith(room)) found.push(`${file} imports ${to} (${why})`);
    }
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
    `check-imports: ${graph.size} files of src/, no import cycles, src/runtime imports no console, agents or session, runtime/tools no runtime/permissions, inner orders kept (${INNER_ORDERS.map((order) => order.parent).join(', ')})\n`,
  );
}
