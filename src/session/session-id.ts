// The session id a stream-json run reports (Claude Code's `session_id`): kept with the team in
// .team/session-id, so `--continue` reports the same id, `--resume ID` finds the team it names,
// and `--fork-session` gives the continued team a new one.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CliOptions } from './cli-options.js';

const FILE = 'session-id';

export function storedSessionId(teamDir: string): string | undefined {
  try {
    return readFileSync(path.join(teamDir, FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function storeSessionId(teamDir: string, id: string): void {
  mkdirSync(teamDir, { recursive: true });
  writeFileSync(path.join(teamDir, FILE), `${id}\n`, { mode: 0o600 });
}

/** This run's id, or the one-line reason it cannot be chosen (`--resume ID` of another session). */
export function chooseSessionId(
  teamDir: string,
  options: Pick<CliOptions, 'sessionId' | 'resumeId' | 'resume' | 'forkSession'>,
): { id: string } | { error: string } {
  const stored = storedSessionId(teamDir);
  if (options.resumeId && options.resumeId !== stored) {
    return {
      error: `no session ${options.resumeId} in this workspace${stored ? ` (its team is session ${stored}; --continue resumes it)` : ' (no team has run here with a session id)'}`,
    };
  }
  if (options.resume && !options.forkSession && stored) return { id: stored };
  return { id: options.sessionId ?? randomUUID() };
}
