// Settings errors are the user's mistakes, so each is one line that names the file (or variable, or
// flag), the key path and what was expected: `.team/settings.json: hooks.PreToolUse[0].hooks[0].timeout:
// expected a number, not "ten"`. Never a stack trace, never zod's own wording.
import type * as z from 'zod';

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

export type KeyPath = ReadonlyArray<PropertyKey>;

/** `hooks.PreToolUse[0].timeout`; keys that are not plain words are quoted: `mcpServers["my.server"]`. */
export function formatPath(path: KeyPath): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(String(key))) out += `${out ? '.' : ''}${String(key)}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** One line for the first problem a parse found (and how many more there are). */
export function describeIssues(source: string, issues: z.core.$ZodIssue[], schema: z.ZodType): string {
  const first = issues[0];
  if (!first) return `${source}: invalid settings`;
  const { path, text } = describeIssue(first, [], schema);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${source}: ${path.length ? `${formatPath(path)}: ` : ''}${text}${more}`;
}

function describeIssue(issue: z.core.$ZodIssue, base: PropertyKey[], schema: z.ZodType): { path: PropertyKey[]; text: string } {
  const path = [...base, ...issue.path];
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type': {
      const text = `expected ${article(issue.expected)}`;
      return { path, text: input === undefined ? `${text} (it is missing)` : `${text}, not ${preview(input)}` };
    }
    case 'invalid_value':
      return {
        path,
        text: `expected ${issue.values.length === 1 ? preview(issue.values[0]) : `one of ${issue.values.map((v) => preview(v)).join(', ')}`}${input === undefined ? '' : `, not ${preview(input)}`}`,
      };
    case 'unrecognized_keys': {
      const key = issue.keys[0] ?? '';
      const known = knownKeys(schema, path);
      const guess = known ? closest(key, known) : undefined;
      const hint = guess ? ` (did you mean "${guess}"?)` : known?.length ? ` (known keys: ${known.join(', ')})` : '';
      return { path: [...path, key], text: `unknown key${hint}` };
    }
    case 'too_small':
      if (issue.origin === 'string') return { path, text: 'must not be empty' };
      if (issue.origin === 'array') return { path, text: `needs at least ${issue.minimum} entr${Number(issue.minimum) === 1 ? 'y' : 'ies'}` };
      return {
        path,
        text: `must be ${issue.inclusive === false ? 'above' : 'at least'} ${issue.minimum}${input === undefined ? '' : `, not ${preview(input)}`}`,
      };
    case 'too_big':
      return {
        path,
        text: `must be ${issue.inclusive === false ? 'below' : 'at most'} ${issue.maximum}${input === undefined ? '' : `, not ${preview(input)}`}`,
      };
    case 'invalid_union': {
      // Report the alternative that came closest (fewest problems), in its own words.
      const branches = issue.errors.filter((errors) => errors.length > 0);
      const best = branches.reduce<z.core.$ZodIssue[] | undefined>((a, b) => (a === undefined || b.length <= a.length ? b : a), undefined);
      const inner = best?.[0];
      if (!inner) return { path, text: 'does not match any allowed form' };
      return describeIssue(inner, path, schema);
    }
    default:
      return { path, text: issue.message };
  }
}

function article(expected: string): string {
  switch (expected) {
    case 'int':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'object':
    case 'record':
      return 'an object';
    case 'array':
      return 'a list';
    default:
      return expected;
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** The keys the schema allows at `path`, for the "did you mean" hint. */
function knownKeys(schema: z.ZodType, path: PropertyKey[]): string[] | undefined {
  let node: unknown = schema;
  for (const key of path) {
    node = child(unwrap(node), key);
    if (!node) return undefined;
  }
  const def = defOf(unwrap(node));
  return def?.type === 'object' ? Object.keys(def.shape as object) : undefined;
}

interface Def {
  type: string;
  [field: string]: unknown;
}

function defOf(node: unknown): Def | undefined {
  return (node as { _zod?: { def?: Def } } | undefined)?._zod?.def;
}

function unwrap(node: unknown): unknown {
  let def = defOf(node);
  while (def && (def.type === 'optional' || def.type === 'default' || def.type === 'nullable')) {
    node = def.innerType;
    def = defOf(node);
  }
  return node;
}

function child(node: unknown, key: PropertyKey): unknown {
  const def = defOf(node);
  if (!def) return undefined;
  if (def.type === 'object') return (def.shape as Record<string, unknown>)[String(key)];
  if (def.type === 'record') return def.valueType;
  if (def.type === 'array') return def.element;
  if (def.type === 'union') {
    for (const option of def.options as unknown[]) {
      const found = child(unwrap(option), key);
      if (found) return found;
    }
  }
  return undefined;
}

/** The known key nearest to a typo, if it is near enough to be a likely slip. */
function closest(typo: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(typo.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(typo.length / 3)) ? best : undefined;
}

/** Edit distance where swapping two neighbours counts as one slip ("modle" → "model"). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
