// The settings reference in docs/configuration.md, generated from the schema (scripts/docs.mjs writes
// it between markers; a test fails when it is stale), so that the docs cannot drift from the code.
import { ENVIRONMENT_SETTINGS } from './env.js';
import { sectionMarkers, withGeneratedSection } from '../generated-section.js';
import { settingsJsonSchema, type JsonSchemaNode } from './json-schema.js';

/** The page the reference is written into. */
export const REFERENCE_FILE = 'docs/configuration.md';
export const REFERENCE_SECTION = 'settings-reference';
export const { start: REFERENCE_START, end: REFERENCE_END } = sectionMarkers(REFERENCE_SECTION);

const FLAGS: Record<string, string> = {
  model: '--model',
  maxTurns: '--max-turns',
  permissionMode: '--permission-mode',
  'budget.team.usd': '--budget-usd',
  'budget.team.minutes': '--budget-minutes',
  'budget.team.turns': '--budget-turns',
};

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

export function settingsReference(): string {
  const rows: Row[] = [];
  const schema = settingsJsonSchema();
  for (const [key, node] of Object.entries(schema.properties ?? {})) {
    if (key === '$schema') continue;
    collect(key, node, rows);
  }
  const lines = ['| key | type | default | what it does |', '|---|---|---|---|'];
  for (const row of rows) lines.push(`| \`${row.key}\` | ${row.type} | ${row.default} | ${row.description} |`);
  return lines.join('\n');
}

/** Replaces what lies between the markers (exclusive) with the reference; throws when the markers are missing. */
export function withSettingsReference(page: string): string {
  return withGeneratedSection(page, REFERENCE_FILE, REFERENCE_SECTION, settingsReference());
}

function collect(key: string, node: JsonSchemaNode, rows: Row[]): void {
  const alternatives = node.anyOf;
  if (node.properties && !alternatives) {
    if (node.description) rows.push({ key, type: 'object', default: '', description: escape(node.description) });
    const children = Object.entries(node.properties);
    // Keys that all take the same shape (hook events, agent kinds) are documented once.
    const shapes = new Set(children.map(([, child]) => JSON.stringify(child)));
    if (children.length >= 3 && shapes.size === 1) {
      const names = children.map(([name]) => name);
      const placeholder = `${key}.<${singular(key)}>`;
      const child = children[0]![1];
      rows.push({
        key: placeholder,
        type: typeOf(child),
        default: '',
        description: `\`<${singular(key)}>\` is one of ${names.map((name) => `\`${name}\``).join(', ')}.`,
      });
      collectFields(
        child.type === 'array' && child.items ? `${placeholder}[]` : placeholder,
        child.type === 'array' && child.items ? child.items : child,
        rows,
      );
      return;
    }
    for (const [name, child] of children) collect(`${key}.${name}`, child, rows);
    return;
  }
  const values = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  if (values && node.type === 'object' && (values.anyOf || values.properties)) {
    rows.push({ key, type: 'object', default: '', description: escape(node.description ?? '') });
    const placeholder = `${key}.<${singular(key)}>`;
    if (values.anyOf) {
      for (const option of values.anyOf) collectFields(placeholder, option, rows, option.description);
    } else collectFields(placeholder, values, rows);
    return;
  }
  if (node.type === 'array' && node.items?.properties) {
    rows.push({ key, type: 'list', default: '', description: escape(node.description ?? '') });
    collectFields(`${key}[]`, node.items, rows);
    return;
  }
  rows.push({ key, type: typeOf(node), default: defaultOf(node), description: describe(key, node) });
}

function collectFields(prefix: string, node: JsonSchemaNode, rows: Row[], note?: string): void {
  let first = true;
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = `${prefix}.${name}`;
    if ((child.properties && !child.anyOf) || (child.type === 'array' && child.items?.properties)) {
      collect(key, child, rows);
      continue;
    }
    const description = describe(key, child);
    rows.push({ key, type: typeOf(child), default: defaultOf(child), description: first && note ? `${escape(note)} ${description}` : description });
    first = false;
  }
}

function singular(key: string): string {
  const last = key.split('.').at(-1) ?? key;
  if (last === 'mcpServers') return 'server';
  if (last === 'roles') return 'role';
  if (last === 'agents') return 'kind';
  if (last === 'hooks') return 'Event';
  return 'name';
}

function describe(key: string, node: JsonSchemaNode): string {
  const also: string[] = [];
  const variable = ENVIRONMENT_SETTINGS.find((setting) => setting.path.join('.') === key)?.variable;
  if (variable) also.push(`\`${variable}\``);
  if (FLAGS[key]) also.push(`\`${FLAGS[key]}\``);
  const text = escape(node.description ?? '');
  return also.length ? `${text} Also ${also.join(', ')}.` : text;
}

function typeOf(node: JsonSchemaNode): string {
  if (node.enum) return node.enum.map((value) => `\`${JSON.stringify(value)}\``).join(' \\| ');
  if (node.const !== undefined) return `\`${JSON.stringify(node.const)}\``;
  if (node.anyOf) return node.anyOf.map(typeOf).join(' \\| ');
  if (node.type === 'array') return node.items ? `list of ${typeOf(node.items)}` : 'list';
  if (node.type === 'integer') return `whole number${bounds(node)}`;
  if (node.type === 'number') return `number${bounds(node)}`;
  if (node.type === 'object') return typeof node.additionalProperties === 'object' ? `object of ${typeOf(node.additionalProperties)}` : 'object';
  return String(node.type ?? 'any');
}

function bounds(node: JsonSchemaNode): string {
  if (node.exclusiveMinimum !== undefined) return ` > ${node.exclusiveMinimum}`;
  if (node.minimum !== undefined && node.maximum !== undefined) return ` ${node.minimum}–${node.maximum}`;
  if (node.minimum !== undefined) return ` ≥ ${node.minimum}`;
  return '';
}

function defaultOf(node: JsonSchemaNode): string {
  if (node.default === undefined) return '';
  return `\`${JSON.stringify(node.default)}\``;
}

function escape(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
