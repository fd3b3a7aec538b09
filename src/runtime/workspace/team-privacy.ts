// `.team/` is the person's: logs, transcripts, inboxes, the board, run records, local settings,
// the control pointer. New entries are made owner-only (fs/private-modes.ts); this puts an existing
// tree right at the start of a session, so a .team/ an older huddle (or a 0022 umask) left 0644 is
// private from now on. What a team commits and shares stays as it is: .gitignore, settings.json,
// budget.json and roles/ (the directory holding them, .team/ itself, is 0700 all the same).
// Teammates' worktrees are checkouts of the project: their files keep git's modes, only the
// directories that hold them are made private. Links are never followed (docs/trust.md).
import { chmodSync, lstatSync, readdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../fs/private-modes.js';

/** Entries of .team/ meant to be committed and shared. */
export const SHARED_TEAM_ENTRIES: readonly string[] = ['.gitignore', 'settings.json', 'budget.json', 'roles'];

/** Checkouts of the project, not huddle's own state. */
const CHECKOUTS = 'worktrees';

/** Makes `teamDir` and what it holds owner-only (see above); quiet when it does not exist or cannot be changed. */
export function makeTeamDirPrivate(teamDir: string): void {
  const top = statOf(teamDir);
  if (!top?.isDirectory()) return;
  restrict(teamDir, top);
  let names: string[];
  try {
    names = readdirSync(teamDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (SHARED_TEAM_ENTRIES.includes(name)) continue;
    const full = path.join(teamDir, name);
    if (name === CHECKOUTS) {
      const info = statOf(full);
      if (info?.isDirectory()) {
        restrict(full, info);
        for (const agent of list(full)) {
          const inner = statOf(path.join(full, agent));
          if (inner?.isDirectory()) restrict(path.join(full, agent), inner);
        }
      }
      continue;
    }
    walk(full);
  }
}

function walk(file: string): void {
  const info = statOf(file);
  if (!info || info.isSymbolicLink()) return;
  restrict(file, info);
  if (info.isDirectory()) for (const name of list(file)) walk(path.join(file, name));
}

function restrict(file: string, info: Stats): void {
  const wanted = info.isDirectory() ? PRIVATE_DIR_MODE : info.isFile() ? PRIVATE_FILE_MODE : undefined;
  if (wanted === undefined || (info.mode & 0o777) === wanted) return;
  try {
    chmodSync(file, wanted);
  } catch {
    // Not ours (another user's file in a shared checkout): left as it is.
  }
}

function statOf(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
