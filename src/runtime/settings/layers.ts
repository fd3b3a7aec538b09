// Settings come in layers (defaults, files, variables, flags), merged lowest first. Every value keeps
// where it came from, so `/config` can say "maxTurns = 80  (.team/settings.local.json)".
import { formatPath } from './errors.js';
import type { Settings } from './schema.js';

/** One source of settings: a file, one environment variable, one flag, or huddle's defaults. */
export interface SettingsLayer {
  /** How the source is named to the user: `.team/settings.json`, `HUDDLE_MODEL`, `--model`, `default`. */
  label: string;
  values: Record<string, unknown>;
}

/** Key path (as `formatPath` writes it) → the sources of its value, lowest first. */
export type Provenance = Map<string, string[]>;

/**
 * Lists are joined across layers here (hooks from the user's file and the team's both run; allow-lists
 * add up); every other list replaces the lower one. `*` matches any one key.
 */
const JOINED_LISTS = [
  ['hooks', '*'],
  ['permissions', 'allow'],
  ['permissions', 'deny'],
  ['permissions', 'ask'],
  ['mcp', 'disabled'],
  ['sandbox', 'network', 'allow'],
  ['sandbox', 'network', 'deny'],
  ['sandbox', 'writablePaths'],
  ['sandbox', 'caches'],
  ['sandbox', 'hidden'],
];

/** Objects a higher layer replaces whole: a server or agent entry is one thing, not fields to mix. */
const WHOLE_OBJECTS = [
  ['mcpServers', '*'],
  ['agents', '*'],
];

function matches(patterns: string[][], path: string[]): boolean {
  return patterns.some((pattern) => pattern.length === path.length && pattern.every((part, i) => part === '*' || part === path[i]));
}

export function mergeLayers(layers: SettingsLayer[]): { settings: Settings; provenance: Provenance } {
  const settings: Record<string, unknown> = {};
  const provenance: Provenance = new Map();
  for (const layer of layers) mergeInto(settings, layer.values, [], layer.label, provenance);
  return { settings: settings as Settings, provenance };
}

function mergeInto(target: Record<string, unknown>, source: Record<string, unknown>, path: string[], label: string, provenance: Provenance): void {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const here = [...path, key];
    const name = formatPath(here);
    if (isPlainObject(value) && !matches(WHOLE_OBJECTS, here)) {
      const existing = target[key];
      const child = isPlainObject(existing) ? existing : {};
      target[key] = child;
      mergeInto(child, value, here, label, provenance);
      continue;
    }
    const existing = target[key];
    if (Array.isArray(value) && Array.isArray(existing) && matches(JOINED_LISTS, here)) {
      const joined = [...existing];
      for (const item of value) if (!joined.some((seen) => sameValue(seen, item))) joined.push(item);
      target[key] = joined;
      provenance.set(name, [...(provenance.get(name) ?? []), label]);
      continue;
    }
    target[key] = structuredClone(value);
    // A replaced object drops what its old fields said about their sources.
    for (const known of [...provenance.keys()]) if (known.startsWith(`${name}.`) || known.startsWith(`${name}[`)) provenance.delete(known);
    provenance.set(name, [label]);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A layer holding one value at `path` (for a variable or a flag). */
export function layerAt(label: string, path: string[], value: unknown): SettingsLayer {
  let values: Record<string, unknown> = { [path.at(-1)!]: value };
  for (const key of path.slice(0, -1).reverse()) values = { [key]: values };
  return { label, values };
}
