// `huddle worker --team URL --cwd DIR --slots N` (docs/contract.md#command-line): a host for up to N teammates of
// a team on PostgreSQL, working in its own checkout DIR. A thin face over the session core: it
// joins the team (the lead's process runs it), runs what the lead places here, and says on stderr
// what happens. When its lease lapses (a cut link, a pause longer than HUDDLE_LEASE_MS) its
// teammates were handed back: it stops them, writes nothing more, and joins again as a new host.
// Ctrl+C (or SIGTERM) stops it on purpose: its teammates stop, their tasks go back, the lead is told.
import { setTimeout as sleep } from 'node:timers/promises';
import type { HuddleEvent } from '../runtime/events/events.js';
import { scrub } from '../runtime/secrets.js';
import type { CliOptions } from '../session/cli-options.js';
import { openSession } from '../session/open-session.js';
import { resolveSettings, StartupError, type SessionSettings } from '../session/settings.js';
import type { TeamSession } from '../session/team-session.js';

const DEFAULT_SLOTS = 4;

export async function runWorker(options: CliOptions): Promise<number> {
  const slots = options.slots ?? DEFAULT_SLOTS;
  let settings: SessionSettings;
  try {
    settings = await resolveSettings(options, { missingKey: 'refuse' });
  } catch (error) {
    if (error instanceof StartupError) return fail(error.message);
    throw error;
  }
  if (!settings.loaded?.settings.team) return fail('huddle worker needs --team URL (or HUDDLE_TEAM_URL): the team on PostgreSQL it works for');
  const say = (line: string) => process.stderr.write(scrub(`huddle worker: ${line}\n`, settings.secrets));

  let stop!: (signal: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    process.once(signal, () => process.exit(130)); // a second one: now
    stop(signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let first = true;
  for (let attempt = 0; ; attempt++) {
    let session: TeamSession;
    try {
      const opened = await openSession(settings, { join: true, unfinished: 'refuse', observe: (event) => report(event, say) });
      if (opened === 'quit') return 0;
      session = opened;
      // The lead's console (Esc, /interrupt) and `huddle interrupt` reach the teammates here.
      session.serveRemoteInterrupts((name, done) =>
        say(done ? `${name} interrupted (asked from another process of the team)` : `asked to interrupt ${name}, which is in no turn here`),
      );
      await session.serveAsWorker(slots);
    } catch (error) {
      if (first && error instanceof StartupError) return fail(scrub(error.message, settings.secrets));
      // Not there yet (the link is still cut, the server restarts): try again, until stopped.
      say(`cannot join the team yet (${scrub((error as Error).message, settings.secrets)}); trying again`);
      const waited = await Promise.race([sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt, 5))).then(() => undefined), stopped]);
      if (waited !== undefined) return 0;
      continue;
    }
    first = false;
    attempt = 0;
    say(`serving team '${session.teamName}' as host ${session.host ?? '?'}: ${slots} slot${slots === 1 ? '' : 's'}, working in ${session.workspace.root}`);
    const lost = new Promise<Error>((resolve) => session.onHostLost(resolve));
    const end = await Promise.race([stopped.then((signal) => ({ signal })), lost.then((error) => ({ error }))]);
    if ('signal' in end) {
      say(`stopping (${end.signal}): ${session.liveHere().join(', ') || 'no teammates'} stop, their tasks go back on the board`);
      await session.leaveAsWorker('its worker was stopped');
      return 0;
    }
    say(`${end.error.message}; joining the team again as a new host`);
    await session.close({ reason: 'this host lost its lease', resumable: true }).catch(() => undefined);
  }
}

function report(event: HuddleEvent, say: (line: string) => void): void {
  if ((event as { host?: unknown }).host !== undefined) return;
  if (event.type === 'status' && (event.status === 'shutdown' || event.status === 'failed' || event.status === 'working') && event.agent !== 'lead') {
    const why = event.error ?? event.reason;
    say(`${event.agent} ${event.status}${why ? `: ${why}` : ''}`);
  } else if (event.type === 'warning') {
    say(`warning: ${event.message ?? 'something was skipped or repaired'}`);
  }
}

function fail(message: string): number {
  process.stderr.write(`huddle: ${message}\n`);
  return 2;
}
