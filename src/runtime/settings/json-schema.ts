// The settings schema as JSON Schema, for editors (`"$schema": "./settings.schema.json"` or the
// committed file's path) and for the settings reference in docs/configuration.md; and huddle's defaults, read from the same
// schema so that a default is written down exactly once.
import * as z from 'zod';
import { settingsSchema } from './schema.js';

export interface JsonSchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: JsonSchemaNode | boolean;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  [key: string]: unknown;
}

let cached: JsonSchemaNode | undefined;

export function settingsJsonSchema(): JsonSchemaNode {
  cached ??= tidy(z.toJSONSchema(settingsSchema, { io: 'input', target: 'draft-07' }) as JsonSchemaNode);
  return cached;
}

/** The committed file's text. */
export function settingsJsonSchemaText(): string {
  return `${JSON.stringify(settingsJsonSchema(), null, 2)}\n`;
}

/** Drops noise editors would show: integers' 2^53 bounds and record keys' `propertyNames: string`. */
function tidy(node: JsonSchemaNode): JsonSchemaNode {
  const out: JsonSchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'maximum' || key === 'minimum') && Math.abs(value as number) >= Number.MAX_SAFE_INTEGER) continue;
    if (key === 'propertyNames' && (value as JsonSchemaNode).type === 'string' && Object.keys(value as object).length === 1) continue;
    if (Array.isArray(value)) out[key] = value.map((item) => (isNode(item) ? tidy(item) : item));
    else if (isNode(value) && key !== 'default' && key !== 'const') {
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, tidy(child as JsonSchemaNode)])) : tidy(value);
    } else out[key] = value;
  }
  return out;
}

function isNode(value: unknown): value is JsonSchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * huddle's defaults as a settings object: every `default` under plain object properties. Read off
 * the zod schema's own metadata (what the JSON Schema's defaults are made from): building the JSON
 * Schema costs tens of milliseconds, which every start of huddle would pay.
 */
export function settingsDefaults(): Record<string, unknown> {
  return structuredClone((defaults ??= zodDefaults(settingsSchema) ?? {}));
}

let defaults: Record<string, unknown> | undefined;

interface ZodNode {
  _zod?: { def?: { type: string; innerType?: ZodNode; shape?: Record<string, ZodNode> } };
}

function zodDefaults(node: ZodNode): Record<string, unknown> | undefined {
  let current: ZodNode | undefined = node;
  while (current?._zod?.def?.innerType) current = current._zod.def.innerType;
  const shape = current?._zod?.def?.type === 'object' ? current._zod.def.shape : undefined;
  if (!shape) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(shape)) {
    const value = metaDefault(child);
    if (value !== undefined) out[key] = structuredClone(value);
    else {
      const nested = zodDefaults(child);
      if (nested && Object.keys(nested).length) out[key] = nested;
    }
  }
  return out;
}

/** The `default` of a node's metadata, or of a wrapper's inner node. */
function metaDefault(node: ZodNode): unknown {
  for (let current: ZodNode | undefined = node; current; current = current._zod?.def?.innerType) {
    const meta = z.globalRegistry.get(current as z.ZodType) as { default?: unknown } | undefined;
    if (meta?.default !== undefined) return meta.default;
  }
  return undefined;
}

/** The defaults as the JSON Schema states them (the test that keeps settingsDefaults honest compares both). */
export function jsonSchemaDefaults(): Record<string, unknown> {
  return collectDefaults(settingsJsonSchema()) ?? {};
}

function collectDefaults(node: JsonSchemaNode): Record<string, unknown> | undefined {
  if (!node.properties) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node.properties)) {
    if (child.default !== undefined) out[key] = structuredClone(child.default);
    else {
      const nested = collectDefaults(child);
      if (nested && Object.keys(nested).length) out[key] = nested;
    }
  }
  return out;
}
