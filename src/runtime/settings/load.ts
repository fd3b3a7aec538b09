// Loads the effective settings of a workspace: defaults, then each file, then environment
// variables, then flags, each checked against the one schema on its own so that an error names
// the source that holds the mistake.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { describeIssues, formatPath, SettingsError } from './errors.js';
import { environmentLayers } from './env.js';
import { claudeCodeLayer, isUserFile, readSettingsFile, settingsFiles, type SettingsFile, type SettingsLocations } from './files.js';
import { flagLayers, type SettingsFlags } from './flags.js';
import { settingsDefaults } from './json-schema.js';
import { mergeLayers, type Provenance, type SettingsLayer } from './layers.js';
import { settingsSchema, type Settings } from './schema.js';
import { roleFilesToTrust } from './role-trust.js';
import { playbookFilesToTrust } from './playbook-trust.js';
import { describeKeys, TrustStore, wideningKeys, withoutKeys, type UntrustedFile } from './trust.js';

export const DEFAULT_SOURCE = 'default';

export interface LoadSettingsOptions extends SettingsLocations {
  flags?: SettingsFlags;
  /** --trust: the person trusts the workspace's files as they are now; recorded (trust.ts). */
  trust?: boolean;
  /** --settings: Claude Code's settings given on the command line (the person's own: no trust asked), over every file. */
  claudeSettings?: { label: string; values: unknown } | undefined;
  /** --strict-mcp-config: the MCP servers are --mcp-config's alone (no file's, nor their trust asked). */
  strictMcp?: boolean;
}

export interface LoadedSettings {
  /** The merged settings, defaults filled in. */
  settings: Settings;
  /** Key path → the sources its value came from (`default` for defaults). */
  provenance: Provenance;
  /** The files that exist and were read, lowest first. */
  files: SettingsFile[];
  /** One line each: deprecated files, an ignored allow-list. */
  warnings: string[];
  /** Workspace files whose widening entries wait for the person: left out of `settings`. */
  untrusted: UntrustedFile[];
  /** Workspace files whose widening entries the person trusted (for `/config`). */
  trusted: UntrustedFile[];
}

/** Throws SettingsError, whose message is the one line to show (exit code 2 headless). */
export function loadSettings(options: LoadSettingsOptions): LoadedSettings {
  const env = options.env ?? process.env;
  const layers: SettingsLayer[] = [{ label: DEFAULT_SOURCE, values: settingsDefaults() }];
  const files: SettingsFile[] = [];
  const warnings: string[] = [];
  const untrusted: UntrustedFile[] = [];
  const trusted: UntrustedFile[] = [];
  const store = TrustStore.at(env, options.home);
  const workspace = workspaceKey(options.cwd);
  for (const file of settingsFiles({ ...options, env })) {
    if (options.strictMcp && file.kind === 'mcp') continue;
    const read = readSettingsFile(file, options.cwd);
    warnings.push(...read.warnings);
    if (!read.layer) continue;
    if (options.strictMcp) read.layer = { ...read.layer, values: withoutKeys(read.layer.values, [['mcpServers']]) };
    files.push(file);
    const widening = isUserFile(file) ? [] : wideningKeys(read.layer.values);
    if (widening.length) {
      const entry: UntrustedFile = { file: file.label, path: file.path, sha256: read.sha256 ?? '', settings: describeKeys(widening) };
      if (store.isTrusted(workspace, entry.file, entry.sha256)) trusted.push(entry);
      else if (options.trust) {
        store.record(workspace, [entry]);
        trusted.push(entry);
      } else {
        untrusted.push(entry);
        layers.push({ label: read.layer.label, values: withoutKeys(read.layer.values, widening) });
        continue;
      }
    }
    layers.push(read.layer);
  }
  // Role and playbook files' widening front matter (auto mode, an external CLI, auto-approved plans) waits the same way.
  for (const entry of [...roleFilesToTrust(options.cwd), ...playbookFilesToTrust(options.cwd)]) {
    if (store.isTrusted(workspace, entry.file, entry.sha256)) trusted.push(entry);
    else if (options.trust) {
      store.record(workspace, [entry]);
      trusted.push(entry);
    } else untrusted.push(entry);
  }
  if (options.claudeSettings) {
    const read = claudeCodeLayer(options.claudeSettings.label, options.claudeSettings.values, options.cwd);
    warnings.push(...read.warnings);
    if (read.layer) layers.push(read.layer);
  }
  for (const layer of [...environmentLayers(env), ...flagLayers(options.flags ?? {})]) {
    check(layer);
    layers.push(layer);
  }
  const { settings, provenance } = mergeLayers(layers);
  // Each layer passed alone; the merge only joins lists and replaces whole entries, so this holds too.
  const merged = settingsSchema.safeParse(settings, { reportInput: true });
  if (!merged.success) throw new SettingsError(describeIssues('settings', merged.error.issues, settingsSchema));
  return { settings: merged.data, provenance, files, warnings, untrusted, trusted };
}

/** The workspace as trust records name it: its real path. */
export function workspaceKey(cwd: string): string {
  try {
    return realpathSync(path.resolve(cwd));
  } catch {
    return path.resolve(cwd);
  }
}

function check(layer: SettingsLayer): void {
  const parsed = settingsSchema.safeParse(layer.values, { reportInput: true });
  if (!parsed.success) throw new SettingsError(describeIssues(layer.label, parsed.error.issues, settingsSchema));
}

/** The sources of the value at a key path (`maxTurns`, `budget.team.usd`), or of the nearest enclosing one. */
export function sourceOf(loaded: LoadedSettings, path: PropertyKey[]): string[] | undefined {
  for (let length = path.length; length > 0; length--) {
    const found = loaded.provenance.get(formatPath(path.slice(0, length)));
    if (found) return found;
  }
  return undefined;
}
