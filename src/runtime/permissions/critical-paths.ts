// Which paths a destructive command must never get: `/`, system directories, home directories and,
// by scope, the workspace, what holds it, its .git and huddle's state; for a teammate in its own
// checkout also the main checkout, its .git, huddle's state there and the other teammates' checkouts.
import path from 'node:path';
import { SYSTEM_DIRS } from './policy-tables.js';
import type { Word } from './shell-syntax.js';

export interface PathOptions {
  root: string;
  home: string;
  teamRoot: string | undefined;
}

export class CriticalPaths {
  readonly #options: PathOptions;
  readonly #resolve: (word: Word, text: string) => string | undefined;

  constructor(options: PathOptions, resolve: (word: Word, text: string) => string | undefined) {
    this.#options = options;
    this.#resolve = resolve;
  }

  /**
   * What a path word names that must never be deleted or given away wholesale, if anything:
   * `/`, a system directory, a home directory; with scope `state` also the repository and huddle's
   * state (.git, .team, .tasks, what holds the workspace); with `all` the workspace itself too.
   * For a teammate in its own checkout the main checkout counts as its workspace: the main
   * checkout, its .git, huddle's state there and the other teammates' checkouts.
   */
  critical(word: Word, scope: 'all' | 'state' | 'none' = 'all'): string | undefined {
    const direct = this.#criticalText(word, word.text, scope);
    if (direct) return direct;
    if (word.dynamic && word.emptyText !== word.text) {
      const empty = this.#criticalText(word, word.emptyText, scope);
      if (empty) return `${empty} if ${word.raw.match(/\$\{?\w+\}?|\$\(.*\)|`.*`/)?.[0] ?? 'a variable'} is empty`;
    }
    return undefined;
  }

  #criticalText(word: Word, text: string, scope: 'all' | 'state' | 'none'): string | undefined {
    if (!text) return undefined;
    if (word.tilde && /^~[^/]+/.test(text)) return `another user's home directory (${text})`;
    let p = text;
    let everything = false;
    for (;;) {
      if (/(^|\/)[.*]*\*[.*]*$/.test(p) && p !== '*' && p !== '.*' && p.includes('/')) {
        p = p.replace(/\/[^/]*$/, '') || '/';
        everything = true;
      } else if (/^[.*]*\*[.*]*$/.test(p)) {
        p = '.';
        everything = true;
      } else if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
      else if (p.length > 2 && p.endsWith('/.')) p = p.slice(0, -2);
      else break;
    }
    const where = this.#resolve(word, p);
    if (where === undefined) return undefined;
    const label = everything ? `everything in ${where}` : where;
    const { root, home, teamRoot } = this.#options;
    if (where === '/') return `the root directory (${text})`;
    const depthOne = /^\/[^/]+$/.test(where);
    if (SYSTEM_DIRS.has(where) || (depthOne && word.glob)) return `the system directory ${label}`;
    if (where === home || /^\/(home|Users)\/[^/]+$/.test(where)) return `a home directory (${label})`;
    if (scope === 'none') return undefined;
    if (root.startsWith(`${where}/`)) return `a directory that holds the workspace (${label})`;
    const teammate = teamRoot !== undefined && teamRoot !== root;
    // A teammate's own checkout and git dir (beside it) are its own to clean.
    const own = (p: string) => teammate && [root, `${root}.git`].some((mine) => p === mine || p.startsWith(`${mine}/`));
    for (const base of teamRoot && teamRoot !== root ? [root, teamRoot] : [root]) {
      const inBase = path.relative(base, where);
      if (inBase.startsWith('..') || path.isAbsolute(inBase)) continue;
      const main = teammate && base === teamRoot;
      if (inBase === '') {
        if (main) return `the main checkout (${label})`;
        if (scope === 'all') return `the workspace (${label})`;
        continue;
      }
      const [first] = inBase.split(path.sep);
      if (first === '.git' && (inBase === '.git' || main)) return `${main ? "the main checkout's" : "the workspace's"} git history (${text})`;
      if ((first === '.team' || first === '.tasks') && !own(where)) {
        return /^\.team\/worktrees\/[^/]+/.test(inBase) ? `a teammate's checkout (${text})` : `huddle's own state (${text})`;
      }
    }
    return undefined;
  }
}
