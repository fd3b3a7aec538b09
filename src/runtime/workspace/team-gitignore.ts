// `.team/.gitignore` (docs/contract.md#on-disk): huddle's runtime state (the roster, inboxes, logs, spend,
// worktrees, archives, personal settings) never gets committed by accident, while what a team
// shares — its settings and its roles — does. Written once when missing; a person's edits stay.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR_MODE } from '../fs/private-modes.js';

export const TEAM_GITIGNORE = `# Written by huddle: its runtime state stays out of git; the team's settings and roles go in.
# Edit freely: huddle only writes this file when it is missing.
*
!.gitignore
!settings.json
!budget.json
!roles/
!roles/**
`;

export function ensureTeamGitignore(teamDir: string): void {
  const file = path.join(teamDir, '.gitignore');
  if (existsSync(file)) return;
  try {
    mkdirSync(teamDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    writeFileSync(file, TEAM_GITIGNORE, { flag: 'wx' });
  } catch (error) {
    // Another huddle wrote it first, or the directory is read-only: neither stops the team.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' && (error as NodeJS.ErrnoException).code !== 'EACCES') throw error;
  }
}
