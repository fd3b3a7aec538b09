// What a run changed in a git workspace: files with lines added and removed, and the commits made
// since the run began (on the current branch and on teammates' huddle/* branches). huddle's own
// state (.team/, .tasks/) is left out. Not a repository: undefined, and the record says so.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pinRepository, runGit } from '../git/host-git.js';

/** git's empty tree: the base of a repository that had no commit when the run began. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface FileChange {
  path: string;
  added: number;
  removed: number;
  /** Binary files have no line counts. */
  binary?: true;
}

export interface CommitRecord {
  sha: string;
  author: string;
  subject: string;
}

export interface GitChanges {
  base: string;
  files: FileChange[];
  added: number;
  removed: number;
  commits: CommitRecord[];
}

/** Read-only git in the pinned repository (runtime/git/host-git.ts): nothing it reads may run a program. */
async function git(cwd: string, args: string[]): Promise<string | undefined> {
  const pin = pinRepository(cwd);
  if (!pin) return undefined;
  const result = await runGit(cwd, args, { pin, env: { GIT_OPTIONAL_LOCKS: '0' }, maxBuffer: 16 * 1024 * 1024 });
  return result.code === 0 ? result.stdout : undefined;
}

const OWN_STATE = /^\.(team|tasks)\//;

/** Where the run starts from: HEAD, the empty tree in a repository without commits, undefined outside git. */
export async function gitBaseline(root: string): Promise<string | undefined> {
  const inside = await git(root, ['rev-parse', '--is-inside-work-tree']);
  if (inside?.trim() !== 'true') return undefined;
  const head = await git(root, ['rev-parse', '--verify', '-q', 'HEAD']);
  return head?.trim() || EMPTY_TREE;
}

export async function gitChanges(root: string, base: string): Promise<GitChanges | undefined> {
  const [numstat, untracked, log] = await Promise.all([
    git(root, ['diff', '--numstat', '--no-renames', '--no-ext-diff', '--no-textconv', '--ignore-submodules=all', base, '--']),
    git(root, ['ls-files', '--others', '--exclude-standard', '-z']),
    base === EMPTY_TREE
      ? git(root, ['log', '--format=%H%x09%an%x09%s', 'HEAD', '--branches=huddle/*'])
      : git(root, ['log', '--format=%H%x09%an%x09%s', 'HEAD', '--branches=huddle/*', `^${base}`]),
  ]);
  if (numstat === undefined) return undefined;
  const files = numstatFiles(numstat);
  for (const file of (untracked ?? '').split('\0')) {
    if (!file || OWN_STATE.test(file)) continue;
    files.push({ path: file, added: await lineCount(root, file), removed: 0 });
  }
  const commits = logCommits(log);
  return {
    base,
    files,
    added: files.reduce((sum, f) => sum + f.added, 0),
    removed: files.reduce((sum, f) => sum + f.removed, 0),
    commits,
  };
}

/** Lines of a new (untracked) file, as git counts them added: a last line without newline counts too. */
async function lineCount(root: string, file: string): Promise<number> {
  try {
    const bytes = await readFile(path.join(root, file));
    if (bytes.includes(0)) return 0; // binary
    let lines = 0;
    for (const byte of bytes) if (byte === 10) lines++;
    return bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? lines + 1 : lines;
  } catch {
    return 0;
  }
}

/** What a branch changed since it left `base` (`git diff base...branch`) and its commits (`base..branch`). */
export async function branchChanges(root: string, base: string, branch: string): Promise<Omit<GitChanges, 'base'> | undefined> {
  const [numstat, log] = await Promise.all([
    git(root, ['diff', '--numstat', '--no-renames', '--no-ext-diff', '--no-textconv', '--ignore-submodules=all', `${base}...${branch}`, '--']),
    git(root, ['log', '--format=%H%x09%an%x09%s', `${base}..${branch}`, '--']),
  ]);
  if (numstat === undefined) return undefined;
  const files = numstatFiles(numstat);
  const commits = logCommits(log);
  return { files, added: files.reduce((sum, f) => sum + f.added, 0), removed: files.reduce((sum, f) => sum + f.removed, 0), commits };
}

/** `git diff --numstat` lines as file changes (huddle's own state left out; a binary file counts no lines). */
function numstatFiles(numstat: string): FileChange[] {
  const files: FileChange[] = [];
  for (const line of numstat.split('\n')) {
    const [added, removed, file] = line.split('\t');
    if (!file || OWN_STATE.test(file)) continue;
    if (added === '-') files.push({ path: file, added: 0, removed: 0, binary: true });
    else files.push({ path: file, added: Number(added), removed: Number(removed) });
  }
  return files;
}

/** `git log --format=%H%x09%an%x09%s` lines as commits. */
function logCommits(log: string | undefined): GitChanges['commits'] {
  return (log ?? '')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [sha = '', author = '', ...subject] = line.split('\t');
      return { sha, author, subject: subject.join('\t') };
    });
}
