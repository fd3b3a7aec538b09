// The team in a workspace opened to be continued (never archived, never asked about): what
// `huddle best-of` and `huddle workflow run` build on, since their progress lives on the team's board.
import { scrub } from '../runtime/secrets.js';
import type { CliOptions } from './cli-options.js';
import { openSession } from './open-session.js';
import { resolveSettings, StartupError } from './settings.js';
import type { TeamSession } from './team-session.js';

export interface ContinueFlags {
  cwd?: string | undefined;
  /** A team URL (`--team postgres://…`); the workspace's files otherwise. */
  team?: string | undefined;
  trust?: boolean | undefined;
}

/** The session, 'quit', or the one line (secrets scrubbed) saying why it cannot open. */
export async function continueTeam(flags: ContinueFlags): Promise<TeamSession | 'quit' | { error: string }> {
  const options: CliOptions = {
    prompt: undefined,
    json: false,
    resume: true,
    fresh: false,
    cwd: flags.cwd,
    model: undefined,
    apiKeyFile: undefined,
    maxTurns: undefined,
    command: undefined,
    ...(flags.team ? { team: flags.team } : {}),
    ...(flags.trust ? { trust: true } : {}),
  };
  let secrets: string[] = [];
  try {
    const settings = await resolveSettings(options, { missingKey: 'refuse' });
    secrets = settings.secrets;
    return await openSession(settings, { resume: true, unfinished: 'refuse' });
  } catch (error) {
    if (error instanceof StartupError) return { error: scrub(error.message, secrets) };
    throw error;
  }
}
