// The ask-mode allow-list on settings: what every settings file (and the deprecated .team/allow.json)
// allows, read afresh on each check so a hand edit applies at once; the person's "always allow"
// answers are added to .team/settings.local.json (personal, not committed), keeping its other keys.
// It implements the AllowList store interface; the file backend opens the team with it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../fs/atomic-file.js';
import type { AllowList, AllowListEntries } from '../store/allow-list.js';
import { withFileLock } from '../store/file-lock.js';
import { SettingsError } from './errors.js';
import { isUserFile, readSettingsFile, settingsFiles, type ReadLayer, type SettingsFile, type SettingsLocations } from './files.js';
import { workspaceKey } from './load.js';
import { describeKeys, TrustStore, wideningKeys } from './trust.js';
import { isPlainObject } from './layers.js';

export class SettingsAllowList implements AllowList {
  constructor(readonly locations: SettingsLocations) {}

  #store(): TrustStore {
    return TrustStore.at(this.locations.env ?? process.env, this.locations.home);
  }

  /** The user's file, a file that widens nothing, or one whose content the person trusted. */
  #trusted(file: SettingsFile, read: ReadLayer): boolean {
    if (isUserFile(file) || !read.layer || !wideningKeys(read.layer.values).length) return true;
    return this.#store().isTrusted(workspaceKey(this.locations.cwd), read.layer.label, read.sha256 ?? '');
  }

  read(): AllowListEntries {
    const entries: string[] = [];
    const problems: string[] = [];
    for (const file of settingsFiles(this.locations)) {
      try {
        const read = readSettingsFile(file, this.locations.cwd);
        if (file.kind === 'legacy-allow') problems.push(...read.warnings.filter((warning) => warning.includes('is ignored')));
        // A workspace file's allow-list counts once the person trusted the file (docs/trust.md).
        if (!this.#trusted(file, read)) continue;
        const allow = (read.layer?.values.permissions as { allow?: string[] } | undefined)?.allow ?? [];
        for (const prefix of allow) if (!entries.includes(prefix)) entries.push(prefix);
      } catch (error) {
        if (!(error instanceof SettingsError)) throw error;
        problems.push(`${error.message}; its allowed commands are ignored until it is fixed`);
      }
    }
    return problems.length ? { entries, error: problems.join('; ') } : { entries };
  }

  /** Adds prefixes to .team/settings.local.json; returns those that were new. Refuses to overwrite a broken file. */
  add(prefixes: string[]): Promise<string[]> {
    const file = path.join(this.locations.cwd, '.team', 'settings.local.json');
    return withFileLock(file, async () => {
      const current = readLocal(file);
      const local = { label: LOCAL, path: file, kind: 'local' as const };
      // The person's own answers keep the file trusted, when it was (nothing else is laundered in).
      const wasTrusted = this.#trusted(local, readSettingsFile(local));
      const known = new Set(this.read().entries);
      const added = prefixes.filter((prefix) => prefix.trim() && !known.has(prefix) && (known.add(prefix), true));
      if (!added.length) return [];
      const permissions = isPlainObject(current.permissions) ? current.permissions : {};
      const allow = Array.isArray(permissions.allow) ? (permissions.allow as string[]) : [];
      await writeJsonAtomic(file, { ...current, permissions: { ...permissions, allow: [...allow, ...added] } });
      if (wasTrusted) {
        const after = readSettingsFile(local);
        const settings = after.layer ? describeKeys(wideningKeys(after.layer.values)) : [];
        this.#store().record(workspaceKey(this.locations.cwd), [{ file: LOCAL, sha256: after.sha256 ?? '', settings }]);
      }
      return added;
    });
  }
}

const LOCAL = '.team/settings.local.json';

function readLocal(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  if (!text.trim()) return {};
  // The same check every load makes: a broken file is reported, never overwritten.
  const read = readSettingsFile({ label: '.team/settings.local.json', path: file, kind: 'local' });
  return read.layer?.values ?? {};
}
