// Workspace paths and confinement. Every file tool resolves its paths here so that
// `..` and symlinks cannot lead an agent outside the directory it was given.
import { existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { gitDataFor } from '../sandbox/git-dirs.js';
import { ownConfigDir } from './config-paths.js';

/** What sandboxed commands of an agent working here may write. */
export interface SandboxRoots {
  /** Directories commands may write: the root and the git data `git commit` needs. */
  writable: string[];
  /** Inside them, paths that stay read-only (huddle's team state, the repository's config and hooks). */
  readOnly: string[];
  /** Directories outside them that commands must be able to read (a clone's borrowed objects). */
  readable?: string[];
}

export class PathEscapeError extends Error {
  constructor(requested: string, root: string) {
    super(`path '${requested}' is outside the workspace (${root}); use a path inside it`);
    this.name = 'PathEscapeError';
  }
}

/**
 * realpath(3) in one call on Linux, where it keeps each name as given; elsewhere node's own walk, since
 * macOS's realpath(3) answers with the case stored on disk and the root and the paths under it must agree.
 */
const realPath = process.platform === 'linux' ? realpathSync.native : realpathSync;

export class Workspace {
  /** The real (symlink-free) absolute path of the root. */
  readonly root: string;
  #sandbox: SandboxRoots | undefined;
  /** Run after each command an agent ran here (a teammate's checkout mirrors its branch). */
  afterCommand: (() => Promise<void>) | undefined;

  /** `sandbox`: given for a teammate's own checkout (its directory and git dir); found out otherwise. */
  constructor(root: string, sandbox?: SandboxRoots) {
    this.root = realPath(path.resolve(root));
    this.#sandbox = sandbox;
  }

  /** Where this agent's commands may write. Found once: the root, its repository's git data, minus team state. */
  sandboxRoots(): SandboxRoots {
    if (!this.#sandbox) {
      const git = gitDataFor(this.root);
      // .claude/ holds Claude Code's settings, whose deny rules apply without trust: no command may rewrite them.
      const state = [this.teamDir, this.tasksDir, path.join(this.root, '.claude')].filter((p) => existsSync(p));
      // Run in a directory that holds huddle's config (~), commands must not write its settings or trust records.
      const config = ownConfigDir();
      if (isInside(this.root, config)) {
        mkdirSync(config, { recursive: true, mode: 0o700 });
        state.push(config);
      }
      this.#sandbox = { writable: [this.root, ...git.writable], readOnly: [...state, ...git.readOnly] };
    }
    return this.#sandbox;
  }

  /** State directories of the team, inside the workspace. */
  get teamDir(): string {
    return path.join(this.root, '.team');
  }
  get tasksDir(): string {
    return path.join(this.root, '.tasks');
  }

  /**
   * Resolves `requested` (relative to the root, or absolute) and refuses it when it, or
   * any existing part of it, lies outside the root once symlinks are followed.
   */
  resolve(requested: string): string {
    const absolute = path.resolve(this.root, requested);
    if (!isInside(this.root, absolute)) throw new PathEscapeError(requested, this.root);
    const real = realTarget(absolute, 0);
    if (!isInside(this.root, real)) throw new PathEscapeError(requested, this.root);
    return real;
  }

  /** A path relative to the root, for messages and tool output. */
  relative(absolute: string): string {
    return path.relative(this.root, absolute) || '.';
  }
}

/**
 * The path with every symlink followed, also through parts that do not exist yet and through
 * dangling links (whose target a write would create).
 */
function realTarget(absolute: string, depth: number): string {
  if (depth > 40) throw new Error(`too many levels of symbolic links in '${absolute}'`);
  let existing = absolute;
  const rest: string[] = [];
  for (;;) {
    // A name that is not there (a new file's, the usual case) is neither resolved nor a link: its parent next,
    // asked without an exception, each of which costs more than the lookup.
    if (presentName(existing)) {
      try {
        return path.join(realPath(existing), ...rest.reverse());
      } catch {
        const link = danglingLinkTarget(existing);
        if (link !== undefined) return realTarget(path.join(link, ...rest.reverse()), depth + 1);
      }
    }
    const parent = path.dirname(existing);
    if (parent === existing) return absolute;
    rest.push(path.basename(existing));
    existing = parent;
  }
}

/** Whether `p` names something (a link included, dangling or not); false when it or a directory on its way is missing or unreadable. */
function presentName(p: string): boolean {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // not a directory on the way, no permission: resolved from the parent, as before
  }
}

function danglingLinkTarget(p: string): string | undefined {
  try {
    if (!lstatSync(p).isSymbolicLink()) return undefined;
    return path.resolve(path.dirname(p), readlinkSync(p));
  } catch {
    return undefined;
  }
}

/** `..foo.txt` is a name inside the root; only `..` itself, or `../…`, leaves it. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
