// What the docs tell people to write is what huddle accepts: every settings example (a ```json block
// with a settings key at its top) in the README and docs/ parses against the settings schema, and
// every settings key the prose names in backticks (`sandbox.network.enabled`, `hooks.<Event>[].matcher`)
// exists in it. The README once documented `writable`, `hidden`, `hostCaches` and `network.enabled`
// for a schema that refused all four.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeIssues } from '../../src/runtime/settings/errors.js';
import { settingsJsonSchema, type JsonSchemaNode } from '../../src/runtime/settings/json-schema.js';
import { settingsSchema } from '../../src/runtime/settings/schema.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(): string[] {
  const files = ['README.md'];
  const docs = path.join(root, 'docs');
  if (existsSync(docs)) {
    for (const entry of readdirSync(docs, { recursive: true, encoding: 'utf8' })) if (entry.endsWith('.md')) files.push(path.join('docs', entry));
  }
  return files;
}

/** Pages that show a settings example (so the check above has something to check). */
const PAGES_WITH_EXAMPLES = ['docs/configuration.md', 'docs/external-agents.md', 'docs/hooks.md', 'docs/mcp.md', 'docs/sandbox.md'];

const schema = settingsJsonSchema();
const topLevel = new Set(Object.keys(schema.properties ?? {}));

/** The ```json blocks of a markdown text, with their line numbers. */
function jsonBlocks(text: string): Array<{ line: number; body: string }> {
  const out: Array<{ line: number; body: string }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```json\s*$/.exec(lines[i]!);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!);
    out.push({ line: i + 1, body: body.join('\n') });
    i = j;
  }
  return out;
}

/** Key paths named in inline code whose first part is a settings key: `sandbox.network.enabled: false` → sandbox.network.enabled. */
function documentedKeyPaths(text: string): Array<{ line: number; key: string }> {
  const out: Array<{ line: number; key: string }> = [];
  text.split('\n').forEach((line, i) => {
    for (const match of line.matchAll(/`([^`\n]+)`/g)) {
      let key = /^[A-Za-z$][\w$]*(?:\.(?:<[^>]+>|[\w$*-]+)(?:\[\])*)+/.exec(match[1]!)?.[0];
      // The sandbox's own keys are named without their section too (`network.enabled`).
      if (key?.startsWith('network.')) key = `sandbox.${key}`;
      // A file name (`memory.ts`, `budget.json`) is not a key path.
      if (key && /\.(ts|tsx|js|mjs|cjs|json|md|ya?ml|sh)$/.test(key)) continue;
      if (key && topLevel.has(key.split('.')[0]!)) out.push({ line: i + 1, key });
    }
  });
  return out;
}

/** Whether a key path exists in the JSON Schema; `<name>` is any key of a record or object, `[]` a list's item. */
function exists(node: JsonSchemaNode | undefined, parts: string[]): boolean {
  if (!node) return false;
  if (node.anyOf) return node.anyOf.some((branch) => exists(branch, parts));
  if (!parts.length) return true;
  const [part, ...rest] = parts;
  const [, key = '', lists = ''] = /^(.*?)((?:\[\])*)$/.exec(part!)!;
  let next = childOf(node, key);
  for (let k = 0; k < lists.length / 2; k++) next = next?.anyOf ? next.anyOf.find((b) => b.items)?.items : next?.items;
  return exists(next, rest);
}

function childOf(node: JsonSchemaNode, key: string): JsonSchemaNode | undefined {
  if (key.startsWith('<') && key.endsWith('>')) {
    if (typeof node.additionalProperties === 'object') return node.additionalProperties;
    const values = Object.values(node.properties ?? {});
    return values.length ? { anyOf: values } : undefined;
  }
  if (node.properties && key in node.properties) return node.properties[key];
  if (typeof node.additionalProperties === 'object') return node.additionalProperties;
  return undefined;
}

describe('settings in the docs', () => {
  for (const file of markdownFiles()) {
    const text = readFileSync(path.join(root, file), 'utf8');

    it(`${file}: every settings example parses against the schema`, () => {
      const examples = jsonBlocks(text).filter(({ body }) => {
        try {
          const value = JSON.parse(body) as unknown;
          return typeof value === 'object' && value !== null && Object.keys(value).some((k) => topLevel.has(k));
        } catch {
          return true; // a broken block is reported below
        }
      });
      if (PAGES_WITH_EXAMPLES.includes(file)) expect(examples.length).toBeGreaterThanOrEqual(1);
      for (const { line, body } of examples) {
        let value: unknown;
        expect(() => (value = JSON.parse(body)), `${file}:${line} is not JSON`).not.toThrow();
        const parsed = settingsSchema.safeParse(value);
        expect(parsed.success ? 'ok' : describeIssues(`${file}:${line}`, parsed.error.issues, settingsSchema)).toBe('ok');
      }
    });

    it(`${file}: every settings key named in the text exists in the schema`, () => {
      const keys = documentedKeyPaths(text);
      const missing = keys.filter(({ key }) => !exists(schema, key.split('.'))).map(({ line, key }) => `${file}:${line} ${key}`);
      expect(missing).toEqual([]);
      if (file === 'docs/sandbox.md')
        expect(keys.map((k) => k.key)).toEqual(
          expect.arrayContaining(['sandbox.network.enabled', 'sandbox.writablePaths', 'sandbox.hidden', 'sandbox.caches']),
        );
    });
  }

  it('finds the pages it checks: the README and every page under docs/', () => {
    expect(markdownFiles()).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md', 'docs/sandbox.md', 'docs/hooks.md', 'docs/mcp.md']));
  });

  it('the checks catch what the README used to say', () => {
    const old = 'widen it in `sandbox.writable`, `sandbox.hostCaches: true`, `network.enabled: false` or `network.off`';
    expect(
      documentedKeyPaths(old)
        .filter(({ key }) => !exists(schema, key.split('.')))
        .map((k) => k.key),
    ).toEqual(['sandbox.writable', 'sandbox.hostCaches', 'sandbox.network.off']);
    expect(exists(schema, 'hooks.<Event>[].hooks[].command'.split('.'))).toBe(true);
    expect(exists(schema, 'mcpServers.<server>.url'.split('.'))).toBe(true);
    expect(exists(schema, 'agents.<kind>.env'.split('.'))).toBe(true);
    expect(exists(schema, 'agents.<kind>.nope'.split('.'))).toBe(false);
    expect(settingsSchema.safeParse({ sandbox: { writable: ['/x'] } }).success).toBe(false);
  });
});
