// Loads the effective settings of a workspace: defaults, then each file, then environment
// variables, then flags, each checked against the one schema on its own so that an error names
// the source that holds the mistake.
import { describeIssues, formatPath, SettingsError } from './errors.js';
import { environmentLayers } from './env.js';
import { readSettingsFile, settingsFiles, type SettingsFile, type SettingsLocations } from './files.js';
import { flagLayers, type SettingsFlags } from './flags.js';
import { settingsDefaults } from './json-schema.js';
import { mergeLayers, type Provenance, type SettingsLayer } from './layers.js';
import { settingsSchema, type Settings } from './schema.js';

export const DEFAULT_SOURCE = 'default';

export interface LoadSettingsOptions extends SettingsLocations {
  flags?: SettingsFlags;
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
}

/** Throws SettingsError, whose message is the one line to show (exit code 2 headless). */
export function loadSettings(options: LoadSettingsOptions): LoadedSettings {
  const env = options.env ?? process.env;
  const layers: SettingsLayer[] = [{ label: DEFAULT_SOURCE, values: settingsDefaults() }];
  const files: SettingsFile[] = [];
  const warnings: string[] = [];
  for (const file of settingsFiles({ ...options, env })) {
    const read = readSettingsFile(file);
    warnings.push(...read.warnings);
    if (!read.layer) continue;
    files.push(file);
    layers.push(read.layer);
  }
  for (const layer of [...environmentLayers(env), ...flagLayers(options.flags ?? {})]) {
    check(layer);
    layers.push(layer);
  }
  const { settings, provenance } = mergeLayers(layers);
  // Each layer passed alone; the merge only joins lists and replaces whole entries, so this holds too.
  const merged = settingsSchema.safeParse(settings, { reportInput: true });
  if (!merged.success) throw new SettingsError(describeIssues('settings', merged.error.issues, settingsSchema));
  return { settings: merged.data, provenance, files, warnings };
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
