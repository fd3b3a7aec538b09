// Command prefixes the person allowed for good: in ask mode a command that starts with one runs
// without a question. The contract every backend keeps (settings/settings-allow-list.ts: the prefixes live
// in the settings files, read afresh on every check).

export interface AllowListEntries {
  entries: string[];
  /** Why a stored list was ignored (a broken file, say), and how to fix it. */
  error?: string;
}

export interface AllowList {
  /** The current prefixes; a broken store counts as empty and `error` says so. */
  read(): AllowListEntries;
  /** Adds prefixes (kept in order, no duplicates); returns those that were new. Refuses to overwrite a broken store. */
  add(prefixes: string[]): Promise<string[]>;
}
