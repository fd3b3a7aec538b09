// openTeam(): a team session opened the way `huddle -p` opens one (the same settings, checks and
// stores: src/session), for a program instead of a command line.
import type { CliOptions } from '../session/cli-options.js';
import { openControl } from '../session/control-intents.js';
import { openSession } from '../session/open-session.js';
import { resolveSettings, StartupError } from '../session/settings.js';
import { HuddleError } from './errors.js';
import { Team } from './team.js';
import type { OpenTeamOptions } from './types.js';

/**
 * Opens the team in `options.workspace` (its files, or the PostgreSQL team `options.team`). Rejects
 * with a HuddleError (one line) when it cannot: no credentials, another live huddle on the team,
 * an unfinished team and neither `resume` nor `fresh`, settings that wait for the person's trust.
 */
export async function openTeam(options: OpenTeamOptions): Promise<Team> {
  const cli: CliOptions = {
    prompt: undefined,
    json: false,
    resume: options.resume ?? false,
    fresh: options.fresh ?? false,
    cwd: options.workspace,
    model: options.model,
    apiKeyFile: options.apiKeyFile,
    maxTurns: options.maxTurns,
    permissionMode: options.permissionMode,
    command: undefined,
    ...(options.budget ? { budget: options.budget } : {}),
    ...(options.team ? { team: options.team } : {}),
    ...(options.trust ? { trust: true } : {}),
    ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.appendSystemPrompt ? { appendSystemPrompt: options.appendSystemPrompt } : {}),
  };
  try {
    const settings = await resolveSettings(cli, { missingKey: 'refuse' });
    // With neither `resume` nor `fresh`, an unfinished team is refused: a program has nobody to ask.
    const session = await openSession(settings, { fresh: cli.fresh, resume: cli.resume, unfinished: 'refuse' });
    if (session === 'quit') throw new HuddleError('the team was not opened');
    // `huddle status/send/interrupt` from a shell reach a program's team as they reach `huddle -p`.
    await openControl(session, 'library');
    // In ask mode the program is the person who answers (waitingForYou, approve); otherwise, as for `huddle -p`,
    // nobody is asked: a budget stop ends the run instead of waiting.
    if (options.permissionMode === 'ask') {
      const detach = session.attachPerson();
      session.closeWith(async () => detach());
    }
    return Team.fromSession(session);
  } catch (error) {
    if (error instanceof StartupError) throw new HuddleError(error.message.replace(/--(resume|fresh|trust)\b/g, '$1: true'));
    throw error;
  }
}
