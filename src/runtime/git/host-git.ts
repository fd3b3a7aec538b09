// Every git process huddle itself starts goes through here (docs/trust.md, "huddle's own git").
// Agents write the workspace and most of its git dir, and git can be made to run a program from
// what it reads there (a planted `commondir` whose config sets core.fsmonitor, a config.worktree,
// a filter named in .gitattributes and defined in an included workspace file). So huddle's git
// gets: an environment of plain variables only (no key, token or database URL to steal), no
// system config, the repository's git dir and common dir pinned to what huddle resolved itself
// (a planted `commondir` or `.git` gitfile is not followed), and every setting that runs a program
// turned off on its command line, plus any such setting read from a file an agent could write.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A repository as huddle resolved it: git's own discovery, checked against the rules git writes by. */
export interface PinnedRepo {
  /** The directory it was resolved from. */
  root: string;
  gitDir: string;
  commonDir: string;
  workTree: string;
  /** Set when discovery followed a `commondir` git never writes there (it is not used). */
  ignoredCommondir?: string;
}

/** Variables git may see: where things are, language, time, identity. Never a secret. */
const ENV_ALLOWED = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
]);

/** Never a prompt, an editor or a pager: no one is at git's terminal, and none may be chosen by a file. */
const ENV_FIXED: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  GIT_MERGE_AUTOEDIT: 'no',
  GIT_PAGER: 'cat',
  GIT_PROTOCOL_FROM_USER: '0',
};

/** The environment huddle's git runs with (plus GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE when pinned). */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && (ENV_ALLOWED.has(key) || key.startsWith('LC_'))) env[key] = value;
  }
  return { ...env, ...ENV_FIXED };
}

/**
 * Settings that run a program, switched off on the command line (which outranks every config
 * file). Filters, diff and merge drivers have names of their own: those read from a file an agent
 * could write are switched off by untrustedPrograms().
 */
export const NO_PROGRAMS: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.sshCommand=',
  'core.askPass=',
  'core.editor=true',
  'sequence.editor=true',
  'core.pager=cat',
  'core.alternateRefsCommand=',
  'diff.external=',
  'credential.helper=',
  'protocol.allow=never',
  'protocol.file.allow=always',
  'submodule.recurse=false',
  'diff.ignoreSubmodules=all',
  'fetch.recurseSubmodules=false',
  'status.submoduleSummary=false',
  'gc.auto=0',
  'maintenance.auto=false',
  // Output huddle parses stays git's plain output (a signature check would also run gpg).
  'log.showSignature=false',
  'color.ui=false',
].flatMap((setting) => ['-c', setting]);

const pins = new Map<string, PinnedRepo>();

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * The repository at `root`, resolved once per process (a session does it as it opens, before any
 * agent runs); undefined outside git. Discovery is git's own, with nothing it could run; a common
 * dir is taken from a `commondir` file only where git writes one (a linked worktree's
 * `<common>/worktrees/<id>`), else the git dir is its own common dir.
 */
export function pinRepository(root: string): PinnedRepo | undefined {
  const key = real(root);
  const known = pins.get(key);
  if (known) return known;
  // Nothing git's discovery could find (no `.git` here or above, nor a git dir itself): no git run to say so.
  if (!nearestCheckout(key) && !insideGitDir(key)) return undefined;
  let pin = discover(key);
  // git skips a `.git` whose commondir leads nowhere and goes on upward (to a repository around
  // this one): the nearest `.git` is the workspace's own.
  const near = nearestCheckout(key);
  if (!pin || (near && real(near) !== pin.workTree && inside(pin.workTree, real(near)))) pin = discoverPastCommondir(key) ?? pin;
  if (!pin) return undefined; // not a repository (or bare): not pinned, asked again next time
  pins.set(key, pin);
  return pin;
}

function revParse(cwd: string, env: Record<string, string>): string[] | undefined {
  const result = spawnSync('git', [...NO_PROGRAMS, 'rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel'], {
    cwd,
    encoding: 'utf8',
    timeout: 10_000,
    env,
  });
  if (result.status !== 0) return undefined;
  const lines = result.stdout.split('\n').map((line) => line.trim());
  return lines[0] && lines[1] && lines[2] ? lines.slice(0, 3) : undefined;
}

/** git's own discovery, its common dir checked against where git writes a `commondir`. */
function discover(key: string): PinnedRepo | undefined {
  const found = revParse(key, gitEnv());
  if (!found) return undefined;
  const [gitDir, commonDir, workTree] = found as [string, string, string];
  const pin: PinnedRepo = { root: key, gitDir: real(gitDir), commonDir: real(commonDir), workTree: real(workTree) };
  const expected = expectedCommonDir(pin.gitDir);
  if (pin.commonDir !== expected) {
    pin.ignoredCommondir = pin.commonDir;
    pin.commonDir = expected;
    // A planted config could have moved the work tree too: the nearest `.git` upward is git's rule.
    pin.workTree = nearestCheckout(key) ?? pin.workTree;
  }
  return pin;
}

/** A `commondir` pointing at no repository makes git's discovery fail: the nearest `.git` without it. */
function discoverPastCommondir(key: string): PinnedRepo | undefined {
  const top = nearestCheckout(key);
  if (!top) return undefined;
  const dotGit = path.join(top, '.git');
  let gitDir = dotGit;
  try {
    if (!lstatSync(dotGit).isDirectory()) {
      const target = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
      if (!target) return undefined;
      gitDir = path.resolve(top, target);
    }
  } catch {
    return undefined;
  }
  const commondir = path.join(gitDir, 'commondir');
  if (!existsSync(commondir)) return undefined;
  gitDir = real(gitDir);
  const commonDir = expectedCommonDir(gitDir);
  const found = revParse(key, { ...gitEnv(), GIT_DIR: gitDir, GIT_COMMON_DIR: commonDir, GIT_WORK_TREE: top });
  if (!found) return undefined;
  let ignored: string;
  try {
    ignored = path.resolve(gitDir, readFileSync(commondir, 'utf8').trim());
  } catch {
    ignored = commondir;
  }
  return { root: key, gitDir, commonDir: real(commonDir), workTree: real(top), ignoredCommondir: ignored };
}

/** Where git's own commands put a git dir's common dir. */
export function expectedCommonDir(gitDir: string): string {
  const parent = path.dirname(gitDir);
  if (path.basename(parent) === 'worktrees' && existsSync(path.join(gitDir, 'gitdir'))) return path.dirname(parent);
  return gitDir;
}

/** `from` or a directory above it looks like a git dir (HEAD, objects, refs: git's own test), as a bare repository does. */
function insideGitDir(from: string): boolean {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects')) && existsSync(path.join(dir, 'refs'))) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

function nearestCheckout(from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** For tests: forget what was resolved. */
export function forgetPinnedRepositories(): void {
  pins.clear();
}

/** The variables that hold git to the pinned repository. */
export function pinnedEnv(pin: PinnedRepo): Record<string, string> {
  return { GIT_DIR: pin.gitDir, GIT_COMMON_DIR: pin.commonDir, GIT_WORK_TREE: pin.workTree };
}

/** The last part of a config key that names a program to run (filters, drivers, helpers, hooks). */
const PROGRAM_LEAVES = new Set([
  'clean',
  'smudge',
  'process',
  'textconv',
  'command',
  'driver',
  'cmd',
  'program',
  'helper',
  'fsmonitor',
  'hookspath',
  'sshcommand',
  'gitproxy',
  'editor',
  'askpass',
  'alternaterefscommand',
  'external',
  'packobjectshook',
  'uploadpack',
  'receivepack',
  'defaultkeycommand',
]);

export interface ConfigEntry {
  scope: string;
  /** The file it came from (absolute), or undefined for the command line. */
  file: string | undefined;
  key: string;
  value: string;
}

/** `git config --list --show-scope --show-origin -z`, parsed. */
export function parseConfigList(out: string, cwd: string): ConfigEntry[] {
  const fields = out.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const scope = fields[i]!;
    const origin = fields[i + 1]!;
    const pair = fields[i + 2]!;
    const cut = pair.indexOf('\n');
    const key = (cut < 0 ? pair : pair.slice(0, cut)).toLowerCase();
    const value = cut < 0 ? '' : pair.slice(cut + 1);
    const file = origin.startsWith('file:') ? path.resolve(cwd, origin.slice('file:'.length)) : undefined;
    entries.push({ scope, file, key, value });
  }
  return entries;
}

function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * `-c key=` for every program setting read from a file an agent could write: anything in the work
 * tree or the git dirs other than the common dir's own `config` (which the sandbox keeps
 * read-only), and a worktree-scoped config. A filter or driver named there is switched off whole.
 */
export function untrustedPrograms(entries: ConfigEntry[], where: PinnedRepo | { checkout: string }): string[] {
  const out = new Set<string>();
  for (const entry of entries) {
    if (entry.file === undefined) continue;
    const file = real(entry.file);
    let writable: boolean;
    if ('checkout' in where) {
      // A teammate's checkout: all of its repository's config is the teammate's.
      writable = entry.scope === 'local' || entry.scope === 'worktree' || inside(real(where.checkout), file);
    } else {
      const trustedFile = path.join(where.commonDir, 'config');
      writable =
        entry.scope === 'worktree' || (file !== trustedFile && [where.workTree, where.gitDir, where.commonDir, where.root].some((dir) => inside(dir, file)));
    }
    if (!writable) continue;
    const parts = entry.key.split('.');
    const leaf = parts.at(-1)!;
    if (!PROGRAM_LEAVES.has(leaf)) continue;
    if (parts.length >= 3 && ['filter', 'diff', 'merge'].includes(parts[0]!)) {
      const driver = `${parts[0]}.${parts.slice(1, -1).join('.')}`;
      const leaves = parts[0] === 'filter' ? ['clean', 'smudge', 'process'] : parts[0] === 'diff' ? ['command', 'textconv'] : ['driver'];
      for (const l of leaves) out.add(`${driver}.${l}=`);
      if (parts[0] === 'filter') out.add(`${driver}.required=false`);
    } else {
      out.add(`${entry.key}=`);
    }
  }
  return [...out].flatMap((setting) => ['-c', setting]);
}

export interface RunGitOptions {
  /** The repository to hold git to; without it git finds its repository from `cwd` (a fresh clone). */
  pin?: PinnedRepo | undefined;
  /** A teammate's checkout: every program setting in its own config is switched off. */
  checkout?: boolean;
  /** Extra variables (GIT_OPTIONAL_LOCKS for a read). */
  env?: Record<string, string>;
  maxBuffer?: number;
}

// execa (~135 KB with its dependencies) is loaded by the first git call that reads the config, not at start:
// outside a git repository a headless run reaches its first model request without it; in one, the
// checkpoint store's first call loads it (docs/architecture.md#import-rules).
const loadExeca = () => import('execa');

async function configOverrides(cwd: string, options: RunGitOptions, env: Record<string, string>): Promise<string[]> {
  const where = options.pin ?? (options.checkout ? { checkout: cwd } : undefined);
  if (!where) return [];
  const { execa } = await loadExeca();
  const listed = await execa('git', [...NO_PROGRAMS, 'config', '--list', '--show-scope', '--show-origin', '-z'], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  if (listed.exitCode !== 0) return [];
  return untrustedPrograms(parseConfigList(String(listed.stdout ?? ''), cwd), where);
}

/** The full command line and environment of one of huddle's git calls (what the unit tests check). */
export async function gitCommand(cwd: string, args: string[], options: RunGitOptions = {}): Promise<{ args: string[]; env: Record<string, string> }> {
  const env = { ...gitEnv(), ...(options.pin ? pinnedEnv(options.pin) : {}), ...options.env };
  const overrides = await configOverrides(cwd, options, env);
  // The fixed list comes last: on the command line the last setting of a key wins.
  return { args: [...overrides, ...NO_PROGRAMS, ...args], env };
}

/** Runs git for huddle itself (not in the sandbox): see the top of this file. */
export async function runGit(cwd: string, args: string[], options: RunGitOptions = {}): Promise<GitResult> {
  const command = await gitCommand(cwd, args, options);
  const { execa } = await loadExeca();
  const result = await execa('git', command.args, {
    cwd,
    env: command.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
    maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
  });
  // -1: git itself could not be started (not installed).
  if (typeof result.exitCode !== 'number') return { code: -1, stdout: '', stderr: result.shortMessage ?? 'not found' };
  return { code: result.exitCode, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
}
