// One watcher over one directory, for the file backend's inboxes, task board and roster: fs.watch,
// with the events of a burst gathered into one call (debounce), and a slow poll instead when
// fs.watch fails (out of inotify watches, a network file system). It keeps the process alive only
// while someone waits on it (`keepAlive`), so an idle team does not hold a script open.
import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { PRIVATE_DIR_MODE } from './private-modes.js';

export interface DirectoryWatcherOptions {
  /** Names in the directory worth reporting (temp files, locks and cursors usually are not). */
  accept(name: string): boolean;
  /**
   * Called once per burst with the accepted names that changed, or with `undefined` when anything
   * may have changed (fs.watch gave no name, or the poll ticked): then look at everything.
   */
  onChange(names: string[] | undefined): void;
  /** fs.watch failed and the watcher polls instead; says why, once. */
  onFallback?(message: string): void;
  debounceMs: number;
  /** How often to look when fs.watch is not available. */
  pollMs: number;
}

export class DirectoryWatcher {
  readonly dir: string;
  readonly #options: DirectoryWatcherOptions;
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;
  readonly #pending = new Set<string>();
  #everything = false;
  #keepAlive = false;
  #closed = false;

  constructor(dir: string, options: DirectoryWatcherOptions) {
    this.dir = dir;
    this.#options = options;
    try {
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const watcher = watch(dir, (_event, name) => this.#onEvent(name === null ? undefined : String(name)));
      watcher.on('error', (error) => this.#fallBack(error));
      this.#watcher = watcher;
    } catch (error) {
      this.#fallBack(error as Error);
    }
    this.#applyKeepAlive();
  }

  /** True while fs.watch failed and the directory is polled instead. */
  get polling(): boolean {
    return this.#poll !== undefined;
  }

  /** Whether the watcher holds the process open (someone is waiting on what it reports). */
  keepAlive(active: boolean): void {
    this.#keepAlive = active;
    this.#applyKeepAlive();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#poll) clearInterval(this.#poll);
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#poll = this.#debounce = undefined;
  }

  #onEvent(name: string | undefined): void {
    if (this.#closed) return;
    if (name === undefined) this.#everything = true;
    else if (this.#options.accept(name)) this.#pending.add(name);
    else return;
    this.#debounce ??= setTimeout(() => this.#flush(), this.#options.debounceMs);
  }

  #flush(): void {
    this.#debounce = undefined;
    const names = this.#everything ? undefined : [...this.#pending];
    this.#pending.clear();
    this.#everything = false;
    if (!this.#closed) this.#options.onChange(names);
  }

  #fallBack(error: Error): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#closed || this.#poll) return;
    this.#options.onFallback?.(`cannot watch ${this.dir} (${error.message}); checking it every ${this.#options.pollMs} ms instead`);
    this.#poll = setInterval(() => this.#onEvent(undefined), this.#options.pollMs);
    this.#applyKeepAlive();
  }

  #applyKeepAlive(): void {
    for (const handle of [this.#watcher, this.#poll]) {
      if (!handle) continue;
      if (this.#keepAlive) handle.ref();
      else handle.unref();
    }
  }
}
