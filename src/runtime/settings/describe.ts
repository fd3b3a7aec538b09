// The effective settings as rows of key, value and source, for `/config` in the console (and any
// other face). Values that may hold secrets (HTTP headers, environment values) are never shown.
import { formatPath } from './errors.js';
import { isPlainObject } from './layers.js';
import type { LoadedSettings } from './load.js';
import { redactUrl } from '../store/team-url.js';

export interface SettingsRow {
  key: string;
  /** One line, bounded. */
  value: string;
  /** Lowest first; several when lists were joined across files. */
  sources: string[];
}

const SECRET_MAPS = new Set(['headers', 'env']);
const MAX_VALUE = 80;

export function settingsRows(loaded: LoadedSettings): SettingsRow[] {
  const rows: SettingsRow[] = [];
  const walk = (value: unknown, path: string[]) => {
    const key = formatPath(path);
    const sources = loaded.provenance.get(key);
    if (sources || !isPlainObject(value)) {
      rows.push({ key, value: oneLine(redact(value, path)), sources: sources ?? [] });
      return;
    }
    for (const [name, child] of Object.entries(value)) walk(child, [...path, name]);
  };
  for (const [name, value] of Object.entries(loaded.settings)) walk(value, [name]);
  return rows;
}

/** A plain-text table: `key  value  (source)`. */
export function formatSettingsRows(rows: SettingsRow[]): string {
  const keyWidth = Math.min(40, Math.max(0, ...rows.map((row) => row.key.length)));
  const valueWidth = Math.min(MAX_VALUE, Math.max(0, ...rows.map((row) => row.value.length)));
  return rows.map((row) => `${row.key.padEnd(keyWidth)}  ${row.value.padEnd(valueWidth)}  ${row.sources.join(' + ')}`.trimEnd()).join('\n');
}

function redact(value: unknown, path: string[]): unknown {
  // One variable of an `env` (or header) map shown as its own row: its name only.
  if (!isPlainObject(value) && path.slice(0, -1).some((key) => SECRET_MAPS.has(key))) return '‹set›';
  // The team URL may carry the database password.
  if (path.length === 1 && path[0] === 'team' && typeof value === 'string') return redactUrl(value);
  // A webhook URL is usually its own token: only where it goes is shown.
  if (path.join('.') === 'notifications.webhook.url' && typeof value === 'string') return webhookOrigin(value);
  if (Array.isArray(value)) return value.map((item, i) => redact(item, [...path, String(i)]));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] =
      SECRET_MAPS.has(key) && isPlainObject(child) ? Object.fromEntries(Object.keys(child).map((name) => [name, '‹set›'])) : redact(child, [...path, key]);
  }
  if (SECRET_MAPS.has(path.at(-1) ?? '') && path.length > 1) return Object.fromEntries(Object.keys(out).map((name) => [name, '‹set›']));
  return out;
}

function oneLine(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = (text ?? '').replace(/\s+/g, ' ');
  return flat.length > MAX_VALUE ? `${flat.slice(0, MAX_VALUE - 1)}…` : flat;
}

/** "https://hooks.slack.com/‹hidden›": the host a webhook posts to, without the path and query that carry its token. */
export function webhookOrigin(url: string): string {
  try {
    return `${new URL(url).origin}/‹hidden›`;
  } catch {
    return '‹hidden›';
  }
}
