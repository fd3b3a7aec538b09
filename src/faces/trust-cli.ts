// `huddle trust [--list | --revoke]`: the person's say over the workspace settings that widen what
// runs unasked (docs/trust.md). Plain `huddle trust` shows each such entry with its value and
// records trust for the files as they are now; --list shows what is trusted here and what waits;
// --revoke forgets this workspace's records (the next run asks again). Exit 2 on a broken file.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { roleWidening } from '../runtime/settings/role-trust.js';
import { SettingsError } from '../runtime/settings/errors.js';
import { loadSettings, workspaceKey } from '../runtime/settings/load.js';
import { isPlainObject } from '../runtime/settings/layers.js';
import { readSettingsFile, settingsFiles } from '../runtime/settings/files.js';
import { trustStorePath, TrustStore, wideningKeys } from '../runtime/settings/trust.js';

export type TrustCommand = 'trust' | 'list' | 'revoke';

export function runTrustCommand(command: TrustCommand, cwd: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const root = path.resolve(cwd ?? process.cwd());
  const workspace = workspaceKey(root);
  const store = TrustStore.at(env);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (command === 'revoke') {
    const gone = store.revoke(workspace);
    out(
      gone ? `forgot ${gone} trusted settings file${gone === 1 ? '' : 's'} for ${workspace}; the next run asks again` : `nothing was trusted for ${workspace}`,
    );
    return 0;
  }
  let loaded;
  try {
    loaded = loadSettings({ cwd: root, env });
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`huddle: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (command === 'list') {
    out(`workspace ${workspace} (records in ${trustStorePath(env)}):`);
    for (const file of loaded.trusted) out(`  trusted   ${file.file}: ${file.settings.join(', ')}`);
    for (const file of loaded.untrusted) out(`  waiting   ${file.file}: ${file.settings.join(', ')}`);
    if (!loaded.trusted.length && !loaded.untrusted.length) out('  no workspace settings widen what runs unasked');
    return 0;
  }
  if (!loaded.untrusted.length) {
    out(
      loaded.trusted.length
        ? `already trusted: ${loaded.trusted.map((f) => f.file).join(', ')}`
        : 'nothing to trust: no workspace settings widen what runs unasked',
    );
    return 0;
  }
  for (const file of loaded.untrusted) {
    out(`${file.file}:`);
    for (const line of entryLines(root, file.file, env)) out(`  ${line}`);
  }
  store.record(workspace, loaded.untrusted);
  out(`trusted for ${workspace} as they are now (a change asks again; 'huddle trust --revoke' forgets)`);
  return 0;
}

/** Each widening entry of a file with its value, secrets (env, headers) left out. */
function entryLines(root: string, label: string, env: NodeJS.ProcessEnv): string[] {
  if (label.startsWith('.team/roles/')) return roleLines(path.join(root, label));
  const file = settingsFiles({ cwd: root, env }).find((f) => f.label === label);
  const values = file ? (readSettingsFile(file, root).layer?.values ?? {}) : {};
  return wideningKeys(values).map((keyPath) => {
    let value: unknown = values;
    for (const key of keyPath) value = isPlainObject(value) ? value[key] : undefined;
    // The settings' own `env` (Claude Code's key) is shown like a server's: its names only.
    const shown = keyPath.at(-1) === 'env' && isPlainObject(value) ? Object.fromEntries(Object.keys(value).map((k) => [k, '‹set›'])) : hideSecrets(value);
    const text = JSON.stringify(shown) ?? '';
    return `${keyPath.join('.')} = ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`;
  });
}

/** A role file's widening front matter lines, as written. */
function roleLines(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const fields = roleWidening(text);
  return text.split(/\r?\n/).filter((line) => fields.some((field) => line.startsWith(`${field}:`)));
}

function hideSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hideSecrets);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      (key === 'env' || key === 'headers') && isPlainObject(child) ? Object.fromEntries(Object.keys(child).map((k) => [k, '‹set›'])) : hideSecrets(child),
    ]),
  );
}
